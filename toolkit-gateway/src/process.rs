//! The gateway as a process: what `toolkit-gateway --config toolkit.toml` (and the command line's
//! `toolkit-gen serve`) run, for an MCP client that starts it (stdio) or connects to it (HTTP).
//!
//! Logs go to stderr (`RUST_LOG` sets their level; warnings by default; [`LogFormat::Json`]
//! writes one JSON object a line), stdout carries the protocol only. No log field holds a token
//! or a credential. A failure before serving exits 1 with one line on stderr; once serving, what
//! fails is logged and serving goes on; the end of stdin ends the process with 0.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use toolkit_serve::run_guarded;

use crate::config::Config;

/// How the process writes its logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Lines for people.
    Text,
    /// One JSON object a line (`timestamp`, `level`, `fields`, `target`).
    Json,
}

/// The arguments of a command that serves (`toolkit-gateway`, `toolkit-gen serve`).
#[derive(Clone, Debug, clap::Args)]
pub struct ServeArgs {
    /// The configuration file (`toolkit.toml`).
    #[arg(long, value_name = "FILE", required_unless_present = "example_config")]
    pub config: Option<PathBuf>,
    /// Prints an example configuration, every key with a comment, and exits
    /// (`--example-config > toolkit.toml`).
    #[arg(long, conflicts_with_all = ["config", "log_format"])]
    pub example_config: bool,
    /// How logs are written to stderr: `text` for people, `json` (one object a line) for a log
    /// collector.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl ServeArgs {
    /// Serves, or prints the example; `program` names the command in a failure.
    pub fn run(self, program: &str) -> ExitCode {
        match self.config {
            Some(config) if !self.example_config => serve(program, &config, self.log_format),
            _ => print_example_config(program),
        }
    }
}

/// What `--help` says of the configuration, after the options, in both commands that serve
/// (`toolkit-gateway`, `toolkit-gen serve`): plain text for a terminal.
pub const CONFIG_HELP: &str = "`--example-config` prints a configuration with every key, each \
with a comment; docs/serving.md (\"A gateway over a config file\") says more.

The file's tables: [serve] (transport, address, presentation, threads, sessions, ...), \
[serve.auth] (how HTTP clients authenticate: tokens or JWTs), [catalog] (where tool definitions \
are kept, how often refreshed), [policy] (default and rules: allow, approve or block), [approval] \
(who approves), [[sources]] (each one of openapi, graphql, url or command, with its credentials, \
oauth, per_person, on_behalf_of and resilience), [audit].";

/// A configuration with every key the gateway reads, each with a comment (`toolkit-gateway
/// --example-config`). It parses as it is; the gateway's tests check that, and that every key
/// the configuration's tables take is written in it.
pub const EXAMPLE_CONFIG: &str = include_str!("example-config.toml");

/// Prints [`EXAMPLE_CONFIG`] on stdout; `program` names the command in a failure.
pub fn print_example_config(program: &str) -> ExitCode {
    use std::io::Write as _;
    match std::io::stdout()
        .lock()
        .write_all(EXAMPLE_CONFIG.as_bytes())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{program}: cannot write the example: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the gateway configured at `config` until its transport ends, logging as `format` says;
/// `program` names the command in a failure to start.
///
/// It owns the process: it installs the global `tracing` subscriber (stderr; `RUST_LOG`), runs
/// under the crash guard ([`run_guarded`]: a failure or a panic before serving ends the process
/// with 1), and turns transparent huge pages off for the process and the stdio servers it
/// starts. A host that embeds the gateway in its own `main` calls
/// [`serve_file`](crate::serve::serve_file) instead.
pub fn serve(program: &str, config: &Path, format: LogFormat) -> ExitCode {
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
            eprintln!("{program}: cannot start a runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run_guarded(program, async move {
        crate::serve::serve_file(loaded?, config).await
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
