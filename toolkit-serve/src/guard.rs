//! The crash guard of a server binary (seed 002, "Crash guards"): [`run_guarded`].
//!
//! A failure before the server is serving — the toolkit could not be built, the port could not
//! be taken, a panic while loading — ends the process with exit code 1 and one line on stderr
//! naming the server, so a client that started it sees why it is gone. Once the server is
//! serving, a failure inside a call is the call's result (a panic in a tool included), so the
//! server keeps serving: a server that dies mid-session takes every tool from its client.

use std::fmt::Display;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;

use futures_util::FutureExt as _;

use toolkit_core::toolkit::panic_message;

/// Runs `main` — which builds the toolkit and serves it — and gives the exit code of the
/// process: `0` when `main` ends well (stdin ended), `1` when it fails or panics, with one line
/// on stderr: `<label>: <error>`, or `<label>: panicked at <file:line>: <message>`.
///
/// It installs a panic hook for the process that reports every panic on one line of stderr
/// (never stdout), in place of the default report of several lines. A panic inside a tool is
/// reported so and becomes the call's result; serving goes on.
///
/// ```no_run
/// use std::process::ExitCode;
/// use toolkit_core::Toolkit;
/// use toolkit_serve::{McpServer, run_guarded};
///
/// #[tokio::main]
/// async fn main() -> ExitCode {
///     run_guarded("notes", async {
///         let toolkit: Toolkit = build_toolkit()?; // a failure here: exit 1, "notes: …" on stderr
///         McpServer::new(toolkit).name("notes").serve_stdio().await?;
///         Ok::<(), Box<dyn std::error::Error>>(())
///     })
///     .await
/// }
/// # fn build_toolkit() -> Result<Toolkit, Box<dyn std::error::Error>> { Ok(Toolkit::default()) }
/// ```
pub async fn run_guarded<F, E>(label: &str, main: F) -> ExitCode
where
    F: Future<Output = Result<(), E>>,
    E: Display,
{
    let hook_label = label.to_owned();
    std::panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map(|location| format!(" at {}:{}", location.file(), location.line()))
            .unwrap_or_default();
        eprintln!(
            "{hook_label}: panicked{location}: {}",
            one_line(panic_message(info.payload()))
        );
    }));
    match AssertUnwindSafe(main).catch_unwind().await {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(error)) => {
            eprintln!("{label}: {}", one_line(&error.to_string()));
            ExitCode::FAILURE
        }
        // The hook has reported it, on one line.
        Err(_) => ExitCode::FAILURE,
    }
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
