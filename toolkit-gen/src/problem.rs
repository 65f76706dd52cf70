//! One problem of one input, located: [`Problem`].

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem of one input, located.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// Where in it, as a JSON pointer (`#/tools/3`); `#` for the whole file.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl Problem {
    pub(crate) fn new(file: &Path, pointer: &str, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            pointer: pointer.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.file.display(),
            self.pointer,
            self.message
        )
    }
}
