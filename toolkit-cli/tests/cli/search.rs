//! `toolkit-gen search --catalog FILE (QUERY | --queries FILE) [--limit N]`.

use serde_json::{Value, json};

use crate::support::run;

fn catalog() -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("toolkit-gen-search-{}.json", std::process::id()));
    let catalog = json!([
        { "name": "github__create_issue", "description": "Opens an issue.", "inputSchema": { "type": "object" } },
        { "name": "github__list_pulls", "description": "Lists pull requests.", "inputSchema": { "type": "object" } },
        { "name": "weather__forecast", "description": "Tells the weather.", "inputSchema": { "type": "object" } }
    ]);
    std::fs::write(&path, catalog.to_string()).unwrap();
    path
}

#[test]
fn one_query_prints_what_tool_search_gives() {
    let catalog = catalog();
    let (code, stdout, stderr) = run(&[
        "search",
        "--catalog",
        catalog.to_str().unwrap(),
        "open issues",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let found: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(found["matched"], 1);
    assert_eq!(found["available"], 3);
    assert_eq!(found["tools"][0]["name"], "github__create_issue");
    assert_eq!(
        found["tools"][0]["inputSchema"],
        json!({ "type": "object" })
    );
}

#[test]
fn a_file_of_queries_prints_a_line_each() {
    let catalog = catalog();
    let queries =
        std::env::temp_dir().join(format!("toolkit-gen-queries-{}.txt", std::process::id()));
    std::fs::write(&queries, "weather\npull requests\n\n").unwrap();
    let (code, stdout, _) = run(&[
        "search",
        "--catalog",
        catalog.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
        "--limit",
        "1",
    ]);
    assert_eq!(code, 0);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["tools"][0]["name"], "weather__forecast");
    assert_eq!(lines[1]["tools"][0]["name"], "github__list_pulls");
    assert_eq!(
        lines[2]["tools"].as_array().unwrap().len(),
        1,
        "no words lists the tools, up to the limit"
    );
}

#[test]
fn a_limit_past_twenty_and_a_bad_catalog_are_clear_errors() {
    let catalog = catalog();
    let (code, _, stderr) = run(&[
        "search",
        "--catalog",
        catalog.to_str().unwrap(),
        "--limit",
        "21",
        "x",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("21"), "{stderr}");
    let (code, _, stderr) = run(&["search", "--catalog", "/nonexistent.json", "x"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("/nonexistent.json"), "{stderr}");
}

/// A query over 1,024 characters, or a line that is not UTF-8, answers its own line with its
/// error (named on stderr by its line number) and the batch goes on; the exit code says that
/// some line failed.
#[test]
fn a_batch_answers_an_overlong_or_broken_line_with_its_error_and_goes_on() {
    let catalog = catalog();
    let queries = std::env::temp_dir().join(format!(
        "toolkit-gen-long-queries-{}.txt",
        std::process::id()
    ));
    let mut text = b"weather\n".to_vec();
    text.extend("x".repeat(1025).as_bytes());
    text.extend(b"\r\n\xff\xfe\npull requests\r\n");
    text.extend("y".repeat(1024).as_bytes());
    std::fs::write(&queries, text).unwrap();
    let (code, stdout, stderr) = run(&[
        "search",
        "--catalog",
        catalog.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
        "--limit",
        "1",
    ]);
    std::fs::remove_file(&queries).unwrap();
    assert_eq!(code, 1, "{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert_eq!(lines[0]["tools"][0]["name"], "weather__forecast");
    let overlong = lines[1]["error"].as_str().unwrap();
    assert!(overlong.contains("1024"), "{overlong}");
    assert!(lines[2]["error"].as_str().unwrap().contains("UTF-8"));
    assert_eq!(lines[3]["tools"][0]["name"], "github__list_pulls");
    assert_eq!(
        lines[4]["matched"], 0,
        "1,024 characters are still searched"
    );
    assert!(stderr.contains("line 2: "), "{stderr}");
    assert!(stderr.contains("line 3: "), "{stderr}");
    assert!(!stderr.contains("line 4"), "{stderr}");
}
