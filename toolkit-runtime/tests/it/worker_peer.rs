//! `toolkit-code-worker`: a worker program for `WorkerIsolate` and `WorkerPool`, for this crate's
//! own tests and benchmarks. Built only with the feature `code-test-worker`.
//!
//! It serves one run with `serve_worker_on`, as a real worker does; a run whose code contains
//! `CRASH_THE_WORKER` makes it exit at once with status 101, as a worker whose engine crashed.
#![allow(missing_docs)]

use std::process::ExitCode;

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut input = BufReader::new(tokio::io::stdin());
    let mut first = String::new();
    if input.read_line(&mut first).await.is_err() {
        return ExitCode::FAILURE;
    }
    if first.contains("CRASH_THE_WORKER") {
        std::process::exit(101);
    }
    let input = std::io::Cursor::new(first.into_bytes()).chain(input);
    let served = toolkit_runtime::serve_worker_on(
        toolkit_runtime::QuickJsOptions::default(),
        input,
        tokio::io::stdout(),
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
