//! `toolkit-gen report`, run as a user runs it: each operation or tool with `typed` and `untyped`.

use std::path::PathBuf;

use crate::support::run;
use serde_json::{Value, json};

fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-gen-report-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Two objects with nothing to tell them apart: the emitter types them as a `Value`.
fn untagged() -> Value {
    json!({"oneOf": [
        {"type": "object", "properties": {"city": {"type": "string"}}},
        {"type": "object", "properties": {"zip": {"type": "string"}}}
    ]})
}

#[test]
fn report_marks_each_operation_typed_or_not() {
    let document = json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/a": {"get": {"operationId": "getA",
                "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}}}},
            "/b": {"post": {"operationId": "postB",
                "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "properties": {"where": untagged()}}}}},
                "responses": {"200": {"description": "ok"}}}}
        }
    });
    let path = file("api.json", &document.to_string());
    let path = path.to_str().unwrap();
    let (code, stdout, stderr) = run(&["report", "--openapi", path]);
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let operations = report["operations"].as_array().unwrap();
    assert_eq!(operations[0]["typed"], true);
    assert_eq!(operations[0]["untyped"], json!([]));
    assert_eq!(operations[1]["typed"], false);
    let pointer = operations[1]["untyped"][0].as_str().unwrap();
    assert!(pointer.ends_with("/where/oneOf"), "{pointer}");
    assert_eq!(report["summary"]["typed"], 1);
    assert_eq!(report["summary"]["typedShare"], 0.5);
    assert_eq!(report["summary"]["operations"], 2);

    let (code, stdout, _) = run(&["report", "--openapi", path, "--format", "text"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("1 of 2 operations fully typed (50.0 %)"),
        "{stdout}"
    );
    assert!(stdout.contains("postB  [1 untyped]"), "{stdout}");
    assert!(
        stdout.contains("untyped (serde_json::Value):\n  postB: #/"),
        "{stdout}"
    );
}

#[test]
fn report_reads_an_mcp_snapshot() {
    let snapshot = json!({"server": "s", "protocolVersion": "2025-06-18", "tools": [
        {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
         "annotations": {"readOnlyHint": true}},
        {"name": "find", "inputSchema": {"type": "object", "properties": {"where": untagged()}}}
    ]});
    let path = file("tools.json", &snapshot.to_string());
    let path = path.to_str().unwrap();
    let (code, stdout, stderr) = run(&["report", "--mcp", path]);
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        report["tools"][0],
        json!({"name": "echo", "readOnly": true, "typed": true, "untyped": []})
    );
    assert_eq!(
        report["tools"][1]["untyped"],
        json!(["#/properties/where/oneOf"])
    );
    assert_eq!(
        report["summary"],
        json!({"tools": 2, "typed": 1, "typedShare": 0.5})
    );
    let (_, stdout, _) = run(&["report", "--mcp", path, "--format", "text"]);
    assert!(
        stdout.starts_with(
            "2 tools\n1 of 2 tools fully typed (50.0 %)\n  echo\n  find  [1 untyped]\n"
        ),
        "{stdout}"
    );

    // One of the two inputs, never both, never none.
    assert_eq!(run(&["report", "--mcp", path, "--openapi", path]).0, 2);
    assert_eq!(run(&["report"]).0, 2);
    assert_eq!(run(&["report", "--mcp", "/nonexistent.json"]).0, 2);
}

#[test]
fn help_reads_as_text_with_no_rustdoc_links() {
    let (code, listing, _) = crate::support::run(&["--help"]);
    assert_eq!(code, 0);
    let commands: Vec<String> = listing
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .filter(|command| command != "help")
        .collect();
    assert!(commands.len() > 10, "{listing}");
    for command in &commands {
        let (code, help, stderr) = crate::support::run(&[command, "--help"]);
        assert_eq!(code, 0, "{command}: {stderr}");
        assert!(!help.contains("[`"), "{command} --help:\n{help}");
        assert!(
            !help.contains("toolkit_gateway::"),
            "{command} --help:\n{help}"
        );
    }
}
