//! The suites every tool source runs against itself, so that code written against
//! [`ToolSource`] works the same on every kind of source (feature
//! `conformance`).
//!
//! A source's tests implement [`Fixture`]: it makes the source for one check over a system that
//! serves three tools — `echo` (answers with the `text` it is given), `failing` (reports that it
//! failed) and `blocking` (never answers) — in the [`State`] the check asks for. [`run`] runs
//! every [`Check`] on the real clock, each over a source of its own, and gives a [`Report`] that
//! names each failed requirement and the subject.
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolkit_runtime::BoxFuture;
//! use toolkit_runtime::conformance::{self, Fixture, State, Subject};
//!
//! struct MySystem;
//!
//! impl Fixture for MySystem {
//!     fn subject(&self) -> &str {
//!         "my source over my system"
//!     }
//!
//!     fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>> {
//!         Box::pin(async move {
//!             // Start the system (a server on 127.0.0.1) in `state`, make the source over it,
//!             // and say what no model may read: its secret and its address.
//!             todo!("start the system as {state:?}")
//!         })
//!     }
//! }
//!
//! #[tokio::test]
//! async fn my_source_conforms() {
//!     conformance::run(&MySystem).await.assert_passed();
//! }
//! ```

mod checks;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

pub use checks::Check;

use toolkit_core::{BoxFuture, ToolSource};

/// The state of the system a check asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// The system serves its three tools to the source's credentials.
    Working,
    /// The system refuses the source's credentials (HTTP 401, or the system's own way).
    Unauthorized,
    /// The system says it is down (HTTP 503, or the system's own way).
    Unavailable,
    /// Nothing answers where the source looks for the system (a closed port, a dead process).
    Unreachable,
}

/// Makes, for one check, a source over a system in the state the check asks for.
pub trait Fixture: Send + Sync {
    /// What is tested, as failures name it: `MCP stateless (rmcp)`.
    fn subject(&self) -> &str;

    /// The source over a system in `state`, with what the check needs to know of it.
    fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>>;
}

/// A source under test, with what the checks need to know of its system.
pub struct Subject {
    /// The source.
    pub source: Arc<dyn ToolSource>,
    /// The credential the system takes, which no model may read. Empty when there is none.
    pub secret: String,
    /// The system's address (`127.0.0.1:4021`, a URL, a command), which no model may read.
    pub address: String,
    /// Says whether the work of the `blocking` tool's last call has ended, as the system sees it
    /// (its connection closed, its request cancelled, its future dropped).
    pub blocking_ended: Arc<dyn Fn() -> bool + Send + Sync>,
    /// Whether `discover` asks the system (then it must fail as a call does when the system
    /// refuses or is down), or reports what the source already holds.
    pub discover_asks_system: bool,
    /// Whatever keeps the system alive until the check ends (a server's handle, a process).
    pub system: Box<dyn Any + Send + Sync>,
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subject")
            .field("source", &self.source.name())
            .field("address", &self.address)
            .field("discover_asks_system", &self.discover_asks_system)
            .finish_non_exhaustive()
    }
}

/// An address on 127.0.0.1 where nothing listens, held so that nothing can start listening there
/// while it lives: a fixture's system in [`State::Unreachable`]. (A port freed by a stopped server
/// can be taken by another test's server at once; a bound socket that never listens cannot.)
#[derive(Debug)]
pub struct ClosedPort {
    socket: tokio::net::TcpSocket,
    address: std::net::SocketAddr,
}

impl ClosedPort {
    /// Holds a fresh port on 127.0.0.1 without listening on it.
    ///
    /// # Errors
    ///
    /// When no socket can be bound.
    pub fn new() -> std::io::Result<Self> {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let address = socket.local_addr()?;
        Ok(Self { socket, address })
    }

    /// The address, where every connection is refused.
    pub fn address(&self) -> std::net::SocketAddr {
        self.address
    }

    /// The socket held (it never listens).
    pub fn socket(&self) -> &tokio::net::TcpSocket {
        &self.socket
    }
}

/// What a run of the suites found: each check and whether it passed.
#[derive(Clone, Debug)]
pub struct Report {
    /// What was tested.
    pub subject: String,
    /// Each check, with why it failed.
    pub outcomes: Vec<(Check, Result<(), String>)>,
}

impl Report {
    /// The checks that failed.
    pub fn failed(&self) -> Vec<Check> {
        self.outcomes
            .iter()
            .filter(|(_, outcome)| outcome.is_err())
            .map(|(check, _)| *check)
            .collect()
    }

    /// Panics, naming every failed requirement and the subject, unless all passed. For tests.
    #[track_caller]
    #[allow(clippy::panic)]
    pub fn assert_passed(&self) {
        let failures: Vec<String> = self
            .outcomes
            .iter()
            .filter_map(|(check, outcome)| {
                outcome
                    .as_ref()
                    .err()
                    .map(|why| format!("- {}: {why}", check.requirement()))
            })
            .collect();
        if !failures.is_empty() {
            panic!(
                "{} does not conform:\n{}",
                self.subject,
                failures.join("\n")
            );
        }
    }
}

/// Runs every check on `fixture`, one after another, each over a source of its own.
pub async fn run(fixture: &dyn Fixture) -> Report {
    run_checks(fixture, Check::ALL).await
}

/// Runs these checks on `fixture`.
pub async fn run_checks(fixture: &dyn Fixture, checks: &[Check]) -> Report {
    let mut outcomes = Vec::with_capacity(checks.len());
    for &check in checks {
        outcomes.push((check, checks::run(fixture, check).await));
    }
    Report {
        subject: fixture.subject().to_owned(),
        outcomes,
    }
}
