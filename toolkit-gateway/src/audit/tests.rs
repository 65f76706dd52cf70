#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolkit_core::context::{Principal, Session};

use super::*;

fn config(file: &Path) -> AuditConfig {
    AuditConfig {
        file: Some(file.to_owned()),
        max_bytes: 100 * 1024 * 1024,
        keep: 5,
        stdout: false,
        include_inputs: false,
    }
}

fn alice() -> CallContext {
    CallContext::new()
        .with_extension(Principal::token("alice"))
        .with_extension(Session::new("session-1"))
}

fn object(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap()
}

/// Records a call of `tool` by `context` with `input`, ended `outcome`.
async fn call(audit: &Audit, context: &CallContext, tool: &str, input: &JsonObject, outcome: &str) {
    let open = audit
        .begin(Entry {
            context,
            kind: Kind::ToolCall,
            source: "api",
            name: tool,
            input,
        })
        .await;
    open.end(outcome);
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[tokio::test]
async fn a_record_has_the_schemas_fields_and_no_input_value() {
    let dir = dir();
    let path = dir.path().join("audit.jsonl");
    let readiness = Readiness::default();
    let audit = Audit::start(&config(&path), &[], readiness.clone()).unwrap();
    let input = object(json!({"city": "a-value-never-recorded", "days": 3}));
    call(&audit, &alice(), "forecast", &input, "ok").await;
    assert_eq!(audit.finish(Duration::from_secs(5)).await, 0);

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("a-value-never-recorded"), "{text}");
    let records = lines(&path);
    assert_eq!(records.len(), 1);
    let record = records[0].as_object().unwrap();
    let keys: BTreeSet<&str> = record.keys().map(String::as_str).collect();
    let expected: BTreeSet<&str> = [
        "v",
        "time",
        "principal",
        "session",
        "kind",
        "source",
        "tool",
        "decision",
        "input_sha256",
        "input_bytes",
        "outcome",
        "duration_ms",
    ]
    .into_iter()
    .collect();
    assert_eq!(keys, expected, "{text}");
    assert_eq!(record["v"], 1);
    assert_eq!(record["principal"], "token:alice");
    assert_eq!(record["session"], "session-1");
    assert_eq!(record["kind"], "tool_call");
    assert_eq!(record["source"], "api");
    assert_eq!(record["tool"], "forecast");
    assert_eq!(record["decision"], "allow");
    assert_eq!(record["outcome"], "ok");
    let bytes = serde_json::to_vec(&input).unwrap();
    assert_eq!(record["input_bytes"], bytes.len());
    assert_eq!(record["input_sha256"], record::sha256_hex(&bytes));
    assert_eq!(
        record::sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let time = record["time"].as_str().unwrap();
    assert!(
        time.len() >= 20 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
        "{time}"
    );
    assert!(record["duration_ms"].as_f64().unwrap() >= 0.0);
    assert!(readiness.get().audit.is_none());
}

#[tokio::test]
async fn an_approved_call_says_so_and_the_approval_work_can_say_who() {
    let dir = dir();
    let path = dir.path().join("audit.jsonl");
    let audit = Audit::start(&config(&path), &[], Readiness::default()).unwrap();
    let input = JsonObject::new();
    let approved = toolkit_core::approval::Approved { edited: false };
    for context in [
        alice().with_extension(approved),
        alice()
            .with_extension(approved)
            .with_extension(ApprovalRecord {
                verdict: "edited".to_owned(),
                by: Some("token:bob".to_owned()),
            }),
    ] {
        let open = audit
            .begin(Entry {
                context: &context,
                kind: Kind::ToolCall,
                source: "api",
                name: "delete",
                input: &input,
            })
            .await;
        open.end("ok");
    }
    audit.finish(Duration::from_secs(5)).await;
    let records = lines(&path);
    assert_eq!(records[0]["decision"], "approve");
    assert_eq!(records[0]["approval"], json!({"verdict": "approved"}));
    assert_eq!(
        records[1]["approval"],
        json!({"verdict": "edited", "by": "token:bob"})
    );
}

#[tokio::test]
async fn the_input_is_recorded_only_when_asked_and_then_redacted() {
    let dir = dir();
    let path = dir.path().join("audit.jsonl");
    let mut with_inputs = config(&path);
    with_inputs.include_inputs = true;
    let secret = "sk-live-0123456789".to_owned();
    let audit = Audit::start(&with_inputs, &[secret], Readiness::default()).unwrap();
    let input = object(json!({"city": "Oslo", "auth": "Bearer sk-live-0123456789"}));
    call(&audit, &alice(), "forecast", &input, "ok").await;
    audit.finish(Duration::from_secs(5)).await;
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("sk-live-0123456789"), "{text}");
    let records = lines(&path);
    assert_eq!(
        records[0]["input"],
        json!({"city": "Oslo", "auth": "Bearer <credential>"})
    );
}

#[tokio::test]
async fn a_call_dropped_before_its_answer_is_recorded_cancelled() {
    let dir = dir();
    let path = dir.path().join("audit.jsonl");
    let audit = Audit::start(&config(&path), &[], Readiness::default()).unwrap();
    let input = JsonObject::new();
    let context = CallContext::new();
    let open = audit
        .begin(Entry {
            context: &context,
            kind: Kind::ResourceRead,
            source: "files",
            name: "file:///a",
            input: &input,
        })
        .await;
    drop(open);
    audit.finish(Duration::from_secs(5)).await;
    let records = lines(&path);
    assert_eq!(records[0]["outcome"], "cancelled");
    assert_eq!(records[0]["kind"], "resource_read");
    assert_eq!(records[0]["uri"], "file:///a");
    assert_eq!(records[0]["principal"], Value::Null);
    assert!(records[0].get("session").is_none());
}

#[cfg(unix)]
#[tokio::test]
async fn the_file_is_created_0600_and_rotated_at_max_bytes_keeping_keep() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = dir();
    let path = dir.path().join("audit.jsonl");
    let numbered = |n: usize| PathBuf::from(format!("{}.{n}", path.display()));
    let mut small = config(&path);
    small.max_bytes = 2_000;
    small.keep = 2;
    let audit = Audit::start(&small, &[], Readiness::default()).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let input = JsonObject::new();
    for n in 0..40 {
        call(&audit, &alice(), &format!("tool_{n:03}"), &input, "ok").await;
        // One at a time: the records are written batch by batch, in order.
        audit.finish(Duration::from_secs(5)).await;
    }
    let (now, one, two) = (lines(&path), lines(&numbered(1)), lines(&numbered(2)));
    assert!(!numbered(3).exists(), "keep = 2 keeps two rotated files");
    for file in [path.clone(), numbered(1), numbered(2)] {
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size <= 2_000, "{}: {size} bytes", file.display());
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    assert!(!one.is_empty() && !two.is_empty());
    // The newest records, in order, across the files: the oldest were rotated away.
    let tools: Vec<String> = two
        .iter()
        .chain(&one)
        .chain(&now)
        .map(|record| record["tool"].as_str().unwrap().to_owned())
        .collect();
    let last = tools.len();
    let expected: Vec<String> = (40 - last..40).map(|n| format!("tool_{n:03}")).collect();
    assert_eq!(tools, expected);
    assert!(last < 40, "the oldest were rotated away");
}

#[test]
fn a_file_that_cannot_be_opened_stops_the_start_naming_it() {
    let dir = dir();
    let not_a_directory = dir.path().join("plain");
    std::fs::write(&not_a_directory, "").unwrap();
    let path = not_a_directory.join("audit.jsonl");
    let error = Audit::start(&config(&path), &[], Readiness::default()).unwrap_err();
    assert!(error.contains(&path.display().to_string()), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_records_are_each_written_exactly_once() {
    let dir = dir();
    let path = dir.path().join("audit.jsonl");
    let mut small = config(&path);
    // Rotated along the way too: every file is read back.
    small.max_bytes = 64 * 1024;
    small.keep = 100;
    let audit = Audit::start(&small, &[], Readiness::default()).unwrap();
    let tasks: Vec<_> = (0..1_000)
        .map(|n| {
            let audit = audit.clone();
            tokio::spawn(async move {
                let who =
                    CallContext::new().with_extension(Principal::token(&format!("p{}", n % 7)));
                let input = object(json!({ "n": n }));
                tokio::task::yield_now().await;
                call(&audit, &who, &format!("tool_{n}"), &input, "ok").await;
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(audit.finish(Duration::from_secs(10)).await, 0);
    let mut seen = std::collections::BTreeMap::new();
    let mut files = vec![path.clone()];
    files.extend((1..=100).map(|n| PathBuf::from(format!("{}.{n}", path.display()))));
    for file in files.iter().filter(|file| file.exists()) {
        for record in lines(file) {
            let tool = record["tool"].as_str().unwrap().to_owned();
            let n: usize = tool.trim_start_matches("tool_").parse().unwrap();
            assert_eq!(record["principal"], format!("token:p{}", n % 7));
            *seen.entry(n).or_insert(0) += 1;
        }
    }
    assert_eq!(seen.len(), 1_000);
    assert!(seen.values().all(|count| *count == 1), "{seen:?}");
}

#[tokio::test]
async fn a_file_that_fails_while_serving_keeps_its_records_and_the_gateway_unready() {
    let dir = dir();
    let path = dir.path().join("audit.jsonl");
    let blocker = PathBuf::from(format!("{}.1", path.display()));
    let mut small = config(&path);
    // About 250 bytes a record: one rotation for the 30.
    small.max_bytes = 5_000;
    small.keep = 1;
    let readiness = Readiness::default();
    let audit = Audit::start(&small, &[], readiness.clone()).unwrap();
    // The rotated file's place is taken by a directory (with something in it): rotating fails,
    // whoever runs the test (root too).
    std::fs::create_dir(&blocker).unwrap();
    std::fs::write(blocker.join("in-the-way"), "").unwrap();
    let input = JsonObject::new();
    for n in 0..30 {
        call(&audit, &alice(), &format!("tool_{n:03}"), &input, "ok").await;
    }
    let mut unready = false;
    for _ in 0..200 {
        if readiness.get().audit.is_some() {
            unready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(unready, "the readiness does not say the audit fails");
    let problem = readiness.get().audit.unwrap();
    assert!(problem.contains(&path.display().to_string()), "{problem}");
    assert!(!readiness.get().ready());
    std::fs::remove_dir_all(&blocker).unwrap();
    // Tried again within a second or so: every record is written, once.
    assert_eq!(audit.finish(Duration::from_secs(5)).await, 0);
    assert!(readiness.get().audit.is_none());
    let tools: Vec<String> = lines(&blocker)
        .iter()
        .chain(&lines(&path))
        .map(|record| record["tool"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = (0..30).map(|n| format!("tool_{n:03}")).collect();
    assert_eq!(tools, expected);
}

#[tokio::test]
async fn a_call_still_running_when_the_gateway_stops_is_recorded_unfinished_once() {
    let dir = dir();
    let path = dir.path().join("audit.jsonl");
    let audit = Audit::start(&config(&path), &[], Readiness::default()).unwrap();
    let input = JsonObject::new();
    let context = alice();
    let running = audit
        .begin(Entry {
            context: &context,
            kind: Kind::PromptGet,
            source: "everything",
            name: "slow-prompt",
            input: &input,
        })
        .await;
    call(&audit, &context, "quick", &input, "ok").await;
    assert_eq!(audit.finish(Duration::from_millis(50)).await, 0);
    // It ends after: already recorded, it is not recorded again.
    running.end("ok");
    assert_eq!(audit.finish(Duration::from_secs(5)).await, 0);
    let records = lines(&path);
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0]["tool"], "quick");
    assert_eq!(records[1]["prompt"], "slow-prompt");
    assert_eq!(records[1]["outcome"], "unfinished");
}
