//! The peers the tests start or read, which `scripts/install-test-peers` installs under the
//! workspace's `target/peers`: GitHub's description, a server's ready line, Prism started on a
//! document. Shared by path with toolkit-runtime-tests (its resilience tests start Prism on a
//! slow document; its code-mode search reads GitHub's description).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

/// How long one Prism may take to start (GitHub's 13 MB document: about 20 s on two cores, with
/// the others starting beside it).
const START: Duration = Duration::from_secs(240);

// The MCP tests' `processes.rs` (where the peers are, a free port), which every binary that
// includes this file includes too.
use crate::processes::{free_port, installed};

/// GitHub's description (npm `@octokit/openapi`).
pub(crate) fn github_description() -> PathBuf {
    installed("node_modules/@octokit/openapi/generated/api.github.com.json")
}

/// A judge's server on 127.0.0.1 (Prism, or `scripts/openapi-judge.py`), stopped when dropped.
pub(crate) struct Peer {
    /// The server's process, killed on drop.
    pub(crate) _child: Child,
    /// The port it listens on.
    pub(crate) port: u16,
}

/// Starts `prism mock DOC --errors` on a free port and waits until it listens.
pub(crate) async fn start_prism(document: &Path) -> Peer {
    let prism = installed("prism/node_modules/@stoplight/prism-cli/dist/index.js");
    // A free port: bound, read and let go; Prism takes it a moment later.
    let port = free_port();
    let mut child = Command::new("node")
        .arg(&prism)
        .args([
            "mock",
            "--errors",
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ])
        .arg(document)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let listening = ready_line(&mut child, START, |line| {
        line.contains("Prism is listening").then_some(())
    })
    .await;
    assert!(
        listening.is_some(),
        "Prism did not start on {} within {START:?}",
        document.display()
    );
    Peer {
        _child: child,
        port,
    }
}

/// Reads `child`'s standard output, piped, for up to `within` until `ready` takes a value from a
/// line (a server saying it listens, and where); then goes on reading in the background, since
/// a server that writes a line per request would otherwise fill its pipe and stall.
pub(crate) async fn ready_line<T>(
    child: &mut Child,
    within: Duration,
    ready: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let mut lines = BufReader::new(child.stdout.take()?).lines();
    let found = tokio::time::timeout(within, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(value) = ready(&line) {
                return Some(value);
            }
        }
        None
    })
    .await
    .ok()
    .flatten();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    found
}
