//! The long-running commands (`mira serve`, `mira ui`) and `mira token`.

use super::actions::TokenAction;
use super::args::Cli;
use super::output::write_stdout;
use crate::config::Config;
use crate::serving::Exposure;
use crate::usecases;
use crate::App;
use anyhow::{Context, Result};
use std::process::ExitCode;

/// `mira serve` and `mira` alone: MCP on the transport chosen by `--http` or `mcp.transport`.
/// Its listeners are bound before the store opens, through the exposure rule
/// ([`crate::serving`]): an address it refuses ends the command at once. A health and metrics
/// listener of its own, when asked for, starts first, so that `/health/ready` answers 503 while
/// the store opens; a port already taken (another mira) only costs the endpoints, not MCP.
pub(super) fn serve(
    cli: &Cli,
    http: Option<Option<&str>>,
    with_soul: bool,
    metrics: Option<Option<&str>>,
    exposure: Exposure,
) -> Result<ExitCode> {
    let (mut config, source) = Config::load(cli.config.as_deref())?;
    config.soul.enabled |= with_soul;
    if let Some(addr) = metrics {
        config.metrics.enabled = Some(true);
        if let Some(a) = addr {
            config.metrics.prometheus_addr = a.to_string();
        }
    }
    let transport = crate::mcp::transport(&config.mcp, http)?;
    let transport = transport.bind(&config.mcp.http, exposure)?;
    // An HTTP server serves the endpoints on its own port (`ops::beside_mcp`); a listener of
    // their own only when asked for.
    let ops = if config.metrics.enabled == Some(true) {
        match crate::ops::OpsServer::start(&config.metrics, exposure) {
            Ok(ops) => Some(ops),
            Err(e) if e.is::<crate::serving::Refused>() => return Err(e),
            Err(e) => {
                tracing::warn!("no health and metrics endpoints: {e:#}");
                None
            }
        }
    } else {
        None
    };
    let app = std::sync::Arc::new(App::open(config, source)?);
    // Read before the health and metrics endpoints report it (the server would at start).
    app.index()?;
    if let Some(ops) = &ops {
        ops.attach(app.clone());
    }
    usecases::embed_missing::spawn_at_start(app.clone());
    crate::mcp::serve(app, transport)?;
    Ok(ExitCode::SUCCESS)
}

/// `mira ui`: the memory browser on `addr` (bound before the store opens, through the
/// exposure rule).
pub(super) fn browse(
    cli: &Cli,
    addr: &str,
    with_soul: bool,
    exposure: Exposure,
) -> Result<ExitCode> {
    let addr = crate::serving::parse_addr(addr)?;
    let (mut config, source) = Config::load(cli.config.as_deref())?;
    config.soul.enabled |= with_soul;
    let listener = crate::serving::listen_for_clients(
        addr,
        &config.mcp.http,
        "the memory browser (mira ui)",
        "--addr",
        exposure,
    )?;
    // SOUL's tables are made ready by its first operation (usecases::soul::ensure).
    let app = std::sync::Arc::new(App::open(config, source)?);
    usecases::embed_missing::spawn_at_start(app.clone());
    crate::ui::serve(app, listener)?;
    Ok(ExitCode::SUCCESS)
}

/// `mira token`: a new token with its mcp.http.tokens entry, or the digest of a given one.
pub(super) fn token(action: &TokenAction) -> Result<ExitCode> {
    match action {
        TokenAction::New {
            name,
            read,
            write,
            destructive,
        } => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| anyhow::anyhow!("no randomness from the system: {e}"))?;
            let secret = format!(
                "mira_{}",
                base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, bytes)
            );
            let entry = crate::config::ScopedToken {
                name: name.clone(),
                sha256: crate::bearer::sha256_hex(&secret),
                read: read.clone(),
                write: write.clone(),
                destructive: *destructive,
            };
            let mut check = Config::default();
            check.mcp.http.tokens.push(entry.clone());
            check.validate().context("mira token new")?;
            let yaml = serde_norway::to_string(&vec![entry])?;
            let indented: String = yaml.lines().map(|l| format!("    {l}\n")).collect();
            write_stdout(&format!(
                "token: {secret}\n\n\
                 The token is shown once: give it to the client (Authorization: Bearer <token>).\n\
                 Add this entry to the server's config (it keeps only the token's SHA-256):\n\n\
                 mcp:\n  http:\n    tokens:\n{indented}"
            ));
        }
        TokenAction::Hash => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .context("cannot read the token from standard input")?;
            let token = text.trim_end_matches(['\r', '\n']);
            if token.trim().is_empty() {
                anyhow::bail!(
                    "no token on standard input: pipe it in, e.g. printf %s \"$TOKEN\" | mira token hash"
                );
            }
            write_stdout(&format!("{}\n", crate::bearer::sha256_hex(token)));
        }
    }
    Ok(ExitCode::SUCCESS)
}
