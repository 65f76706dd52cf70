//! Peer servers run as processes: started on 127.0.0.1 on a free port, stopped by their own
//! handle (their process id), and found where `scripts/install-test-peers` put them — or a loud
//! failure saying how to install them.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

/// The repository's `target/peers`.
pub fn peers() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/peers"))
}

/// `path` under `target/peers`, which must exist.
pub fn installed(path: &str) -> PathBuf {
    let path = peers().join(path);
    assert!(
        path.exists(),
        "{} is not installed: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// A file of this test module (a peer's script).
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/mcp")).join(name)
}

/// A port no one listens on now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// A peer process listening on 127.0.0.1, killed on drop.
pub struct Listening {
    child: Child,
    pub port: u16,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Listening {
    /// The URL of `path` on the peer.
    pub fn url(&self, path: &str) -> reqwest::Url {
        format!("http://127.0.0.1:{}{path}", self.port)
            .parse()
            .expect("url")
    }

    /// Stops the peer and waits until it has ended.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Starts `command` (which listens on `port`) and waits until the port takes connections.
pub async fn listening(mut command: Command, port: u16, what: &str) -> Listening {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("{what} could not be started: {error}"));
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Listening { child, port };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not listen on port {port}");
}
