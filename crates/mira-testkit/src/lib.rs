//! Helpers shared by the test binaries and benchmarks of mira's crates, written once: a seeded
//! generator ([`Rng`]), the PostgreSQL server of the tests ([`pg`]), the project's data folder
//! ([`shared_path`]), whether the tests run under CI ([`under_ci`]) and one test per storage
//! backend ([`backend_test!`]). A dev-dependency only.

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

/// A check of both storage backends as one test per backend named after it (`<name>::sqlite`,
/// `<name>::postgres`), so that a failure names its backend. `$sqlite` makes the SQLite fixture;
/// `$postgres` makes the PostgreSQL one, or `None` when no server can be had, and the test then
/// passes, having said why on stderr, except under CI where a missing server fails it (see
/// [`pg`]). `$b` borrows the fixture in `$body`. A test binary wraps this in a `backend_test!`
/// of its own that names its fixtures.
#[macro_export]
macro_rules! backend_test {
    ($sqlite:path, $postgres:path; $(#[$attr:meta])* fn $name:ident($b:ident) $body:block) => {
        $(#[$attr])*
        mod $name {
            use super::*;

            #[test]
            fn sqlite() {
                let fixture = $sqlite();
                let $b = &fixture;
                $body
            }

            #[test]
            fn postgres() {
                let Some(fixture) = $postgres() else {
                    return;
                };
                let $b = &fixture;
                $body
            }
        }
    };
}
