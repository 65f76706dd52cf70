//! `toolkit-gen serve --config toolkit.toml`: the [gateway](toolkit_gateway), as a process an MCP
//! client starts (stdio) or connects to (HTTP).
//!
//! Logs go to stderr (`RUST_LOG` sets their level; warnings by default; `--log-format json`
//! writes one JSON object a line), stdout carries the protocol only. No log field holds a token
//! or a credential. A failure before serving exits 1 with one line on stderr; once serving, what
//! fails is logged and serving goes on; the end of stdin ends the process with 0.

use std::path::Path;
use std::process::ExitCode;

use toolkit_gateway::config::Config;
use toolkit_runtime::serve::run_guarded;

/// How `serve` writes its logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Lines for people.
    Text,
    /// One JSON object a line (`timestamp`, `level`, `fields`, `target`).
    Json,
}

/// A configuration with every key the gateway reads, each with a comment
/// (`toolkit-gen serve --example-config`). It parses as it is; `tests/cli/serve_example.rs` checks
/// that, and that every key the configuration's tables take is written in it.
pub const EXAMPLE_CONFIG: &str = include_str!("example-config.toml");

/// Prints [`EXAMPLE_CONFIG`] on stdout.
pub fn print_example_config() -> ExitCode {
    use std::io::Write as _;
    match std::io::stdout()
        .lock()
        .write_all(EXAMPLE_CONFIG.as_bytes())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolkit-gen serve: cannot write the example: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the gateway configured at `config`.
pub fn serve(config: &Path, format: LogFormat) -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Colour only for a person at a terminal: a file or a collector gets plain text.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => logs.try_init(),
        LogFormat::Json => logs.json().try_init(),
    };
    no_huge_pages();
    // The configuration says how many threads serve, so it is read before the runtime starts;
    // a problem with it is reported as any other failure to start.
    let loaded = Config::load(config).map_err(|error| error.to_string());
    let threads = loaded.as_ref().map_or(1, |config| config.serve.threads);
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(threads);
        builder
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("toolkit-gen serve: cannot start a runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run_guarded("toolkit-gen serve", async move {
        toolkit_gateway::serve::serve_file(loaded?, config).await
    }));
    // A stdio server's child processes and HTTP connections are not waited for.
    runtime.shutdown_background();
    code
}

/// Turns transparent huge pages off for the gateway's process, on systems whose kernel gives
/// them unasked (`always`; mimalloc, built with `no_thp`, never asks): each 2 MiB that a few
/// small allocations touch would be resident whole — 12 of the 33 MiB a loaded gateway held,
/// measured in `/proc/PID/smaps_rollup` (docs/performance.md). The flag passes to the stdio
/// servers the gateway starts; a kernel that refuses it changes nothing.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    if let Err(error) = nix::sys::prctl::set_thp_disable(true) {
        tracing::debug!(%error, "transparent huge pages stay as the system has them");
    }
}
