//! `--format json|text`: how `report` and `audit` print ([`Format`]).

/// How `report` and `audit` print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON object, for scripts.
    #[default]
    Json,
    /// Lines for people.
    Text,
}
