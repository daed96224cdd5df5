//! InfiniBand management domain for ibsnmpd.
//!
//! - [`types`]: IBA domain types (GUIDs, LIDs, port states, widths, speeds...);
//! - [`mad`]: MAD codecs (SMP, SA, PMA) as pure functions over byte slices;
//! - [`model`]: the fabric snapshot every MIB reads, swapped atomically;
//! - [`topology`]: ibnetdiscover/ibsim "net" topology files, fat-tree generator;
//! - [`source`]: the sources that sweep a fabric into snapshots (sim, umad, sysfs).

// `unsafe` is confined to the libibumad binding (source::umad::ffi).
#![deny(unsafe_code)]

pub mod mad;
pub mod model;
pub mod opensm;
pub mod source;
pub mod topology;
pub mod types;
