//! The `mira` binary.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any thread starts (setting the environment later races with readers of it), and
    // before the model's runtime library can load: nothing is recorded or sent.
    mira_embed::disable_telemetry();
    let cli = mira::cli::args::Cli::parse_from(mira::cli::argv::reference_compatible(
        std::env::args_os().collect(),
    ));
    mira::logging::init(cli.log.as_deref());
    match mira::cli::dispatch::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
