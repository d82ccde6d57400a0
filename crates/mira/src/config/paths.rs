//! Where the configuration file and the store are found.

use super::{Config, StorageBackend};
use std::path::{Path, PathBuf};

/// Why the storage directory is the one it is (`mira status` says it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageChoice {
    /// An environment variable (`MIRA_STORAGE_PATH`, or the reference's `MIRA_DATA_PATH`).
    Env(&'static str),
    /// `storage.path` in the config file.
    ConfigFile,
    /// The project holding the working directory: the nearest folder at or above it with
    /// `marker` (`.mira`, else `.git`).
    Project {
        /// The project's folder.
        root: PathBuf,
        /// What makes it a project.
        marker: &'static str,
    },
    /// No project: the user's data folder, shared by every folder outside a project.
    User,
}

impl StorageChoice {
    /// Why, in a sentence's words: "MIRA_STORAGE_PATH", "the project /src/app (it has .git)".
    pub fn describe(&self) -> String {
        match self {
            StorageChoice::Env(name) => format!("{name} (set in the environment)"),
            StorageChoice::ConfigFile => "storage.path in the config file".into(),
            StorageChoice::Project { root, marker } => format!(
                "the project {}: the nearest folder at or above this one with {marker}",
                root.display()
            ),
            StorageChoice::User => {
                "the user's data folder: this folder is in no project (no .git or .mira above it)"
                    .into()
            }
        }
    }
}

impl Config {
    /// The storage directory (config, env, or the project/user default).
    pub fn storage_dir(&self) -> PathBuf {
        self.storage
            .path
            .clone()
            .unwrap_or_else(default_storage_dir)
    }

    /// Why [`Config::storage_dir`] is what it is.
    pub fn storage_choice(&self) -> StorageChoice {
        match (&self.storage.path, self.storage_path_env) {
            (Some(_), Some(name)) => StorageChoice::Env(name),
            (Some(_), None) => StorageChoice::ConfigFile,
            (None, _) => match project_root() {
                Some(root) => {
                    let marker = if root.join(".mira").is_dir() {
                        ".mira"
                    } else {
                        ".git"
                    };
                    StorageChoice::Project { root, marker }
                }
                None => StorageChoice::User,
            },
        }
    }

    /// Whether the store exists: always for PostgreSQL (the server holds it), for SQLite when
    /// its file does. Commands that only read (or change what is stored) open only a store
    /// that exists, so that they create nothing.
    pub fn store_exists(&self) -> bool {
        match self.storage.backend {
            StorageBackend::Postgres => true,
            StorageBackend::Sqlite => self.db_path().is_file(),
        }
    }

    /// The user's storage directory: the one of every folder outside a project.
    pub fn user_storage_dir() -> PathBuf {
        user_data_dir()
    }

    /// The database file inside the storage directory.
    pub fn db_path(&self) -> PathBuf {
        self.storage_dir().join("mira.db")
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The project root: the nearest directory at or above the working directory holding `.mira` or `.git`.
fn project_root() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let home = home();
    cwd.ancestors()
        .take_while(|d| Some(d.to_path_buf()) != home || d.join(".mira").is_dir())
        .find(|d| d.join(".mira").is_dir() || d.join(".git").exists())
        .map(Path::to_path_buf)
}

fn default_storage_dir() -> PathBuf {
    match project_root() {
        Some(root) => root.join(".mira"),
        None => user_data_dir(),
    }
}

fn user_data_dir() -> PathBuf {
    match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x).join("mira"),
        None => home()
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".local/share/mira"),
    }
}

pub(super) fn default_config_file() -> Option<PathBuf> {
    let project = project_root().map(|r| r.join(".mira/config.yaml"));
    let user = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".config")))
        .map(|c| c.join("mira/config.yaml"));
    [project, user].into_iter().flatten().find(|p| p.is_file())
}
