//! Why serving failed: [`ServeError`].

use std::fmt;
use std::io;

/// Why a server could not serve (or stopped).
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    /// The port could not be taken.
    Bind {
        /// The port asked for.
        port: u16,
        /// Why.
        error: io::Error,
    },
    /// Reading the input (or the listener) failed.
    Io(io::Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bind { port, error } => {
                write!(f, "cannot listen on 127.0.0.1 port {port}: {error}")
            }
            Self::Io(error) => write!(f, "serving failed: {error}"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Bind { error, .. } | Self::Io(error) => Some(error),
        }
    }
}
