//! The hardened isolate and its pool: runs in `toolkit-code-worker` processes (a test peer of
//! toolkit-runtime-tests, which serves runs as any worker does and can be made to crash).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use toolkit_code::{
    CodeFailure, CodeRuntime, PoolOptions, RunLimits, RunOutput, ToolCall, WorkerIsolate,
    WorkerPool,
};

use crate::worker_program as worker;

fn limits(timeout: Duration) -> RunLimits {
    RunLimits {
        deadline: Instant::now() + timeout,
        max_result_length: 50_000,
        max_log_length: 50_000,
    }
}

/// `echo` gives its input back; `big` answers 4 MiB, `huge` 100 MB.
fn tools() -> ToolCall {
    Arc::new(|name: String, input: Value| {
        Box::pin(async move {
            match name.as_str() {
                "big" => Ok(Value::String("x".repeat(4 << 20))),
                "huge" => Ok(Value::String("x".repeat(100 << 20))),
                _ => Ok(input),
            }
        })
    })
}

fn names() -> Vec<String> {
    vec!["echo".to_owned(), "big".to_owned(), "huge".to_owned()]
}

/// The children of this process (nextest runs each test in a process of its own): pid and state.
fn children() -> Vec<(u32, char)> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1).and_then(|ppid| ppid.parse::<u32>().ok()) == Some(me) {
            let pid = entry.file_name().to_string_lossy().parse().unwrap_or(0);
            found.push((pid, fields[0].chars().next().unwrap_or('?')));
        }
    }
    found
}

fn resident_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

async fn settle(until: impl Fn() -> bool) {
    let started = Instant::now();
    while !until() && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `code` on `runtime` with the tools above and ten seconds.
async fn run_ten_seconds(runtime: &impl CodeRuntime, code: &str) -> Result<RunOutput, CodeFailure> {
    runtime
        .run(code, &names(), tools(), limits(Duration::from_secs(10)))
        .await
}

#[tokio::test]
async fn a_worker_runs_code_that_calls_the_host_s_tools() {
    let isolate = WorkerIsolate::new(worker());
    let output = run_ten_seconds(
        &isolate,
        "const a = await tools.echo({text: 'hi'}); console.log('done'); return a;",
    )
    .await
    .unwrap();
    assert_eq!(output.result, json!({ "text": "hi" }));
    assert_eq!(output.logs, ["done"]);
}

#[tokio::test]
async fn a_worker_gets_none_of_the_host_s_environment() {
    // `env` prints its environment and exits: with none, it prints nothing, and it ends
    // before it reads the run; with a variable given, it prints a line that is no JSON.
    assert!(std::env::var_os("PATH").is_some());
    let clean = WorkerIsolate::new("/usr/bin/env")
        .run("return 1;", &[], tools(), limits(Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(
        matches!(&clean, CodeFailure::Error { message, .. } if message.contains("ended before it read the run")),
        "{clean:?}"
    );
    let given = WorkerIsolate::new("/usr/bin/env")
        .env("GIVEN", "1")
        .run("return 1;", &[], tools(), limits(Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(
        matches!(&given, CodeFailure::Error { message, .. } if message.contains("unreadable")),
        "{given:?}"
    );
}

#[tokio::test]
async fn a_worker_named_without_a_path_is_found_on_the_host_s_path() {
    // `env` is found on the host's PATH, though the worker's environment has none.
    let failure = WorkerIsolate::new("env")
        .env("GIVEN", "1")
        .run("return 1;", &[], tools(), limits(Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(
        matches!(&failure, CodeFailure::Error { message, .. } if message.contains("unreadable")),
        "{failure:?}"
    );
}

#[tokio::test]
async fn a_worker_s_line_past_64_mib_kills_it_without_reading_the_rest() {
    let started = Instant::now();
    let failure = WorkerIsolate::new("/usr/bin/sh")
        .arg("-c")
        .arg("head -c 200000000 /dev/zero; sleep 30")
        .run("return 1;", &[], tools(), limits(Duration::from_secs(20)))
        .await
        .unwrap_err();
    assert!(
        matches!(&failure, CodeFailure::Error { message, .. } if message.contains("more than 67108864 bytes")),
        "{failure:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test]
async fn a_worker_that_stops_reading_cannot_hold_the_run_past_its_deadline() {
    // It asks for `big` (4 MiB, far more than a pipe holds) and never reads the answer: the
    // host's write blocks, in its own task, and the deadline still ends the run.
    let started = Instant::now();
    let failure = WorkerIsolate::new("/usr/bin/sh")
        .arg("-c")
        .arg(r#"echo '{"call":{"id":0,"name":"big","input":{}}}'; sleep 30"#)
        .run(
            "return 1;",
            &names(),
            tools(),
            limits(Duration::from_millis(500)),
        )
        .await
        .unwrap_err();
    assert_eq!(failure, CodeFailure::Timeout { logs: Vec::new() });
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_tool_result_past_the_cap_never_crosses_the_pipe() {
    let isolate = WorkerIsolate::new(worker()).max_tool_result_length(1 << 20);
    let code = "const codes = []; for (const name of ['big', 'huge']) { try { await tools[name](); } \
                catch (e) { codes.push(e.code); } } return codes;";
    let output = isolate
        .run(code, &names(), tools(), limits(Duration::from_secs(20)))
        .await
        .unwrap();
    assert_eq!(output.result, json!(["ResultTooLarge", "ResultTooLarge"]));
}

#[tokio::test]
async fn a_pool_starts_its_idle_workers_ahead_and_replaces_each_after_one_run() {
    let pool = WorkerPool::new(
        WorkerIsolate::new(worker()),
        PoolOptions::default().size(4).idle(3),
    );
    settle(|| pool.waiting() == 3).await;
    assert_eq!(pool.waiting(), 3);
    let before: Vec<u32> = children().into_iter().map(|(pid, _)| pid).collect();
    assert_eq!(before.len(), 3, "{before:?}");
    // A run sets a global; the next run, on another worker, does not see it.
    let first = run_ten_seconds(&pool, "globalThis.mark = 1; return 1;")
        .await
        .unwrap();
    assert_eq!(first.result, json!(1));
    let second = run_ten_seconds(&pool, "return typeof globalThis.mark;")
        .await
        .unwrap();
    assert_eq!(second.result, json!("undefined"));
    settle(|| pool.waiting() == 3 && children().len() == 3).await;
    let after: Vec<u32> = children().into_iter().map(|(pid, _)| pid).collect();
    assert_eq!(after.len(), 3, "{after:?}");
    // Two of the first three served a run each, and are gone.
    assert_eq!(before.iter().filter(|pid| after.contains(pid)).count(), 1);
}

#[tokio::test]
async fn a_waiting_worker_that_died_is_replaced_without_failing_the_next_run() {
    let pool = WorkerPool::new(
        WorkerIsolate::new(worker()),
        PoolOptions::default().size(3).idle(2),
    );
    settle(|| pool.waiting() == 2).await;
    for (pid, _) in children() {
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    }
    settle(|| children().iter().all(|(_, state)| *state == 'Z')).await;
    let output = run_ten_seconds(&pool, "return 7;").await.unwrap();
    assert_eq!(output.result, json!(7));
}

/// A worker can die after the pool checked it and before it read the run (a killed process
/// lingers a moment as a thread group that waiting does not see yet): the run goes to another
/// worker, since none of its code ran. The first worker started here says it is ready and ends
/// without reading; every later one is the real worker.
#[tokio::test]
async fn a_worker_that_ends_before_it_reads_the_run_hands_the_run_to_another() {
    let marker = std::env::temp_dir().join(format!("toolkit-untaken-{}", std::process::id()));
    let script = r#"if mkdir "$MARKER" 2>/dev/null; then echo '{"ready":{}}'; sleep 0.3; exit 0; fi; exec "$WORKER""#;
    let isolate = WorkerIsolate::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .env("PATH", "/usr/bin:/bin")
        .env("MARKER", &marker)
        .env("WORKER", worker());
    let pool = WorkerPool::new(isolate, PoolOptions::default().size(2).idle(1));
    settle(|| pool.waiting() == 1).await;
    let output = run_ten_seconds(&pool, "return 7;").await;
    let first_was_the_one_that_ends = marker.is_dir();
    let _ = std::fs::remove_dir(&marker);
    assert!(first_was_the_one_that_ends);
    assert_eq!(output.unwrap().result, json!(7));
}

#[tokio::test]
async fn a_pool_whose_workers_cannot_start_fails_the_run_as_a_code_error() {
    let pool = WorkerPool::new(
        WorkerIsolate::new("/nonexistent/worker"),
        PoolOptions::default(),
    );
    let failure = pool
        .run(
            "return 1;",
            &names(),
            tools(),
            limits(Duration::from_secs(5)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&failure, CodeFailure::Error { message, .. } if message.contains("could not start")),
        "{failure:?}"
    );
}

/// 1,000 runs, eight at a time: every twentieth spins until it is killed at its deadline, every
/// twentieth crashes its worker; every other run gets its own answer. No process is left a
/// zombie, no more than `size` live at once, and memory stays flat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_under_churn() {
    let options = PoolOptions::default().size(8).idle(4);
    let pool = WorkerPool::new(WorkerIsolate::new(worker()), options);
    let run = |n: usize| {
        let pool = pool.clone();
        async move {
            let (code, timeout) = match n % 20 {
                0 => ("while (true) {}".to_owned(), Duration::from_millis(300)),
                1 => (
                    "return 'CRASH_THE_WORKER';".to_owned(),
                    Duration::from_secs(20),
                ),
                _ => (
                    format!("return (await tools.echo({{ n: {n} }})).n;"),
                    Duration::from_secs(20),
                ),
            };
            let outcome = pool.run(&code, &names(), tools(), limits(timeout)).await;
            (n, outcome)
        }
    };
    let mut most_children = 0;
    let mut resident_at_100 = 0;
    let mut runs = futures_util::stream::iter(0..1000)
        .map(run)
        .buffer_unordered(8);
    let mut seen = 0;
    while let Some((n, outcome)) = runs.next().await {
        seen += 1;
        match n % 20 {
            0 => assert_eq!(
                outcome,
                Err(CodeFailure::Timeout { logs: Vec::new() }),
                "{n}"
            ),
            1 => assert!(
                matches!(&outcome, Err(CodeFailure::Error { message, .. }) if message.contains("ended without an answer")),
                "{n}: {outcome:?}"
            ),
            _ => assert_eq!(outcome.map(|o| o.result), Ok(json!(n)), "{n}"),
        }
        if seen % 50 == 0 {
            let live = children().iter().filter(|(_, s)| *s != 'Z').count();
            most_children = most_children.max(live);
        }
        if seen == 100 {
            resident_at_100 = resident_kib();
        }
    }
    assert_eq!(seen, 1000);
    assert!(
        most_children <= options.size,
        "{most_children} workers alive"
    );
    settle(|| children().iter().all(|(_, state)| *state != 'Z')).await;
    let states = children();
    assert!(states.iter().all(|(_, state)| *state != 'Z'), "{states:?}");
    assert!(states.len() <= options.size, "{states:?}");
    let grown = resident_kib().saturating_sub(resident_at_100);
    assert!(grown < 32 << 10, "memory grew by {grown} KiB over 900 runs");
}
