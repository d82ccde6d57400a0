//! Helpers shared by the test binaries and benchmarks of mira's crates, written once: a seeded
//! generator ([`Rng`]), the PostgreSQL server of the tests ([`pg`]), the project's data folder
//! ([`shared_path`]) and whether the tests run under CI ([`under_ci`]). A dev-dependency only.

pub mod pg;
mod rng;
mod shared_dir;

pub use rng::Rng;
pub use shared_dir::shared_path;

/// Whether the tests run under CI (`CI` set, and not to `false` or `0`): a part they need that
/// is missing (PostgreSQL, Chromium, strace) then fails them instead of skipping them.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}
