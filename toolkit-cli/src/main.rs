//! `toolkit-gen`, the command line of toolkit: generates typed tool modules and crates
//! (`toolkit_gen`), inspects OpenAPI documents and MCP servers, searches catalogs, runs code, and
//! serves a gateway (`toolkit_gateway`). `toolkit-gen --help` lists the subcommands.

mod cli;

use clap::Parser as _;

/// Generating a module builds and drops millions of small token trees and strings; with the
/// system allocator about half of the generator's time went to `malloc`/`free` and fresh pages
/// (measured with `perf` on GitHub's description). mimalloc keeps that off the critical path.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::Cli::parse().run()
}
