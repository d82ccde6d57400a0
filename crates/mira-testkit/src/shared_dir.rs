//! Where the tests find the project's data folder: `$MIRA_SHARED_DIR` when set, else `shared` beside the checkout
//! (`<checkout>/../shared`). It holds `fixtures/` (the embedding model's reference vectors) and
//! `data/` (the LoCoMo and LongMemEval development sets); it is not in the repository.
use std::path::PathBuf;

/// `relative` inside the data folder; a test that needs it fails here, naming the path and how
/// to point at another folder, when it is not there.
pub fn shared_path(relative: &str) -> PathBuf {
    let (root, from) = match std::env::var_os("MIRA_SHARED_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => (PathBuf::from(dir), "MIRA_SHARED_DIR"),
        None => (
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")),
            "the default, ../shared beside the checkout",
        ),
    };
    let path = root.join(relative);
    assert!(
        path.exists(),
        "{} is missing ({from}): this test reads the project's data folder (fixtures/, data/); set MIRA_SHARED_DIR to the folder that holds it",
        path.display()
    );
    path
}
