//! Peer servers run as processes: started on 127.0.0.1 on a free port, stopped by their own
//! handle (their process id), and found where `scripts/install-test-peers` put them — or a loud
//! failure saying how to install them. Shared by path with toolkit-serve's tests (they start these
//! peers too).
#![allow(dead_code)]

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

/// A file of toolkit-mcp's tests (a peer's script), from whichever crate's tests ask.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolkit-mcp/tests/mcp"
    ))
    .join(name)
}

/// `rmcp-stdio-peer` (rmcp's server over stdio), a binary of toolkit-runtime-tests.
pub fn rmcp_stdio_peer() -> PathBuf {
    peer_binary("rmcp-stdio-peer", "mcp-test-peer")
}

/// The test peer `name`, a binary of toolkit-runtime-tests built with its `feature`: beside the
/// running test's executable (`target/<profile>/deps/…` → `target/<profile>/<name>`), where a
/// workspace build put it.
pub fn peer_binary(name: &str, feature: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test's executable");
    let profile = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test's executable is under target/<profile>/deps");
    let peer = profile.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        peer.is_file(),
        "{} is missing: run `cargo build -p toolkit-runtime-tests --features {feature} --bin \
         {name}` (a workspace run with every feature builds it)",
        peer.display()
    );
    peer
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

/// The Python server that asks (`python_asking_peer.py`), over Streamable HTTP in the stateless
/// revision.
pub async fn asking_peer() -> Listening {
    let port = free_port();
    let mut command = Command::new(installed("mcp-python/bin/python"));
    command
        .arg(script("python_asking_peer.py"))
        .arg("http")
        .arg(port.to_string());
    listening(command, port, "the asking Python MCP server").await
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
