//! Logging to stderr (stdout is reserved for command output and the MCP channel).

use tracing_subscriber::EnvFilter;

/// Installs the stderr logger (colours only on a terminal). The filter comes from `--log`, else
/// `MIRA_LOG`, else `warn`.
pub fn init(flag: Option<&str>) {
    let spec = flag
        .map(str::to_owned)
        .or_else(|| std::env::var("MIRA_LOG").ok())
        .unwrap_or_else(|| "warn".into());
    let filter = EnvFilter::try_new(&spec).unwrap_or_else(|e| {
        eprintln!("warning: invalid log filter '{spec}' ({e}); using 'warn'");
        EnvFilter::new("warn")
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}
