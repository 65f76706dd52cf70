//! `toolkit-gen execute`: model-style code run in the isolate that ships, against the tools of a
//! source given on the command line (an OpenAPI document's operations or an MCP server's tools;
//! none given: no tools).

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolkit_runtime::code::{CodeMode, CodeModeOptions, QuickJs};

use super::source::SourceArgs;

/// Runs `code` (a file, or standard input for `-`) against `source`'s tools within `timeout`,
/// printing `{result, logs}` and exiting 0, or the failure JSON and exiting 1.
pub fn execute(source: &SourceArgs, code: &str, timeout: Duration) -> ExitCode {
    let mut text = String::new();
    let read = if code == "-" {
        std::io::stdin().read_to_string(&mut text).map(drop)
    } else {
        std::fs::read_to_string(code).map(|code| text = code)
    };
    if let Err(error) = read {
        eprintln!("toolkit-gen: cannot read the code from {code}: {error}");
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("toolkit-gen: cannot start a runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let presented = source.toolkit(timeout).await?;
        let options = CodeModeOptions::default().timeout(timeout);
        let toolkit = CodeMode::toolkit(&presented, Arc::new(QuickJs::default()), &options);
        Ok::<_, String>(toolkit.call("execute", json!({ "code": text })).await)
    });
    let mut out = std::io::stdout().lock();
    match outcome {
        Err(problem) => {
            eprintln!("toolkit-gen: {problem}");
            ExitCode::FAILURE
        }
        Ok(Ok(run)) => {
            let _ = writeln!(out, "{run}");
            ExitCode::SUCCESS
        }
        Ok(Err(failure)) => {
            let _ = writeln!(out, "{}", failure.to_json());
            ExitCode::FAILURE
        }
    }
}
