//! `--strictness strict|follow-schema`: how closed the generated structs are, as `openapi`,
//! `graphql`, `mcp`, `crate` and `check` take it ([`StrictnessArg`]).

use toolkit_gen::builder::Strictness;

/// How closed the generated structs are, on the command line.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum StrictnessArg {
    /// Every struct refuses properties its schema does not name.
    #[default]
    Strict,
    /// A struct is as closed as its schema says; open ones keep extras in a map.
    FollowSchema,
}

impl From<StrictnessArg> for Strictness {
    fn from(strictness: StrictnessArg) -> Self {
        match strictness {
            StrictnessArg::Strict => Self::Strict,
            StrictnessArg::FollowSchema => Self::FollowSchema,
        }
    }
}
