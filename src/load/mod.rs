//! Loading what retrieval answers from: the store's current generation opened into memory
//! (entities, edges, chunk texts and their lookups, the chunk table's searches, the whole-file
//! term statistics), merged with a working tree's overlay when answers describe another
//! checkout, reopened when `current` moves, and compared with the working tree (freshness).
//! This floor sits between `store` and ranking: it knows what a generation holds and whether it
//! is still current, and nothing of how a question is ranked, packed or projected. Ranking
//! reads a [`LoadedGeneration`] through its lookups (`entity`, `chunks_of`, `outgoing`, the
//! file index, the chunk searches) and never reaches past it into `store`.
//!
//! Files, bottom up (each uses only those above it): `files` (whole-file BM25 and path words)
//! and `overlay` (merging an overlay's rows, the note when it is not applied); `generation`
//! (one open generation); `freshness` (does it lag the tree); `cache` (which generation is
//! current, reopened when that changes).

pub mod cache;
pub mod files;
pub mod freshness;
pub mod generation;
pub mod overlay;

pub use self::cache::GenerationCache;
pub use self::freshness::Freshness;
pub use self::generation::LoadedGeneration;
