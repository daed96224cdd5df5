//! (in progress: generated OID constants)
