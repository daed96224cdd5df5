//! (in progress) ibsim + OpenSM testbed for integration tests and benchmarks.
