//! Integration tests of the `ccv3` crate, one module per area.

/// Shared helpers: corpus paths and small builders.
mod util;

/// V3 to V2 backfill (SPEC_V3 "PNG/APNG", "Decorators").
mod backfill;
/// Container choices: ccv3 over chara, asset chunks, sniffing by content.
mod containers;
/// Issue 13: every card and book round trips through every container (V2 via the stash).
mod convertback;
/// Every file of ../shared/corpus loads, or fails as its MANIFEST says.
mod corpus;
/// Issue 12: hostile containers (budgets, sizes, places in errors, lone surrogates).
mod hostile_files;
/// The lossless model and the lenient reader (SPEC_V3 "CharacterCard Object", V1-V2 notes).
mod model;
/// Issue 13: which picture a card's PNG is written into (own, main icon, plain).
mod own_picture;
/// Round trips between containers: JSON -> PNG -> CHARX -> JSON.
mod roundtrip;
/// Issue 29: the card summary agrees with the full read.
mod summary;
/// Issue 13: shapes real applications write (fixtures in tests/fixtures/wild/).
mod wild;
