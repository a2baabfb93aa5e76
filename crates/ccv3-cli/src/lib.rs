//! Parts of the `ccv3` command that its examples use too: the per-card work of `ccv3 index`
//! ([`index_card`]), which `examples/archive_floor.rs` measures stage by stage (issue 16).
//!
//! The command itself is the `ccv3` binary of this package; this library is not a public API.
#![forbid(unsafe_code)]

pub mod index_card;
