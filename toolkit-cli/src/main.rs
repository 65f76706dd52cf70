//! `toolkit-gen`, the command line of toolkit: generates typed tool modules and crates
//! (`toolkit_gen`), inspects OpenAPI documents and MCP servers, searches catalogs, runs code, and
//! serves a gateway (`toolkit_gateway`). `toolkit-gen --help` lists the subcommands.

mod cli;

use clap::Parser as _;

fn main() -> std::process::ExitCode {
    cli::Cli::parse().run()
}
