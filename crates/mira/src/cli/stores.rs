//! Opening the store for a command: creating it where the command may write, or ending with
//! exit code 3 where it only reads.

use super::args::Cli;
use crate::config::Config;
use crate::App;
use anyhow::Result;
use std::process::ExitCode;

/// Opens the store for a command that may write, creating it where none exists yet (and saying
/// so on a terminal).
pub(super) fn open(cli: &Cli) -> Result<App> {
    let (config, source) = Config::load(cli.config.as_deref())?;
    let created = !config.store_exists();
    let app = App::open(config, source)?;
    if created {
        let note = format!(
            "created the memory store {}, chosen by {}; `mira status` says how to choose another",
            app.store.location(),
            app.config.storage_choice().describe()
        );
        // For people: a script's stderr stays quiet (the log has it).
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprintln!("note: {note}");
        } else {
            tracing::info!("{note}");
        }
    }
    Ok(app)
}

/// Opens the store for a command that only reads, or changes what is stored: where none
/// exists, it creates nothing and the command ends with exit code 3, saying where it looked.
pub(super) fn open_existing(cli: &Cli) -> Result<Result<App, ExitCode>> {
    let (config, source) = Config::load(cli.config.as_deref())?;
    if !config.store_exists() {
        eprintln!(
            "error: no memory store at {}: nothing has been stored from here yet (the store is chosen by {}). Store a memory first, or point MIRA_STORAGE_PATH at an existing store; `mira status` explains",
            config.db_path().display(),
            config.storage_choice().describe()
        );
        return Ok(Err(ExitCode::from(3)));
    }
    Ok(Ok(App::open(config, source)?))
}

/// The store of [`open_existing`], or the exit code of a command that found none.
macro_rules! existing_store {
    ($cli:expr) => {
        match $crate::cli::stores::open_existing($cli)? {
            Ok(app) => app,
            Err(code) => return Ok(code),
        }
    };
}
