//! The `toolkit-gen` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Generates typed tool modules and inspects the documents tools come from.
#[derive(Debug, Parser)]
#[command(name = "toolkit-gen", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// A `toolkit-gen` subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Reads a catalog of tool definitions (a JSON array) and reports every entry that is no
    /// definition; prints the tools' names when all are.
    CheckCatalog {
        /// The catalog file.
        file: PathBuf,
    },
}

impl Cli {
    /// Runs the command, printing results on stdout and problems on stderr.
    pub fn run(self) -> ExitCode {
        match self.command {
            Command::CheckCatalog { file } => check_catalog(&file),
        }
    }
}

fn check_catalog(file: &std::path::Path) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("toolkit-gen: cannot read {}: {error}", file.display());
            return ExitCode::FAILURE;
        }
    };
    match toolkit_runtime::decode_catalog(&text) {
        Ok(definitions) => {
            for definition in &definitions {
                println!("{}", definition.name());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            for problem in error.problems() {
                eprintln!("toolkit-gen: {}: {problem}", file.display());
            }
            ExitCode::FAILURE
        }
    }
}
