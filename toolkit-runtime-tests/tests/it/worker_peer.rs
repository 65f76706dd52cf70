//! `toolkit-code-worker`: a worker program for `WorkerIsolate` and `WorkerPool`, for this crate's
//! own tests and benchmarks. Built only with the feature `code-test-worker`.
//!
//! It serves one run with `serve_worker_on` over `worker_stdio`, as a real worker does; a run whose code contains
//! `CRASH_THE_WORKER` makes it exit at once with status 101, as a worker whose engine crashed.
#![allow(missing_docs)]

use std::pin::Pin;
use std::process::ExitCode;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

const MARKER: &[u8] = b"CRASH_THE_WORKER";

/// Standard input, watched for the marker.
struct CrashOnMarker<R> {
    inner: R,
    /// The last bytes read, enough to see a marker split across reads.
    tail: Vec<u8>,
}

impl<R: AsyncRead + Unpin> AsyncRead for CrashOnMarker<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let new = buf.filled()[before..].to_vec();
        self.tail.extend_from_slice(&new);
        if self
            .tail
            .windows(MARKER.len())
            .any(|window| window == MARKER)
        {
            std::process::exit(101);
        }
        let keep = self.tail.len().saturating_sub(MARKER.len());
        self.tail.drain(..keep);
        polled
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let (input, output) = toolkit_runtime::worker_stdio();
    let input = CrashOnMarker {
        inner: input,
        tail: Vec::new(),
    };
    let served =
        toolkit_runtime::serve_worker_on(toolkit_runtime::QuickJsOptions::default(), input, output)
            .await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolkit-code-worker: {error}");
            ExitCode::FAILURE
        }
    }
}
