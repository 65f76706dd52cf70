//! `toolkit-gen audit`, run as a user runs it, and the audit over every server of the corpus.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::support::run;
use serde_json::{Value, json};
use toolkit_gen::audit::{AuditOptions, Severity, Summary, audit};

fn listing(name: &str, value: &Value) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-gen-audit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path
}

#[test]
fn audit_prints_findings_and_exits_by_severity() {
    let tools = json!({"server": "demo", "protocolVersion": "2026-07-28", "tools": [
        {"name": "get_weather", "description": "The weather of a city.",
         "inputSchema": {"type": "object", "properties": {
             "city": {"type": "string", "description": "The city.", "x-mcp-header": "City"}},
             "required": ["city"], "additionalProperties": false}},
        {"name": "edit", "inputSchema": {"anyOf": [{"type": "object"}, {"type": "object"}]}}
    ]});
    let file = listing("demo.json", &tools);
    let file = file.to_str().unwrap();

    let (code, stdout, stderr) = run(&["audit", file]);
    assert_eq!(code, 1, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["summary"]["tools"], 2);
    assert_eq!(report["summary"]["clean"], 1);
    assert_eq!(report["summary"]["errors"], 1);
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "objectRootedInput")
        .unwrap();
    assert_eq!(finding["tool"], "edit");
    assert_eq!(finding["pointer"], "#/inputSchema");
    assert_eq!(finding["severity"], "error");

    let (code, stdout, _) = run(&["audit", file, "--format", "text"]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("error[objectRootedInput] edit #/inputSchema: the root is a bare `anyOf`"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("2 tools audited, 1 clean: 1 errors, 1 warnings, 2 info\n"),
        "{stdout}"
    );

    // Only the clean tool: warnings and info pass unless denied.
    let one = listing(
        "one.json",
        &json!([tools["tools"][0], {"name": "b", "inputSchema": {"type": "object", "additionalProperties": false}}]),
    );
    let one = one.to_str().unwrap();
    assert_eq!(run(&["audit", one]).0, 0);
    assert_eq!(run(&["audit", one, "--deny", "warnings"]).0, 1);
    assert_eq!(
        run(&["audit", one, "--deny", "info", "--closed-input", "off"]).0,
        1
    );

    let (code, stdout, stderr) = run(&["audit", "/nonexistent/tools.json"]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(stderr.contains("cannot read"), "{stderr}");
    let not_tools = listing("not.json", &json!({"result": 1}));
    assert_eq!(run(&["audit", not_tools.to_str().unwrap()]).0, 2);
}

/// Every server of `livemcpbench-tools.json`: the audit never panics, finds what it should, and
/// the counts hold (a change to a check shows here).
#[test]
fn audit_sweeps_every_corpus_server() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/mcp/livemcpbench-tools.json");
    let text = std::fs::read_to_string(&path)
        .expect("the corpus is missing: ../shared/corpus/mcp/livemcpbench-tools.json");
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut servers = 0;
    let mut total = Summary::default();
    let mut by_check: BTreeMap<String, usize> = BTreeMap::new();
    let mut failing = 0;
    for entry in &entries {
        for listed in entry["tools"].as_object().unwrap().values() {
            let tools = listed["tools"].as_array().unwrap();
            let findings = audit(tools, &AuditOptions::default());
            let summary = Summary::of(tools.len(), &findings);
            servers += 1;
            total.tools += summary.tools;
            total.clean += summary.clean;
            total.errors += summary.errors;
            total.warnings += summary.warnings;
            total.info += summary.info;
            if summary.worst() == Some(Severity::Error) {
                failing += 1;
            }
            for finding in &findings {
                *by_check
                    .entry(format!("{} {}", finding.severity, finding.check))
                    .or_default() += 1;
            }
        }
    }
    println!(
        "livemcpbench audit: {servers} servers, {} tools, {} clean; {} errors, {} warnings, {} info; {failing} servers with errors",
        total.tools, total.clean, total.errors, total.warnings, total.info
    );
    for (check, count) in &by_check {
        println!("  {check}: {count}");
    }
    assert_eq!(servers, 70);
    assert_eq!(total.tools, 527);
    // The corpus was listed by clients that had already dropped what they refuse: what is left
    // is 19 tools without a description, 457 open input levels and 65 tools with bare
    // parameters.
    assert_eq!((total.errors, total.warnings, total.info), (0, 19, 522));
    assert_eq!(total.clean, 508);
}
