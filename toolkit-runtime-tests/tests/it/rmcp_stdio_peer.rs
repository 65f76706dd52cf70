//! `rmcp-stdio-peer`: rmcp's server over stdio, for the tests and benchmarks of the MCP source.
//! Built only with the feature `mcp-test-peer`.
//!
//! Usage: `rmcp-stdio-peer [VERSION]`; a version narrows the server to that one revision. With
//! `RMCP_PEER_DROPPED_FILE` set, a line is added to that file whenever a call of `blocking` ends.
#![allow(missing_docs)]

use std::process::ExitCode;

use rmcp::ServiceExt as _;
use rmcp::model::ProtocolVersion;

#[path = "../../../toolkit-mcp/tests/mcp/peer_handler.rs"]
#[allow(dead_code)]
mod peer_handler;

const ONLY: [(&str, &[ProtocolVersion]); 5] = [
    ("2026-07-28", &[ProtocolVersion::V_2026_07_28]),
    ("2025-11-25", &[ProtocolVersion::V_2025_11_25]),
    ("2025-06-18", &[ProtocolVersion::V_2025_06_18]),
    ("2025-03-26", &[ProtocolVersion::V_2025_03_26]),
    ("2024-11-05", &[ProtocolVersion::V_2024_11_05]),
];

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut peer = peer_handler::Peer::standard();
    peer.dropped_file = std::env::var_os("RMCP_PEER_DROPPED_FILE").map(std::path::PathBuf::from);
    if let Some(version) = std::env::args().nth(1) {
        match ONLY.iter().find(|(name, _)| *name == version) {
            Some((_, versions)) => peer.versions = Some(versions),
            None => {
                eprintln!("rmcp-stdio-peer: no revision {version}");
                return ExitCode::FAILURE;
            }
        }
    }
    let service = match peer.serve(rmcp::transport::stdio()).await {
        Ok(service) => service,
        Err(error) => {
            eprintln!("rmcp-stdio-peer: {error}");
            return ExitCode::FAILURE;
        }
    };
    match service.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rmcp-stdio-peer: {error}");
            ExitCode::FAILURE
        }
    }
}
