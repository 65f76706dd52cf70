//! What the serving tests here and toolkit-mcp's tests (by path) share: a toolkit served over
//! Streamable HTTP on 127.0.0.1 (`Serving`), and an upstream of the TypeScript SDK to put behind
//! an MCP source (`upstream`).

use std::time::Duration;

use tokio::process::Command;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use toolkit_serve::{McpServer, ServeError, bind_loopback};

use crate::processes::{Listening, free_port, installed, listening};

/// A server serving on 127.0.0.1 until dropped or stopped.
pub struct Serving {
    pub url: reqwest::Url,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), ServeError>>,
}

impl Serving {
    pub async fn start(server: McpServer) -> Self {
        let listener = bind_loopback(0).await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.serve_http_until(listener, async move {
            let _ = stopped.await;
        }));
        Self {
            url: format!("http://{address}/mcp").parse().unwrap(),
            stop: Some(stop),
            task,
        }
    }

    /// Asks the server to shut down and waits until it has.
    pub async fn stop(mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), &mut self.task)
            .await
            .expect("the server shut down in time")
            .expect("the server task did not panic")
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The TypeScript SDK's content peer (`content_peer.cjs`), listening on 127.0.0.1.
pub async fn upstream() -> Listening {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .env("NODE_PATH", installed("mcp-npm/node_modules"))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../toolkit-serve/tests/serve/content_peer.cjs"
        ))
        .arg(port.to_string());
    listening(command, port, "the content peer").await
}
