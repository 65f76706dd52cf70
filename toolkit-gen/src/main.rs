//! The `toolkit-gen` binary; see [`toolkit_gen::cli`].

use clap::Parser as _;

fn main() -> std::process::ExitCode {
    toolkit_gen::cli::Cli::parse().run()
}
