//! The stdin guard (seed 002, "The stdio boundary"): stdin framed into JSON-RPC messages, and
//! every line the server cannot use answered here, so the client is never left waiting.
//!
//! The guard reads stdin through one streaming UTF-8 decoder (an invalid sequence becomes
//! U+FFFD; a character split across reads is decoded whole), strips a byte-order mark only at the
//! start of the stream, and splits lines on `\n`. Each line then becomes one [`Frame`]:
//!
//! - a line of JSON whitespace (space, tab, carriage return) or an empty line: nothing;
//! - a line that is not JSON: [`Reply::ParseError`], and reading goes on;
//! - a line longer than [`StdinGuardOptions::max_line_utf16`] (16 Mi UTF-16 code units unless
//!   configured): [`Reply::ParseError`] once, as soon as it passes the cap; the rest of the line
//!   is discarded up to its newline without being kept, so memory stays bounded;
//! - JSON that is no JSON-RPC message — a value that is neither an object nor an array, an object
//!   whose `method` is not a string and whose `id` is absent or `null`, an object with neither
//!   `method` nor `id` — [`Reply::InvalidRequest`];
//! - anything else: [`Frame::Message`] with the parsed value (an array, which the server answers
//!   itself as it serves no batches, and a response, an object with an `id` and no `method`,
//!   included).
//!
//! The last line is framed even when the stream ends without a newline.
//!
//! ```
//! use serde_json::json;
//! use toolkit_serve::stdin_guard::{Frame, Reply, StdinGuard};
//!
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let stdin: &[u8] = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n \r\nnot json\n";
//! let mut guard = StdinGuard::new(stdin);
//! assert_eq!(
//!     guard.next_frame().await?,
//!     Some(Frame::Message(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})))
//! );
//! let reply = guard.next_frame().await?;
//! assert_eq!(reply, Some(Frame::Reply(Reply::ParseError)));
//! assert_eq!(
//!     Reply::ParseError.line(),
//!     r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
//! );
//! assert_eq!(guard.next_frame().await?, None);
//! # Ok::<(), std::io::Error>(())
//! # })?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The longest line the guard keeps, in UTF-16 code units: 16 Mi, the cap of the reference
/// server (seed 002).
pub const MAX_LINE_UTF16: usize = 16 * 1024 * 1024;

/// How many bytes the guard asks stdin for at a time.
const READ_SIZE: usize = 64 * 1024;

/// The reply to a line that is not JSON (or is too long).
const PARSE_ERROR: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;

/// The reply to a line that is JSON but no JSON-RPC message.
const INVALID_REQUEST: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;

/// A reply the guard gives itself, for a line the server never sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// `-32700` Parse error: the line is not JSON, or is longer than the cap.
    ParseError,
    /// `-32600` Invalid Request: the line is JSON but no JSON-RPC request, notification or
    /// response.
    InvalidRequest,
}

impl Reply {
    /// The reply as one line of JSON-RPC, without its newline (`id` is `null`: the line it
    /// answers had no usable id).
    pub fn line(self) -> &'static str {
        match self {
            Self::ParseError => PARSE_ERROR,
            Self::InvalidRequest => INVALID_REQUEST,
        }
    }
}

/// What one line of stdin comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A JSON-RPC message (or a batch array) for the server.
    Message(Value),
    /// A line the server never sees; this reply goes to stdout instead.
    Reply(Reply),
}

/// How a [`StdinGuard`] frames stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StdinGuardOptions {
    /// The longest line kept, in UTF-16 code units; a longer line gets one
    /// [`Reply::ParseError`] and is discarded. [`MAX_LINE_UTF16`] by default.
    pub max_line_utf16: usize,
}

impl Default for StdinGuardOptions {
    fn default() -> Self {
        Self {
            max_line_utf16: MAX_LINE_UTF16,
        }
    }
}

/// Builder methods: each sets one field, the others keep their [`Default`] values.
impl StdinGuardOptions {
    /// Sets [`max_line_utf16`](Self::max_line_utf16).
    #[must_use]
    pub fn max_line_utf16(mut self, max_line_utf16: usize) -> Self {
        self.max_line_utf16 = max_line_utf16;
        self
    }
}

/// Frames an [`AsyncRead`] of stdin into [`Frame`]s, one per line that asks for anything (see
/// the [module docs](self)).
#[derive(Debug)]
pub struct StdinGuard<R> {
    reader: R,
    options: StdinGuardOptions,
    /// The last read, `chunk[start..end]` not framed yet.
    chunk: Box<[u8]>,
    start: usize,
    end: usize,
    decoder: Utf8Decoder,
    /// The current line, decoded, and its length in UTF-16 code units.
    line: String,
    line_units: usize,
    /// The current line passed the cap and was answered: the rest of it is skipped.
    discarding: bool,
    /// Nothing has been decoded yet: a byte-order mark here is stripped.
    at_stream_start: bool,
    ended: bool,
}

impl<R: AsyncRead + Unpin> StdinGuard<R> {
    /// A guard over `reader` with the default options.
    pub fn new(reader: R) -> Self {
        Self::with_options(reader, StdinGuardOptions::default())
    }

    /// A guard over `reader` with `options`.
    pub fn with_options(reader: R, options: StdinGuardOptions) -> Self {
        Self {
            reader,
            options,
            chunk: vec![0; READ_SIZE].into_boxed_slice(),
            start: 0,
            end: 0,
            decoder: Utf8Decoder::default(),
            line: String::new(),
            line_units: 0,
            discarding: false,
            at_stream_start: true,
            ended: false,
        }
    }

    /// The next frame, or `None` when stdin has ended and every line is framed.
    ///
    /// # Errors
    ///
    /// An error reading stdin, as the reader gave it. Reading may be tried again after an error
    /// ([`io::ErrorKind::Interrupted`] included): nothing read before it is lost.
    pub async fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            if self.start == self.end {
                if self.ended {
                    return Ok(None);
                }
                let read = self.reader.read(&mut self.chunk).await?;
                self.start = 0;
                self.end = read;
                if read == 0 {
                    self.ended = true;
                    if let Some(frame) = self.end_of_stream() {
                        return Ok(Some(frame));
                    }
                    return Ok(None);
                }
            }
            let unread = &self.chunk[self.start..self.end];
            let newline = memchr::memchr(b'\n', unread);
            let (segment_end, next_start) = match newline {
                Some(at) => (self.start + at, self.start + at + 1),
                None => (self.end, self.end),
            };
            if self.discarding {
                // The over-long line was answered: skip to its newline without decoding it.
                self.start = next_start;
                self.discarding = newline.is_none();
                continue;
            }
            let line_ends = newline.is_some();
            let from = self.line.len();
            self.decoder.decode(
                &self.chunk[self.start..segment_end],
                &mut self.line,
                line_ends,
            );
            self.start = next_start;
            if self.at_stream_start && (line_ends || !self.line.is_empty()) {
                self.at_stream_start = false;
                if let Some(rest) = self.line.strip_prefix('\u{FEFF}') {
                    self.line = rest.to_owned();
                }
            }
            self.line_units += utf16_len(self.line.get(from..).unwrap_or(&self.line));
            if self.line_units > self.options.max_line_utf16 {
                self.clear_line();
                self.discarding = !line_ends;
                return Ok(Some(Frame::Reply(Reply::ParseError)));
            }
            if line_ends && let Some(frame) = self.frame_line() {
                return Ok(Some(frame));
            }
        }
    }

    /// The frame of the last line, when the stream ends without a newline after it.
    fn end_of_stream(&mut self) -> Option<Frame> {
        if self.discarding {
            self.discarding = false;
            return None;
        }
        let from = self.line.len();
        self.decoder.decode(&[], &mut self.line, true);
        if self.at_stream_start {
            self.at_stream_start = false;
            if let Some(rest) = self.line.strip_prefix('\u{FEFF}') {
                self.line = rest.to_owned();
            }
        }
        self.line_units += utf16_len(self.line.get(from..).unwrap_or(&self.line));
        if self.line_units > self.options.max_line_utf16 {
            self.clear_line();
            return Some(Frame::Reply(Reply::ParseError));
        }
        self.frame_line()
    }

    /// The frame of the complete line in `self.line`, which is then cleared.
    fn frame_line(&mut self) -> Option<Frame> {
        let frame = classify(&self.line);
        self.clear_line();
        frame
    }

    /// Forgets the current line, and any part of a character carried over with it.
    fn clear_line(&mut self) {
        self.decoder.carry.clear();
        self.line.clear();
        if self.line.capacity() > READ_SIZE {
            // Give back the memory of a long line.
            self.line.shrink_to(READ_SIZE);
        }
        self.line_units = 0;
    }
}

/// What one complete line is: nothing (JSON whitespace), a reply, or a message.
fn classify(line: &str) -> Option<Frame> {
    if line
        .bytes()
        .all(|byte| matches!(byte, b' ' | b'\t' | b'\r'))
    {
        return None;
    }
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Some(Frame::Reply(Reply::ParseError));
    };
    let is_message = match &value {
        Value::Array(_) => true,
        Value::Object(object) => {
            let method_is_string = object.get("method").is_some_and(Value::is_string);
            let has_id = object.get("id").is_some_and(|id| !id.is_null());
            method_is_string || has_id
        }
        _ => false,
    };
    Some(if is_message {
        Frame::Message(value)
    } else {
        Frame::Reply(Reply::InvalidRequest)
    })
}

/// The length of `text` in UTF-16 code units, quick for ASCII.
fn utf16_len(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().map(char::len_utf16).sum()
    }
}

/// A streaming UTF-8 decoder: an incomplete character at the end of a read is kept for the next;
/// an invalid sequence (or one cut off by the end of a line or of the stream) becomes U+FFFD,
/// one per maximal invalid subpart, as `String::from_utf8_lossy` and WHATWG's `TextDecoder` do.
#[derive(Debug, Default)]
struct Utf8Decoder {
    carry: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes `bytes` onto `out`; with `flush`, nothing is kept for later.
    fn decode(&mut self, bytes: &[u8], out: &mut String, flush: bool) {
        if self.carry.is_empty() {
            decode_into(bytes, out, &mut self.carry, flush);
        } else {
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            decode_into(&joined, out, &mut self.carry, flush);
        }
    }
}

fn decode_into(bytes: &[u8], out: &mut String, carry: &mut Vec<u8>, flush: bool) {
    let mut chunks = bytes.utf8_chunks().peekable();
    while let Some(chunk) = chunks.next() {
        out.push_str(chunk.valid());
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        let at_end = chunks.peek().is_none();
        let incomplete =
            matches!(std::str::from_utf8(invalid), Err(error) if error.error_len().is_none());
        if at_end && incomplete && !flush {
            carry.extend_from_slice(invalid);
        } else {
            out.push('\u{FFFD}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(pieces: &[&[u8]]) -> String {
        let mut decoder = Utf8Decoder::default();
        let mut out = String::new();
        for piece in pieces {
            decoder.decode(piece, &mut out, false);
        }
        decoder.decode(&[], &mut out, true);
        out
    }

    #[test]
    fn the_decoder_joins_a_character_split_across_reads() {
        let euro = "€".as_bytes();
        assert_eq!(
            decode_in_pieces(&[b"a", &euro[..1], &euro[1..2], &euro[2..], b"b"]),
            "a€b"
        );
        let face = "😀".as_bytes();
        assert_eq!(decode_in_pieces(&[&face[..3], &face[3..]]), "😀");
    }

    #[test]
    fn the_decoder_replaces_invalid_and_cut_off_sequences() {
        assert_eq!(decode_in_pieces(&[b"a\xFFb"]), "a\u{FFFD}b");
        assert_eq!(decode_in_pieces(&[b"a\xE2\x82"]), "a\u{FFFD}");
        assert_eq!(decode_in_pieces(&[b"a\xE2", b"\x82x"]), "a\u{FFFD}x");
    }

    #[tokio::test]
    async fn an_over_long_line_is_never_kept_whole() {
        let mut stdin = vec![b'x'; 4 * READ_SIZE];
        stdin.extend_from_slice(b"\n{\"method\":\"m\"}\n");
        let mut guard = StdinGuard::with_options(
            &stdin[..],
            StdinGuardOptions {
                max_line_utf16: 1_000,
            },
        );
        assert_eq!(
            guard.next_frame().await.ok(),
            Some(Some(Frame::Reply(Reply::ParseError)))
        );
        // Answered within the first read; what was kept of the line is let go.
        assert!(guard.discarding);
        assert!(guard.line.is_empty());
        assert!(guard.line.capacity() <= READ_SIZE);
        let next = guard.next_frame().await.ok().flatten();
        assert_eq!(
            next,
            Some(Frame::Message(serde_json::json!({"method": "m"})))
        );
    }

    #[test]
    fn utf16_length_counts_surrogate_pairs_twice() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é😀"), 3);
    }
}
