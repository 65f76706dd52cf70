//! The peers the gateway's and the command line's tests start: a free port, a `redis-server` of
//! their own, `oidc-provider`, the packages `scripts/install-test-peers` installed, and a child
//! process killed when dropped. (`toolkit-cli/tests/cli/main.rs` reads this file too.)
#![allow(clippy::panic)]

use std::process::Command;

/// Runs `command` to its end: its exit code, stdout and stderr.
pub fn output(command: &mut Command) -> (i32, String, String) {
    let output = command.output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A free port of 127.0.0.1 (bound, then let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap_or_else(|error| panic!("no free port: {error}"))
}

/// A `redis-server` of the test's own (Debian's, installed by `scripts/install-test-peers`) on a
/// free port of 127.0.0.1, nothing saved to disk; killed when dropped.
pub struct Redis(std::process::Child);

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Redis {
    /// Starts one on `port`, with `password` if given, and waits until it takes connections.
    pub fn start(port: u16, password: Option<&str>) -> Self {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .args(
                password
                    .map(|password| ["--requirepass", password])
                    .into_iter()
                    .flatten(),
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!("redis-server ({error}); run scripts/install-test-peers")
            });
        let redis = Self(child);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        redis
    }
}

/// The workspace's root.
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A peer `scripts/install-test-peers` installed under `target/peers`, by its path there.
pub fn peer(path: &str) -> String {
    let path = root().join("target/peers").join(path);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-peers",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// A child process, killed when dropped.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `oidc-provider` (`scripts/oidc-provider.mjs`) for the server at `resource`: its issuer, and the process.
pub fn provider(resource: &str) -> (String, Killed) {
    let mut child = std::process::Command::new("node")
        .arg("--disable-wasm-trap-handler")
        .arg(root().join("scripts/oidc-provider.mjs"))
        .arg(peer("oidc-provider"))
        .arg(resource)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let issuer = lines.next().unwrap().unwrap();
    assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer}");
    std::thread::spawn(move || for _ in lines {});
    (issuer, Killed(child))
}
