//! `mira export` and `mira import`: the files and streams around the transfer use cases.

use super::actions::ImportFormat;
use super::args::Cli;
use super::output::{print_json, use_case, write_stdout};
use super::stores::open;
use crate::usecases::access::Access;
use crate::usecases::{self, UseCaseError};
use crate::App;
use anyhow::{Context, Result};
use std::path::Path;
use std::process::ExitCode;

/// `mira export`: JSON lines to `output` or standard output.
pub(super) fn run_export(
    cli: &Cli,
    wing: Option<&str>,
    embeddings: bool,
    output: Option<&Path>,
) -> Result<ExitCode> {
    let app = existing_store!(cli);
    let mut out: Box<dyn std::io::Write> = match output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let result = usecases::transfer::export(&app, &Access::local(), wing, embeddings, &mut out);
    let result = result.and_then(|n| {
        out.flush().map_err(|e| UseCaseError::Internal(e.into()))?;
        Ok(n)
    });
    // `mira export | head`: the reader has what it wanted.
    if let Err(UseCaseError::Internal(e)) = &result {
        let closed = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if closed {
            return Ok(ExitCode::SUCCESS);
        }
    }
    match use_case(result)? {
        Ok(n) => eprintln!(
            "Exported {}",
            mira_core::text::plural(n, "memory", "memories")
        ),
        Err(code) => return Ok(code),
    }
    Ok(ExitCode::SUCCESS)
}

/// `mira import`: prints the summary; exit code 1 when a line (or turn) was skipped.
pub(super) fn run_import(
    cli: &Cli,
    file: &Path,
    format: ImportFormat,
    wing: Option<&str>,
    json: bool,
) -> Result<ExitCode> {
    if format == ImportFormat::Jsonl && wing.is_some() {
        anyhow::bail!("--wing only applies to --format locomo (each JSON line names its wing)");
    }
    let app = open(cli)?;
    let report = match format {
        ImportFormat::Locomo => {
            let bar = crate::progress::Progress::new().bar("import", Some(0), "turns");
            let report = usecases::transfer::import_locomo(&app, file, wing, &mut |done, total| {
                bar.set_length(total);
                bar.set_position(done);
            });
            bar.finish_and_clear();
            report
        }
        ImportFormat::Jsonl => import_file(&app, file),
    };
    let report = match use_case(report)? {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    persist_index(&app);
    if json {
        print_json(&report)?;
    } else {
        write_stdout(&usecases::transfer::render_report(&report));
    }
    Ok(if report.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// After a bulk write: reads the index if this process has not (its saved graph is then
/// brought in step with what was written), waits for the build under way and saves the graph,
/// so that the next process loads it instead of building it again.
pub(super) fn persist_index(app: &App) {
    let index = match app.synced_index() {
        Ok(index) => index,
        Err(e) => {
            tracing::warn!("vector index: not saved ({e:#}); the next start builds it");
            return;
        }
    };
    if !index.wait_idle(std::time::Duration::from_secs(900)) {
        tracing::warn!("vector index: still building after 15 minutes; the next start builds it");
        return;
    }
    if let Err(e) = index.save() {
        tracing::warn!("vector index: not saved ({e}); the next start builds it");
    }
}

/// A file that is one JSON document (a LoCoMo conversation, say) rather than JSON Lines is
/// refused with the command that imports it, instead of one error per line.
pub(super) fn refuse_json_document(path: &Path, f: &std::fs::File) -> Result<(), UseCaseError> {
    use std::io::BufRead;
    let mut first = String::new();
    let mut reader = std::io::BufReader::new(f);
    while first.trim().is_empty() {
        first.clear();
        match reader.read_line(&mut first) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
    }
    let line = first.trim();
    let document = line.starts_with('[')
        || (line.starts_with('{') && serde_json::from_str::<serde_json::Value>(line).is_err());
    if document {
        return Err(UseCaseError::Invalid(format!(
            "{} is one JSON document, not JSON Lines (one memory per line, as `mira export` writes): for a LoCoMo conversation run `mira import --format locomo {}`",
            path.display(),
            path.display()
        ).into()));
    }
    // The file is read again from its start.
    std::io::Seek::rewind(&mut &*f)
        .map_err(|e| UseCaseError::Invalid(format!("cannot read {}: {e}", path.display()).into()))
}

/// Imports a JSONL file ("-": standard input), with a progress bar (memories read of the
/// file's lines) when stderr is a terminal.
pub(super) fn import_file(
    app: &App,
    file: &Path,
) -> Result<usecases::transfer::ImportReport, UseCaseError> {
    let (input, lines): (Box<dyn std::io::BufRead>, Option<u64>) = if file.as_os_str() == "-" {
        (Box::new(std::io::stdin().lock()), None)
    } else {
        let f = std::fs::File::open(file).map_err(|e| {
            UseCaseError::Invalid(format!("cannot open {}: {e}", file.display()).into())
        })?;
        refuse_json_document(file, &f)?;
        let lines = count_lines(&f).map_err(|e| {
            UseCaseError::Invalid(format!("cannot read {}: {e}", file.display()).into())
        })?;
        (Box::new(std::io::BufReader::new(f)), Some(lines))
    };
    let bar = crate::progress::Progress::new().bar("import", lines, "memories");
    let report = usecases::transfer::import_jsonl(app, input, &mut |read| bar.set_position(read));
    bar.finish_and_clear();
    report
}

/// The lines of `f` (each memory of a JSONL file is one), read from its start, which it is
/// rewound to.
pub(super) fn count_lines(f: &std::fs::File) -> std::io::Result<u64> {
    use std::io::{BufRead, Seek};
    let mut reader = std::io::BufReader::new(f);
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else { break };
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        last = end;
        let n = buf.len();
        reader.consume(n);
    }
    drop(reader);
    (&*f).rewind()?;
    Ok(lines + u64::from(last != b'\n'))
}
