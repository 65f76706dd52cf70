//! `toolkit-gen check-catalog FILE`.

use crate::support::run;
use std::path::PathBuf;

fn temp_file(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("toolkit-gen-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn a_good_catalog_prints_its_tools() {
    let file = temp_file(
        "good.json",
        r#"[{"name":"a","inputSchema":{}},{"name":"b","inputSchema":{"type":"object"}}]"#,
    );
    let (code, stdout, stderr) = run(&["check-catalog", file.to_str().unwrap()]);
    std::fs::remove_file(&file).unwrap();
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "a\nb\n", ""));
}

#[test]
fn a_bad_catalog_names_every_bad_entry_and_exits_1() {
    let file = temp_file(
        "bad.json",
        r#"[{"name":"","inputSchema":{}},{"name":"x","inputSchema":[]},{"name":"ok","inputSchema":{}}]"#,
    );
    let (code, stdout, stderr) = run(&["check-catalog", file.to_str().unwrap()]);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("catalog entry 0: a tool's name must not be empty"),
        "{stderr}"
    );
    assert!(stderr.contains("catalog entry 1 (\"x\"): a tool's inputSchema must be a JSON object"));
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let (code, _, stderr) = run(&["check-catalog", "/nonexistent/catalog.json"]);
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("toolkit-gen: cannot read /nonexistent/catalog.json"),
        "{stderr}"
    );
}
