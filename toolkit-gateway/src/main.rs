//! `toolkit-gateway`: the gateway alone, without the generator — the sources a configuration
//! names, under its policy, served as one MCP server (stdio or Streamable HTTP). The command
//! line's `toolkit-gen serve` runs the same ([`toolkit_gateway::process`]).

use std::process::ExitCode;

use clap::Parser;
use toolkit_gateway::process::{self, ServeArgs};

/// The gateway's own allocator, as `toolkit-gen`'s: mimalloc, which never asks for transparent
/// huge pages (`no_thp`; `docs/performance.md`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Serves the sources a configuration names, under its policy, as one MCP server (stdio or
/// Streamable HTTP).
#[derive(Debug, Parser)]
#[command(
    name = "toolkit-gateway",
    version,
    after_help = process::CONFIG_HELP,
    override_usage = "toolkit-gateway --config <FILE> [--log-format <LOG_FORMAT>]\n       \
                      toolkit-gateway --example-config"
)]
struct Args {
    #[command(flatten)]
    serve: ServeArgs,
}

fn main() -> ExitCode {
    Args::parse().serve.run("toolkit-gateway")
}
