//! A guard between the real stdin/stdout and the MCP transport. Every inbound line is
//! checked before rmcp sees it: invalid UTF-8, text that is not JSON (including JSON nested
//! deeper than serde's limit), a JSON value that is not a JSON-RPC message, and lines over
//! [`MAX_LINE_BYTES`] are answered with a JSON-RPC error (`-32700` parse error or `-32600`
//! invalid request) instead of being dropped silently, and the server keeps serving.
//! Outbound, rmcp's lines and the guard's error lines are merged whole, so stdout carries
//! nothing but complete protocol messages. This module never interprets tool calls.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Longest inbound line accepted (a tool call far larger than any legitimate one).
pub const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// JSON-RPC error codes the guard answers with.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// Why an inbound line was refused: the JSON-RPC error to answer it with.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The request's `id` when one could be read, else `null`.
    pub id: Value,
    /// `-32700` (parse error) or `-32600` (invalid request).
    pub code: i64,
    pub message: String,
}

impl Refusal {
    /// The error response as one line of JSON.
    pub fn to_line(&self) -> String {
        json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}})
            .to_string()
    }
}

fn refusal(id: Value, code: i64, message: String) -> Refusal {
    Refusal { id, code, message }
}

/// Checks one inbound line: `Ok` forwards it to rmcp, `Err` is the refusal to answer.
pub fn check_line(line: &[u8]) -> Result<(), Refusal> {
    let text = std::str::from_utf8(line).map_err(|e| {
        refusal(
            Value::Null,
            PARSE_ERROR,
            format!("parse error: the message is not valid UTF-8 ({e})"),
        )
    })?;
    let value: Value = serde_json::from_str(text).map_err(|e| {
        refusal(
            Value::Null,
            PARSE_ERROR,
            format!("parse error: not a JSON value ({e})"),
        )
    })?;
    let messages = match &value {
        Value::Array(batch) if !batch.is_empty() => batch.iter().collect(),
        other => vec![other],
    };
    for message in messages {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let well_formed = message.get("jsonrpc") == Some(&json!("2.0"))
            && (message.get("method").is_some_and(Value::is_string)
                || message.get("result").is_some()
                || message.get("error").is_some());
        if !well_formed {
            return Err(refusal(
                id,
                INVALID_REQUEST,
                "invalid request: expected a JSON-RPC 2.0 message with a string `method`".into(),
            ));
        }
    }
    Ok(())
}

/// Reads one line (without its newline) into `line`; a line longer than the limit is read
/// to its end and discarded. Returns `None` at end of input, `Some(false)` when too long.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok((!line.is_empty() || too_long).then_some(!too_long));
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        if !too_long && line.len() + chunk.len() <= MAX_LINE_BYTES {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        let consumed = found.unwrap_or(available.len());
        reader.consume(consumed);
        if found.is_some() {
            return Ok(Some(!too_long));
        }
    }
}

/// Pumps `input` into `to_server`, answering refused lines through `errors`.
async fn pump_inbound<R: AsyncRead + Unpin>(
    input: R,
    mut to_server: impl AsyncWrite + Unpin,
    errors: mpsc::UnboundedSender<String>,
) -> std::io::Result<()> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut line = Vec::new();
    while let Some(within_limit) = read_line(&mut reader, &mut line).await? {
        if !within_limit {
            let message = format!("invalid request: message longer than {MAX_LINE_BYTES} bytes");
            let _ = errors.send(refusal(Value::Null, INVALID_REQUEST, message).to_line());
            continue;
        }
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        match check_line(trimmed) {
            Ok(()) => {
                to_server.write_all(trimmed).await?;
                to_server.write_all(b"\n").await?;
                to_server.flush().await?;
            }
            Err(refused) => {
                tracing::warn!(
                    "refused an inbound MCP line ({} bytes): {}",
                    trimmed.len(),
                    refused.message
                );
                let _ = errors.send(refused.to_line());
            }
        }
    }
    to_server.shutdown().await
}

/// Writes rmcp's output lines and the guard's error lines to `output`, each whole.
async fn pump_outbound<W: AsyncWrite + Unpin>(
    from_server: impl AsyncRead + Unpin,
    mut errors: mpsc::UnboundedReceiver<String>,
    mut output: W,
) -> std::io::Result<()> {
    let mut lines = BufReader::new(from_server).lines();
    let mut errors_open = true;
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line? {
                Some(line) => line,
                None => break,
            },
            error = errors.recv(), if errors_open => match error {
                Some(error) => error,
                None => {
                    errors_open = false;
                    continue;
                }
            },
        };
        output.write_all(line.as_bytes()).await?;
        output.write_all(b"\n").await?;
        output.flush().await?;
    }
    output.flush().await
}

/// Wraps `input`/`output` (stdin/stdout in production) and returns the pair rmcp serves on.
/// The pumps run as tasks until input ends and the server closes its side.
pub fn guard<R, W>(
    input: R,
    output: W,
) -> (
    tokio::io::ReadHalf<DuplexStream>,
    tokio::io::WriteHalf<DuplexStream>,
)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_side, guard_side) = tokio::io::duplex(1 << 20);
    let (from_server, to_server) = tokio::io::split(guard_side);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        if let Err(e) = pump_inbound(input, to_server, errors_tx).await {
            tracing::warn!("MCP input ended: {e}");
        }
    });
    tokio::spawn(async move {
        if let Err(e) = pump_outbound(from_server, errors_rx, output).await {
            tracing::warn!("MCP output ended: {e}");
        }
    });
    tokio::io::split(server_side)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(refused: &Refusal) -> i64 {
        line_code(&refused.to_line())
    }

    fn line_code(line: &str) -> i64 {
        let line: Value = serde_json::from_str(line).unwrap();
        line["error"]["code"].as_i64().unwrap()
    }

    #[test]
    fn lines_are_checked_before_the_server_sees_them() {
        assert!(check_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_ok());
        assert!(check_line(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).is_ok());
        assert_eq!(
            code(&check_line(b"{\"x\":\"\xff\"}").unwrap_err()),
            PARSE_ERROR
        );
        assert_eq!(code(&check_line(b"not json").unwrap_err()), PARSE_ERROR);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(code(&check_line(deep.as_bytes()).unwrap_err()), PARSE_ERROR);
        let missing_method = check_line(br#"{"jsonrpc":"2.0","id":7}"#).unwrap_err();
        assert_eq!(code(&missing_method), INVALID_REQUEST);
        assert_eq!(missing_method.id, json!(7));
        assert_eq!(code(&check_line(b"[]").unwrap_err()), INVALID_REQUEST);
    }

    #[tokio::test]
    async fn an_oversized_line_is_refused_and_the_next_one_passes() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut forwarded = Vec::new();
        pump_inbound(&input[..], &mut forwarded, tx).await.unwrap();
        assert_eq!(
            forwarded,
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
        );
        assert_eq!(line_code(&rx.recv().await.unwrap()), INVALID_REQUEST);
    }
}
