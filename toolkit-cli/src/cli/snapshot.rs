//! `toolkit-gen snapshot (--mcp-url URL [--header 'K: V']... | --mcp-stdio 'CMD ARGS') [-o FILE]`:
//! an MCP server's tools as a snapshot for the generator, `{"server": {name, version},
//! "protocolVersion": .., "tools": [the MCP Tool objects exactly as listed, all pages]}`.

use std::path::PathBuf;
use std::process::ExitCode;

use super::mcp_server::McpServer;

/// The arguments of `toolkit-gen snapshot`.
#[derive(Clone, Debug, clap::Args)]
pub struct SnapshotArgs {
    /// The server.
    #[command(flatten)]
    pub server: McpServer,
    /// Where to write the snapshot (stdout when left out).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|error| format!("no async runtime: {error}"))
}

/// The snapshot of `server`, as pretty JSON.
///
/// # Errors
///
/// A message for people when the server cannot be listed.
pub async fn snapshot_text(server: &McpServer) -> Result<String, String> {
    let source = server.source().await?;
    let snapshot = source.snapshot().await.map_err(|error| error.to_string());
    source.close().await;
    let mut text = serde_json::to_string_pretty(&snapshot?).map_err(|error| error.to_string())?;
    text.push('\n');
    Ok(text)
}

/// Runs `toolkit-gen snapshot`.
pub fn snapshot(args: &SnapshotArgs) -> ExitCode {
    let text = match runtime().and_then(|runtime| runtime.block_on(snapshot_text(&args.server))) {
        Ok(text) => text,
        Err(message) => {
            eprintln!("toolkit-gen: {message}");
            return ExitCode::FAILURE;
        }
    };
    match &args.output {
        None => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("toolkit-gen: cannot write {}: {error}", path.display());
                ExitCode::FAILURE
            }
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use futures_util::FutureExt as _;
    use serde_json::{Value, json};

    use super::*;

    fn scripted(dir: &std::path::Path) -> McpServer {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../toolkit-mcp/tests/mcp/stdio_peer.py"
        );
        McpServer {
            stdio: Some(format!(
                "python3 '{script}' normal '{}'",
                dir.join("pids").display()
            )),
            ..McpServer::default()
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("toolkit-gen-mcp-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn a_snapshot_holds_the_server_its_version_and_its_tools() {
        let dir = temp_dir("snapshot");
        let text = snapshot_text(&scripted(&dir)).await.unwrap();
        let snapshot: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            snapshot["server"],
            json!({"name": "stdio-peer", "version": "0.1"})
        );
        assert_eq!(snapshot["protocolVersion"], "2025-06-18");
        assert_eq!(snapshot["tools"][0]["name"], "echo");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A `call` of an MCP server's tool: the server, the tool and its input.
    #[derive(Debug, clap::Args)]
    struct CallArgs {
        #[command(flatten)]
        server: McpServer,
        tool: String,
        input: Option<String>,
    }

    /// The subcommands as `cli.rs` wires them.
    #[derive(Debug, clap::Parser)]
    struct Wired {
        #[command(subcommand)]
        command: WiredCommand,
    }

    #[derive(Debug, clap::Subcommand)]
    enum WiredCommand {
        Snapshot(SnapshotArgs),
        Call(CallArgs),
    }

    #[test]
    fn the_arguments_parse_as_documented() {
        use clap::{CommandFactory as _, Parser as _};
        Wired::command().debug_assert();
        let parsed = Wired::try_parse_from([
            "toolkit-gen",
            "snapshot",
            "--mcp-url",
            "http://127.0.0.1:1/mcp",
            "--header",
            "Authorization: Bearer x",
            "-o",
            "tools.json",
        ])
        .unwrap();
        let WiredCommand::Snapshot(args) = parsed.command else {
            panic!()
        };
        assert_eq!(args.server.headers, ["Authorization: Bearer x"]);
        assert_eq!(
            args.output.as_deref(),
            Some(std::path::Path::new("tools.json"))
        );
        let parsed = Wired::try_parse_from([
            "toolkit-gen",
            "call",
            "--mcp-stdio",
            "node s.js",
            "echo",
            "{}",
        ])
        .unwrap();
        let WiredCommand::Call(args) = parsed.command else {
            panic!()
        };
        assert_eq!(
            (args.tool.as_str(), args.input.as_deref()),
            ("echo", Some("{}"))
        );
        // A URL and a command cannot both be given; a header needs a URL.
        assert!(
            Wired::try_parse_from([
                "toolkit-gen",
                "snapshot",
                "--mcp-stdio",
                "x",
                "--mcp-url",
                "http://a"
            ])
            .is_err()
        );
        let parsed = Wired::try_parse_from([
            "toolkit-gen",
            "snapshot",
            "--mcp-stdio",
            "x",
            "--header",
            "a: b",
        ])
        .unwrap();
        let WiredCommand::Snapshot(args) = parsed.command else {
            panic!()
        };
        assert!(args.server.source().now_or_never().unwrap().is_err());
    }
}
