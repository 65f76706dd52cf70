//! What the command-line tests share: running the built `toolkit-gen` as a user runs it, and the
//! peers of the gateway's tests (`toolkit-gateway/tests/gateway/peers.rs`).

use std::process::Command;

pub use crate::peers::{Killed, Redis, free_port, peer, provider, root};

/// Runs `toolkit-gen` with `args`: its exit code, stdout and stderr.
pub fn run(args: &[&str]) -> (i32, String, String) {
    crate::peers::output(Command::new(env!("CARGO_BIN_EXE_toolkit-gen")).args(args))
}

/// `toolkit-gen serve` over stdio for the configuration `toml` (its catalog never refreshed),
/// written into `dir`, as an MCP source a test calls.
pub fn gateway(dir: &std::path::Path, toml: &str) -> std::sync::Arc<toolkit_runtime::mcp::Mcp> {
    use toolkit_runtime::mcp::{Mcp, StdioCommand};
    let config = dir.join("toolkit.toml");
    std::fs::write(&config, format!("[catalog]\nrefresh_seconds = 0\n\n{toml}")).unwrap();
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gen"))
        .args(["serve", "--config"])
        .arg(config);
    std::sync::Arc::new(Mcp::stdio("gateway", command))
}
