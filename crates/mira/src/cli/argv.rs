//! The reference implementation's command-line forms, rewritten to mira's.

use super::args::Cli;
use clap::CommandFactory;

/// The command line with the reference implementation's forms rewritten to mira's, so that
/// configurations written for it keep working: Go-style single-dash long flags (`-config FILE`,
/// `-config=FILE`, `-version`, `-help`), `-migrate` for `mira migrate`, and `-with-soul` /
/// `--with-soul` without a subcommand for `mira serve --with-soul`.
pub fn reference_compatible(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::with_capacity(args.len() + 1);
    let mut with_soul = false;
    for (i, arg) in args.into_iter().enumerate() {
        let Some(text) = arg.to_str().filter(|_| i > 0) else {
            out.push(arg);
            continue;
        };
        let (flag, value) = match text.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (text, None),
        };
        let long = match flag {
            "-config" | "-log" | "-version" | "-help" => Some(format!("-{flag}")),
            "-with-soul" | "--with-soul" => Some("--with-soul".to_string()),
            _ => None,
        };
        match (flag, long) {
            ("-migrate" | "--migrate", _) => out.push("migrate".into()),
            (_, Some(long)) => {
                with_soul |= long == "--with-soul";
                out.push(match value {
                    Some(v) => format!("{long}={v}").into(),
                    None => long.into(),
                });
            }
            _ => out.push(arg),
        }
    }
    // Without a subcommand, `--with-soul` means `serve --with-soul`.
    let has_command = || {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        out.iter()
            .skip(1)
            .any(|a| a.to_str().is_some_and(|a| names.iter().any(|n| n == a)))
    };
    if with_soul && !out.is_empty() && !has_command() {
        out.insert(1, "serve".into());
    }
    out
}
