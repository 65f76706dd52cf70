//! `toolkit-gen execute [SOURCE] [--timeout-ms N] --code (FILE | -)`.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn run(args: &[&str], stdin: &str) -> (i32, Value, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolkit-gen"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    (
        output.status.code().unwrap_or(-1),
        serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn temp(name: &str, text: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("toolkit-gen-execute-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn code_without_tools_runs_from_standard_input() {
    let (code, printed, stderr) = run(
        &["execute", "--code", "-"],
        "console.log('hi'); return 1 + 1;",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(printed, json!({ "result": 2, "logs": ["hi"] }));
}

#[test]
fn a_throw_and_a_timeout_are_failures_with_exit_1() {
    let (code, printed, _) = run(&["execute", "--code", "-"], "throw new Error('no');");
    assert_eq!(code, 1);
    assert_eq!(printed["code"], "CodeError");
    let (code, printed, _) = run(
        &["execute", "--timeout-ms", "200", "--code", "-"],
        "while (true) {}",
    );
    assert_eq!(code, 1);
    assert_eq!(printed["code"], "Timeout");
}

#[test]
fn code_calls_the_operations_of_an_openapi_document() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/pets",
        axum::routing::get(|| async { axum::Json(json!([{ "name": "Rex" }, { "name": "Tom" }])) }),
    );
    runtime.spawn(async move {
        axum::serve(toolkit_runtime::serve::without_delay(listener), app).await
    });
    let document = temp(
        "pets.json",
        &json!({
            "openapi": "3.1.0",
            "info": { "title": "pets", "version": "1" },
            "paths": { "/pets": { "get": { "operationId": "listPets", "responses": { "200": { "description": "ok" } } } } }
        })
        .to_string(),
    );
    let code = temp(
        "code.js",
        "const pets = await tools.listPets({}); return pets.map(p => p.name);",
    );
    let base_url = format!("http://{address}");
    let (status, printed, stderr) = run(
        &[
            "execute",
            "--openapi",
            document.to_str().unwrap(),
            "--base-url",
            &base_url,
            "--code",
            code.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(printed["result"], json!(["Rex", "Tom"]));
}

#[test]
fn a_missing_code_file_is_a_usage_error() {
    let (code, _, stderr) = run(&["execute", "--code", "/nonexistent/code.js"], "");
    assert_eq!(code, 2);
    assert!(stderr.contains("/nonexistent/code.js"), "{stderr}");
}
