//! `toolkit-serve-fixture`: the demo toolkit served over stdio by `McpServer::serve_stdio` under
//! `run_guarded`, for the tests and benchmarks of serving. Built only with the feature
//! `serve-test-peer`.
//!
//! With `FIXTURE_FAIL_START` set, it fails before serving, and with `FIXTURE_PANIC_START` set it
//! panics before serving (the crash guard's cases). With
//! `FIXTURE_VERSIONS` set to a comma-separated list, it serves only those revisions.
#![allow(missing_docs, clippy::panic)]

use std::process::ExitCode;

use toolkit_runtime::serve::{McpServer, run_guarded};

#[path = "../../../toolkit-serve/tests/serve/demo.rs"]
#[allow(dead_code)]
mod demo;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    run_guarded("toolkit-serve-fixture", async {
        if std::env::var_os("FIXTURE_FAIL_START").is_some() {
            return Err("the toolkit could not be built:\nFIXTURE_FAIL_START is set".into());
        }
        if std::env::var_os("FIXTURE_PANIC_START").is_some() {
            panic!("the catalog is corrupt\n(FIXTURE_PANIC_START is set)");
        }
        let mut server = McpServer::new(demo::toolkit())
            .name("toolkit-serve-fixture")
            .version("1.0.0");
        if let Ok(versions) = std::env::var("FIXTURE_VERSIONS") {
            server = server.protocol_versions(versions.split(','));
        }
        server.serve_stdio().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
    .await
}
