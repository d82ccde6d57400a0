//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout.
//!
//! mira frames the streams itself rather than using rmcp's stdio codec, so that a bad frame
//! gets a JSON-RPC error instead of silence: a line that is not JSON gets a parse error
//! (-32700), valid JSON that is not a JSON-RPC message an invalid-request error (-32600), a
//! line over [`MAX_FRAME_BYTES`] an invalid-request error; then the server reads on. One task
//! owns stdout and writes whole lines, so nothing else can interleave with the frames.

use super::frame::{classify, error_frame, Framing, Parsed, MAX_FRAME_BYTES};
use super::server::MiraServer;
use anyhow::{Context, Result};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::ServiceExt;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Frames buffered between the framing tasks and the protocol.
const QUEUE: usize = 64;

/// Serves one client on stdin/stdout until stdin closes or the process is told to stop.
pub async fn serve(server: MiraServer) -> Result<()> {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    let (out_tx, out_rx) = mpsc::channel::<String>(QUEUE);
    let (in_tx, in_rx) = mpsc::channel::<ClientJsonRpcMessage>(QUEUE);
    let writer_task = tokio::spawn(write_lines(writer, out_rx));
    let reader_task = tokio::spawn(read_frames(BufReader::new(reader), in_tx, out_tx.clone()));

    let sink = Box::pin(futures::sink::unfold(
        out_tx,
        |tx, msg: ServerJsonRpcMessage| async move {
            let line = serde_json::to_string(&msg).map_err(std::io::Error::other)?;
            tx.send(line).await.map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
            })?;
            Ok::<_, std::io::Error>(tx)
        },
    ));
    let stream = Box::pin(futures::stream::unfold(in_rx, |mut rx| async move {
        rx.recv().await.map(|m| (m, rx))
    }));

    let service = match server.serve((sink, stream)).await {
        Ok(s) => s,
        Err(e) => {
            // The client went away (or never initialised): nothing more to serve.
            tracing::info!("MCP session not started: {e}");
            return Ok(());
        }
    };
    tracing::info!("MCP server ready on stdio");
    let cancel = service.cancellation_token();
    tokio::select! {
        r = service.waiting() => { r.context("the MCP session failed")?; }
        _ = crate::serving::shutdown_signal() => { cancel.cancel(); }
    }
    // Stop reading, then let the writer flush what the session produced: it ends once every
    // sender is gone.
    reader_task.abort();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer_task).await;
    Ok(())
}

/// Writes each line to stdout, flushing when no more are queued.
async fn write_lines<W: AsyncWrite + Unpin>(mut out: W, mut rx: mpsc::Receiver<String>) {
    while let Some(line) = rx.recv().await {
        let mut ok =
            out.write_all(line.as_bytes()).await.is_ok() && out.write_all(b"\n").await.is_ok();
        if ok && rx.is_empty() {
            ok = out.flush().await.is_ok();
        }
        if !ok {
            tracing::info!("stdout is closed; stopping");
            return;
        }
    }
    let _ = out.flush().await;
}

/// Reads frames from `input`: messages go to `to_server`, error answers to `to_client`.
async fn read_frames<R: AsyncBufRead + Unpin>(
    mut input: R,
    to_server: mpsc::Sender<ClientJsonRpcMessage>,
    to_client: mpsc::Sender<String>,
) {
    let mut line = Vec::new();
    loop {
        let frame = match read_line(&mut input, &mut line, MAX_FRAME_BYTES).await {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("cannot read stdin: {e}");
                return;
            }
        };
        let answer = match frame {
            Frame::Eof => return,
            Frame::Oversized(n) => Some(error_frame(
                &Value::Null,
                -32600,
                format!(
                    "Invalid request: message of {n}+ bytes; the limit is {MAX_FRAME_BYTES} bytes"
                ),
            )),
            Frame::Line => match classify(&line, Framing::Line) {
                Parsed::Message(m) => {
                    if to_server.send(*m).await.is_err() {
                        return;
                    }
                    None
                }
                Parsed::Skip => None,
                Parsed::Answer(a) | Parsed::Unoffered(a) => Some(a),
            },
        };
        if let Some(a) = answer {
            if to_client.send(a).await.is_err() {
                return;
            }
        }
    }
}

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
enum Frame {
    /// A whole line is in the buffer (without its newline).
    Line,
    /// A line longer than the limit was skipped; at least this many bytes.
    Oversized(usize),
    /// End of input.
    Eof,
}

/// Reads one line into `buf` without ever holding more than `limit` bytes of it.
async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Frame> {
    buf.clear();
    let mut seen = 0usize;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            // A last line without a newline still counts.
            return Ok(if seen == 0 {
                Frame::Eof
            } else if seen > limit {
                Frame::Oversized(seen)
            } else {
                Frame::Line
            });
        }
        let (part, used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        seen = seen.saturating_add(part.len());
        if seen <= limit {
            buf.extend_from_slice(part);
        } else {
            buf.clear();
        }
        input.consume(used);
        if done {
            return Ok(if seen > limit {
                Frame::Oversized(seen)
            } else {
                Frame::Line
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_whole() {
        let data = format!("{}\nshort\nlast", "x".repeat(100));
        let mut input = BufReader::with_capacity(16, data.as_bytes());
        let mut buf = Vec::new();
        assert_eq!(
            read_line(&mut input, &mut buf, 50).await.ok(),
            Some(Frame::Oversized(100))
        );
        assert_eq!(
            read_line(&mut input, &mut buf, 50).await.ok(),
            Some(Frame::Line)
        );
        assert_eq!(buf, b"short");
        assert_eq!(
            read_line(&mut input, &mut buf, 50).await.ok(),
            Some(Frame::Line)
        );
        assert_eq!(buf, b"last");
        assert_eq!(
            read_line(&mut input, &mut buf, 50).await.ok(),
            Some(Frame::Eof)
        );
    }
}
