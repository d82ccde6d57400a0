//! The `mira` binary.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any thread starts (setting the environment later races with readers of it), and
    // before the model's runtime library can load: nothing is recorded or sent.
    mira_embed::disable_telemetry();
    let cli = mira::cli::Cli::parse_from(mira::cli::reference_compatible(
        std::env::args_os().collect(),
    ));
    mira::logging::init(cli.log.as_deref());
    match mira::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
