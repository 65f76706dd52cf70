//! `toolkit-code-worker`: a worker program for `WorkerIsolate` and `WorkerPool`, for this crate's
//! own tests and benchmarks. Built only with the feature `code-test-worker`.
//!
//! It serves one run with `serve_worker_on` over `worker_stdio`, as a real worker does; a run whose
//! code contains `CRASH_THE_WORKER` makes it exit with status 101 once it has said it started the
//! run, as a worker whose engine crashed on the code.
#![allow(missing_docs)]

use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const MARKER: &[u8] = b"CRASH_THE_WORKER";

/// Standard input, watched for the marker.
struct WatchForMarker<R> {
    inner: R,
    /// The last bytes read, enough to see a marker split across reads.
    tail: Vec<u8>,
    seen: Arc<AtomicBool>,
}

impl<R: AsyncRead + Unpin> AsyncRead for WatchForMarker<R> {
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
            self.seen.store(true, Ordering::SeqCst);
        }
        let keep = self.tail.len().saturating_sub(MARKER.len());
        self.tail.drain(..keep);
        polled
    }
}

/// Standard output, which ends the process once it has passed on the `started` line of a run
/// that holds the marker.
struct CrashOnceStarted<W> {
    inner: W,
    seen: Arc<AtomicBool>,
    started: bool,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for CrashOnceStarted<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.seen.load(Ordering::SeqCst) && buf.starts_with(b"{\"started\"") {
            self.started = true;
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let flushed = Pin::new(&mut self.inner).poll_flush(cx);
        if self.started && flushed.is_ready() {
            std::process::exit(101);
        }
        flushed
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let (input, output) = toolkit_runtime::code::worker_stdio();
    let seen = Arc::new(AtomicBool::new(false));
    let input = WatchForMarker {
        inner: input,
        tail: Vec::new(),
        seen: Arc::clone(&seen),
    };
    let output = CrashOnceStarted {
        inner: output,
        seen,
        started: false,
    };
    let served = toolkit_runtime::code::serve_worker_on(
        toolkit_runtime::code::QuickJsOptions::default(),
        input,
        output,
    )
    .await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolkit-code-worker: {error}");
            ExitCode::FAILURE
        }
    }
}
