//! What the gateway's tests share: running the built `toolkit-gateway` as a user runs it, its
//! clients over stdio and Streamable HTTP, and the peers of `peers.rs`.

use std::process::Command;

pub use crate::peers::{Killed, Redis, free_port, peer, provider, root};

/// Runs `toolkit-gateway` with `args`: its exit code, stdout and stderr.
pub fn run(args: &[&str]) -> (i32, String, String) {
    crate::peers::output(Command::new(env!("CARGO_BIN_EXE_toolkit-gateway")).args(args))
}

/// `toolkit-gateway` over stdio for the configuration `toml` (its catalog never refreshed),
/// written into `dir`, as an MCP source a test calls.
pub fn gateway(dir: &std::path::Path, toml: &str) -> std::sync::Arc<toolkit_mcp::Mcp> {
    use toolkit_mcp::{Mcp, StdioCommand};
    let config = dir.join("toolkit.toml");
    std::fs::write(&config, format!("[catalog]\nrefresh_seconds = 0\n\n{toml}")).unwrap();
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(config);
    std::sync::Arc::new(Mcp::stdio("gateway", command))
}

/// The MCP client of the gateway on 127.0.0.1:`port` over Streamable HTTP, with `token` as its
/// bearer token (none: no `Authorization`).
pub fn bearer_client(port: u16, token: Option<&str>) -> toolkit_mcp::Mcp {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(token) = token {
        headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp").parse().unwrap();
    toolkit_mcp::Mcp::http("gateway", url, http)
}
