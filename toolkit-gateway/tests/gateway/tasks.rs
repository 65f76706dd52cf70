//! Tasks through the gateway (MCP 2025-11-25): `toolkit-gateway --config` in front of a
//! TypeScript SDK task server (`ts_task_peer.cjs` of toolkit-mcp's tests, source `tasks`) and npm
//! `@modelcontextprotocol/server-everything` (source `everything`, whose
//! `simulate-research-query` runs only as a task), read by the TypeScript SDK's client with its
//! task API (`task_client.cjs`). A client that declares tasks sees the tools' `execution`, calls
//! them as tasks, and its `tasks/get`, `tasks/list`, `tasks/cancel` and `tasks/result` reach the
//! source that owns the task, under ids served as `source/id`; a client that does not declare
//! them is served the task tools as plain tools. The same over Streamable HTTP (sessions), where
//! a second session can neither see, get, read, cancel nor list the first one's tasks.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::peer;

/// The gateway's configuration file, in a folder of this test's own (`name`), serving over
/// Streamable HTTP on `http` (a port) or else over stdio.
fn config(name: &str, http: Option<u16>) -> String {
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolkit-mcp/tests/mcp/ts_task_peer.cjs"
    );
    let everything =
        peer("mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let serve = http.map_or_else(String::new, |port| {
        format!("[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n\n")
    });
    let config = format!(
        "{serve}[catalog]\nfile = \"{}\"\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n\n\
         [[sources]]\nname = \"tasks\"\ncommand = [\"node\", \"{server}\"]\nenv = {{ NODE_PATH = \"TASKS_NODE_PATH\" }}\n\n\
         [[sources]]\nname = \"everything\"\ncommand = [\"node\", \"{everything}\", \"stdio\"]\n",
        dir.join("catalog.json").display()
    );
    std::fs::write(dir.join("toolkit.toml"), config).unwrap();
    dir.join("toolkit.toml").to_string_lossy().into_owned()
}

/// A gateway process, killed when dropped.
struct Gateway(std::process::Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the SDK's client saw through the gateway, declaring tasks (`tasks`) or not, over
/// Streamable HTTP (`http`) or stdio.
fn seen(tasks: bool, http: bool) -> Value {
    let name = match (tasks, http) {
        (true, false) => "tasks",
        (false, false) => "plain-tasks",
        (true, true) => "http-tasks",
        (false, true) => "http-plain-tasks",
    };
    let port = http.then(crate::support::free_port);
    let config = config(name, port);
    let mut client = Command::new("node");
    client
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/gateway/task_client.cjs"
        ))
        .env("NODE_PATH", peer("mcp-npm/node_modules"))
        .env("TASKS", if tasks { "1" } else { "0" });
    let _gateway = match port {
        Some(port) => {
            let gateway = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
                .args(["--config", &config])
                .env("TASKS_NODE_PATH", peer("mcp-npm/node_modules"))
                .stdin(std::process::Stdio::null())
                .spawn()
                .unwrap();
            client.env("MCP_URL", format!("http://127.0.0.1:{port}/mcp"));
            Some(Gateway(gateway))
        }
        None => {
            client
                .args([env!("CARGO_BIN_EXE_toolkit-gateway"), "--config", &config])
                .env("TASKS_NODE_PATH", peer("mcp-npm/node_modules"));
            None
        }
    };
    let output = client.output().unwrap();
    let seen: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&output.stdout).into_owned()));
    assert!(
        seen.is_object() && seen.get("error").is_none(),
        "{seen}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    seen
}

#[test]
fn a_client_that_speaks_tasks_drives_the_sources_tasks_through_the_gateway() {
    drives_tasks(&seen(true, false));
}

/// Over HTTP, too; and a second session can neither see, get, read, cancel nor list the first
/// one's tasks (one gateway for both: its sources are slow to start).
#[test]
fn a_client_over_http_drives_its_own_tasks_and_no_other_sessions() {
    let seen = seen(true, true);
    drives_tasks(&seen);
    let other = &seen["other"];
    for refused in ["got", "result", "cancelled"] {
        assert_eq!(other[refused]["code"], -32602, "{refused}: {other}");
    }
    // Refused as an unknown id is.
    assert_eq!(
        other["got"]["message"]
            .as_str()
            .unwrap()
            .replace(other["kept"].as_str().unwrap(), "tasks/no-such-task"),
        seen["unknown"]["message"].as_str().unwrap(),
        "{other}"
    );
    assert_eq!(other["keptAfter"], "working", "{other}");
    assert_eq!(other["listed"], json!([other["own"]]), "{other}");
    let first = other["firstListed"].as_array().unwrap();
    assert!(first.contains(&other["kept"]), "{other}");
    assert!(!first.contains(&other["own"]), "{other}");
    // Told its own task's statuses, and only those; the first session none of them.
    let slow = &other["slow"]["taskId"];
    assert_eq!(other["told"], true, "{other}");
    let told = other["statuses"].as_array().unwrap();
    assert!(
        told.iter()
            .all(|status| &status["taskId"] == slow || status["taskId"] == other["own"]),
        "{other}"
    );
    let first = seen["statuses"].as_array().unwrap();
    assert!(
        first.iter().all(|status| &status["taskId"] != slow),
        "{first:?}"
    );
}

/// What a client that speaks tasks saw: the task tools listed with their `execution`, tasks made,
/// polled, listed, cancelled and read through the gateway, unknown ids refused.
fn drives_tasks(seen: &Value) {
    assert_eq!(
        seen["capabilities"]["tasks"]["requests"]["tools"]["call"],
        json!({})
    );
    assert_eq!(
        seen["tools"]["tasks__slow"],
        json!({"taskSupport": "required"})
    );
    assert_eq!(
        seen["tools"]["tasks__optional"],
        json!({"taskSupport": "optional"})
    );
    assert_eq!(
        seen["tools"]["everything__simulate-research-query"]["taskSupport"],
        "required"
    );
    assert_eq!(seen["tools"]["tasks__record"], Value::Null);

    // Made as a task, polled by the client, its result read from the source that owns it.
    let slow = &seen["slow"];
    assert_eq!(slow["types"][0], "taskCreated", "{slow}");
    assert_eq!(slow["types"].as_array().unwrap().last().unwrap(), "result");
    assert!(
        slow["taskId"].as_str().unwrap().starts_with("tasks/"),
        "{slow}"
    );
    assert_eq!(
        slow["result"]["content"],
        json!([{"type": "text", "text": "researched tides"}])
    );
    let research = &seen["research"];
    assert!(
        research["taskId"]
            .as_str()
            .unwrap()
            .starts_with("everything/"),
        "{research}"
    );
    assert!(
        research["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("# Research Report: python"),
        "{research}"
    );

    // A task that never ends: seen working, listed, cancelled at its source.
    let never = &seen["never"];
    let id = never["created"]["taskId"].as_str().unwrap();
    assert!(id.starts_with("tasks/"), "{never}");
    assert_eq!(never["got"]["taskId"], id);
    assert_eq!(never["got"]["status"], "working");
    let listed = never["listed"].as_array().unwrap();
    assert!(listed.contains(&json!(id)), "{never}");
    assert!(listed.contains(&slow["taskId"]), "{never}");
    assert!(
        listed
            .iter()
            .all(|listed| listed.as_str().unwrap().starts_with("tasks/")
                || listed.as_str().unwrap().starts_with("everything/"))
    );
    assert_eq!(never["after"]["status"], "cancelled");
    let record = &seen["record"];
    assert!(
        record["cancelled"]
            .as_array()
            .unwrap()
            .contains(&seen["upstreamId"]),
        "{record}"
    );
    assert!(
        record["created"]
            .as_array()
            .unwrap()
            .iter()
            .any(|task| task["tool"] == "slow" && task["asTask"] == true)
    );

    // The statuses the sources told, to this client, of its tasks, under their served ids:
    // server-everything's research task as it moved on.
    let statuses = seen["statuses"].as_array().unwrap();
    assert!(
        statuses
            .iter()
            .any(|status| status["taskId"] == research["taskId"] && status["status"] == "working"),
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|status| {
            let id = status["taskId"].as_str().unwrap();
            id.starts_with("tasks/") || id.starts_with("everything/")
        }),
        "{statuses:?}"
    );

    // Ids the gateway did not hand out, or of another source, are refused.
    for refused in ["unknown", "bare", "withoutNonce", "elsewhere"] {
        assert_eq!(
            seen[refused]["code"], -32602,
            "{refused}: {}",
            seen[refused]
        );
    }
}

#[test]
fn a_client_that_does_not_declare_tasks_is_served_task_tools_as_plain_tools() {
    for http in [false, true] {
        plain(&seen(false, http));
    }
}

/// What a client that does not declare tasks saw: no `tasks` capability, task tools as plain.
fn plain(seen: &Value) {
    assert!(seen["capabilities"].get("tasks").is_none(), "{seen}");
    assert_eq!(seen["tools"]["tasks__slow"], Value::Null);
    assert_eq!(
        seen["plain"]["content"],
        json!([{"type": "text", "text": "researched tides"}])
    );
}
