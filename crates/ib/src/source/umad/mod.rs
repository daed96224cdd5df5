//! The real fabric source: SMP, SA and PerfMgt MADs through libibumad (loaded at run
//! time), verified on ibsim + umad2sim + OpenSM. See docs/umad.md.
//!
//! - [`ffi`]: the libibumad binding (all `unsafe` lives there);
//! - [`transport`]: agents, TIDs, pipelining window, expiry and retries;
//! - [`discover`]: directed-route BFS discovery;
//! - [`sa`]: SA queries and trap subscription;
//! - [`pma`]: PMA polling and counter resets;
//! - [`watch`]: what a steady sweep checks instead of discovering again;
//! - [`assemble`]: results into the model's snapshot builder;
//! - [`spread`]: periodic re-reads spread over sweeps, a slice each;
//! - [`verify`]: the topology's periodic check, a slice of the nodes a sweep;
//! - [`source`]: [`UmadSource`], one sweep at a time (and its control path).

pub mod assemble;
pub mod discover;
pub mod faults;
#[allow(unsafe_code)]
pub mod ffi;
pub mod pma;
pub mod req;
pub mod sa;
pub mod source;
pub mod spread;
pub mod transport;
pub mod verify;
pub mod watch;

pub use ffi::UmadError;
pub use source::{
    parse_spec, ControlError, PmaControl, SweepError, UmadOptions, UmadSource, UmadStats,
};
pub use transport::TransportConfig;
