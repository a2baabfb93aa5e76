//! Hash tables keyed by small values (ids, ranks, pattern texts), with rustc-hash's Fx hasher:
//! fast, and never seen by output (nothing iterates these tables to produce results).

pub(crate) use rustc_hash::{FxBuildHasher, FxHashMap as FxMap, FxHashSet as FxSet, FxHasher};
