//! Code mode over the QuickJS isolate: what a run gives, and a security suite of attempts to get
//! out of it, each its own test. None may escape, hang past the timeout, or take the host down.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolkit_runtime::{
    Failure, FnSource, FnTool, Toolkit, ToolkitOptions, code::CodeMode, code::CodeModeOptions,
    code::QuickJs, code::declare_tools,
};

use crate::support::{Scripted, definition};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MOST_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// `slow` (waits 100 ms, counting how many wait at once) and `huge` (answers 100 MB).
fn local_tools() -> Toolkit {
    let source = FnSource::builder("local")
        .tool(FnTool::new("slow", |_: Nothing| async {
            let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
            MOST_IN_FLIGHT.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
            Ok(json!("slept"))
        }))
        .tool(FnTool::new("huge", |_: Nothing| async {
            Ok("x".repeat(100 << 20))
        }))
        .build()
        .unwrap();
    let definitions = source.definitions();
    Toolkit::from_source(Arc::new(source), definitions, &ToolkitOptions::default()).unwrap()
}

fn presented() -> (Arc<Scripted>, Toolkit) {
    let source = Scripted::new("s");
    let mut definitions = Scripted::definitions();
    definitions.push(definition("approve_me", json!({ "type": "object" })));
    let scripted = Toolkit::from_source(
        Arc::clone(&source) as _,
        definitions,
        &ToolkitOptions::default().needs_approval(|d| d.name() == "approve_me"),
    )
    .unwrap();
    (source, scripted.merge(&local_tools()).unwrap())
}

fn code_mode(timeout: Duration) -> (Arc<Scripted>, Toolkit) {
    let (source, presented) = presented();
    let options = CodeModeOptions::default().timeout(timeout);
    (
        source,
        CodeMode::toolkit(&presented, Arc::new(QuickJs::default()), &options),
    )
}

async fn run(code: &str) -> Result<Value, Failure> {
    let (_, toolkit) = code_mode(Duration::from_secs(5));
    toolkit.call("execute", json!({ "code": code })).await
}

async fn result(code: &str) -> Value {
    match run(code).await {
        Ok(output) => output["result"].clone(),
        Err(failure) => panic!("the run failed: {failure}"),
    }
}

async fn failure(code: &str) -> Failure {
    run(code).await.expect_err("the run should fail")
}

// What a run gives.

#[tokio::test]
async fn a_run_gives_its_result_and_logs() {
    let output = run("console.log('a', 1, {b: 2}); console.error('c'); return {n: 42};").await;
    assert_eq!(
        output,
        Ok(json!({ "result": { "n": 42 }, "logs": ["a 1 {\"b\":2}", "c"] }))
    );
}

#[tokio::test]
async fn a_run_that_returns_nothing_gives_null() {
    assert_eq!(result("const x = 1;").await, Value::Null);
}

#[tokio::test]
async fn code_calls_tools_with_checked_input_and_reads_their_results() {
    let (source, toolkit) = code_mode(Duration::from_secs(5));
    let output = toolkit
        .call(
            "execute",
            json!({ "code": "const a = await tools.echo({text: 'hi'}); const n = await tools.nothing(); return [a, n];" }),
        )
        .await;
    assert_eq!(output.unwrap()["result"], json!([{ "text": "hi" }, null]));
    assert_eq!(source.calls(), 2);
}

#[tokio::test]
async fn a_tool_failure_is_an_error_the_code_can_catch() {
    let caught = result(
        "try { await tools.fail({}); } catch (e) { return [e instanceof Error, e.message, e.code, e.retryable]; }",
    )
    .await;
    assert_eq!(
        caught,
        json!([true, "the tool said no", "CallFailedError", false])
    );
    let down = result("try { await tools.down({}); } catch (e) { return [e.code, e.retryable, e.message.includes('10.1.2.3')]; }").await;
    assert_eq!(down, json!(["UnavailableError", true, false]));
}

#[tokio::test]
async fn an_uncaught_throw_is_a_code_error_with_the_logs_so_far() {
    let failed = failure("console.log('before'); throw new TypeError('bad thing');").await;
    assert_eq!(failed.code, "CodeError");
    assert!(
        failed.message.contains("TypeError: bad thing"),
        "{}",
        failed.message
    );
    assert!(
        failed
            .message
            .ends_with("What the code logged before:\nbefore"),
        "{}",
        failed.message
    );
    let thrown = failure("throw {a: 1};").await;
    assert!(
        thrown.message.contains("Uncaught {\"a\":1}"),
        "{}",
        thrown.message
    );
}

#[tokio::test]
async fn typescript_is_refused_as_a_syntax_error() {
    let failed = failure("const x: number = 1; return x;").await;
    assert_eq!(failed.code, "CodeError");
    assert!(failed.message.contains("SyntaxError"), "{}", failed.message);
}

#[tokio::test]
async fn tool_calls_run_concurrently_under_promise_all() {
    MOST_IN_FLIGHT.store(0, Ordering::SeqCst);
    let started = Instant::now();
    let slept = result("return await Promise.all([1,2,3,4,5].map(() => tools.slow()));").await;
    assert_eq!(slept, json!(["slept", "slept", "slept", "slept", "slept"]));
    // The tools are the same `slow`; this run alone makes five at once.
    assert!(MOST_IN_FLIGHT.load(Ordering::SeqCst) >= 5);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_result_past_the_maximum_is_too_large() {
    let failed = failure("return 'x'.repeat(60000);").await;
    assert_eq!(failed.code, "ResultTooLarge");
    assert!(
        failed.message.contains("60002 characters"),
        "{}",
        failed.message
    );
}

#[tokio::test]
async fn the_result_cap_counts_characters_not_bytes() {
    // 30,002 characters of JSON, 60,002 bytes: under the 50,000-character cap.
    assert_eq!(
        result("return 'é'.repeat(30000);").await,
        json!("é".repeat(30000))
    );
    let failed = failure("return 'é'.repeat(50000);").await;
    assert_eq!(failed.code, "ResultTooLarge");
    assert!(
        failed.message.contains("50002 characters"),
        "{}",
        failed.message
    );
}

#[tokio::test]
async fn the_log_cap_counts_characters_not_bytes() {
    // 40,000 characters, 80,000 bytes: under the 50,000-character cap, kept whole.
    let output = run("console.log('é'.repeat(40000)); return 1;")
        .await
        .unwrap();
    assert_eq!(output["logs"], json!(["é".repeat(40000)]));
    let output = run("console.log('é'.repeat(60000)); return 1;")
        .await
        .unwrap();
    assert!(output["logs"][0].as_str().unwrap().contains("were dropped"));
}

#[tokio::test]
async fn a_run_past_the_timeout_is_a_timeout_counting_tool_calls() {
    let (_, toolkit) = code_mode(Duration::from_millis(300));
    let started = Instant::now();
    let failed = toolkit
        .call(
            "execute",
            json!({ "code": "console.log('waiting'); await tools.block({});" }),
        )
        .await
        .unwrap_err();
    assert_eq!(failed.code, "Timeout");
    assert!(failed.retryable);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn dropping_a_run_stops_its_tool_calls() {
    let (source, toolkit) = code_mode(Duration::from_secs(30));
    let run = toolkit.call("execute", json!({ "code": "await tools.block({});" }));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), run)
            .await
            .is_err()
    );
    // The isolate's thread sees the run dropped and drops the call: within a bound.
    let stopped = Instant::now();
    while !source.dropped.load(Ordering::SeqCst) {
        assert!(
            stopped.elapsed() < Duration::from_secs(2),
            "the tool call went on"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[test]
fn a_tool_that_needs_approval_stays_a_tool_of_its_own() {
    let (_, toolkit) = code_mode(Duration::from_secs(5));
    let names: Vec<_> = toolkit.tools().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["execute", "approve_me"]);
    assert!(!toolkit.get("execute").unwrap().approval().may_be_required());
    let description = toolkit
        .get("execute")
        .unwrap()
        .definition()
        .description
        .clone()
        .unwrap();
    assert!(description.contains("echo(input: Record<string, unknown>): Promise<unknown>;"));
    assert!(!description.contains("approve_me"));
    assert!(description.contains("not TypeScript"));
}

// The security suite.

#[tokio::test]
async fn escape_01_no_host_globals_exist() {
    let kinds = result(
        "return ['fetch','require','process','setTimeout','setInterval','WebAssembly','std','os','Deno','Bun','XMLHttpRequest','importScripts']\
           .map(n => typeof globalThis[n]);",
    )
    .await;
    assert!(
        kinds.as_array().unwrap().iter().all(|k| k == "undefined"),
        "{kinds}"
    );
}

#[tokio::test]
async fn escape_02_the_constructor_chain_reaches_only_the_isolate() {
    let globals = result(
        "const g = tools.echo.constructor.constructor('return globalThis')(); return typeof g.process + typeof g.require;",
    )
    .await;
    assert_eq!(globals, json!("undefinedundefined"));
}

#[tokio::test]
async fn escape_03_function_and_eval_see_the_same_isolate() {
    let seen = result("return [Function('return typeof fetch')(), eval('typeof require'), (0, eval)('typeof process')];").await;
    assert_eq!(seen, json!(["undefined", "undefined", "undefined"]));
}

#[tokio::test]
async fn escape_04_dynamic_import_is_refused() {
    let failed = failure("await import('fs');").await;
    assert_eq!(failed.code, "CodeError");
}

#[tokio::test]
async fn escape_05_static_import_is_refused() {
    let failed = failure("import fs from 'fs';").await;
    assert!(failed.message.contains("SyntaxError"), "{}", failed.message);
}

#[tokio::test]
async fn escape_06_prototype_pollution_never_reaches_a_tool_s_input() {
    let (source, toolkit) = code_mode(Duration::from_secs(5));
    let code = "Object.prototype.injected = 'x'; Array.prototype.more = 1; return await tools.echo({text: 'a'});";
    let output = toolkit
        .call("execute", json!({ "code": code }))
        .await
        .unwrap();
    assert_eq!(output["result"], json!({ "text": "a" }));
    assert_eq!(
        source.seen.lock().unwrap()[0].1,
        crate::support::object(json!({ "text": "a" }))
    );
}

#[tokio::test]
async fn escape_07_pollution_does_not_outlive_its_run() {
    let (_, toolkit) = code_mode(Duration::from_secs(5));
    toolkit
        .call("execute", json!({ "code": "Object.prototype.leak = 1;" }))
        .await
        .unwrap();
    let next = toolkit
        .call(
            "execute",
            json!({ "code": "return ({}).leak === undefined;" }),
        )
        .await;
    assert_eq!(next.unwrap()["result"], json!(true));
}

#[tokio::test]
async fn escape_08_tools_cannot_be_replaced() {
    let replaced = result(
        "'use strict'; let threw = false; try { tools.echo = () => 'fake'; } catch (e) { threw = true; } \
         return [threw, await tools.echo({text: 'real'})];",
    )
    .await;
    assert_eq!(replaced, json!([true, { "text": "real" }]));
}

#[tokio::test]
async fn escape_09_the_tools_global_cannot_be_reassigned() {
    let kept =
        result("try { globalThis.tools = {}; } catch (e) {} return typeof tools.echo;").await;
    assert_eq!(kept, json!("function"));
}

#[tokio::test]
async fn escape_10_a_tool_not_presented_cannot_be_called() {
    let failed = failure("return await tools.secret({});").await;
    assert!(failed.message.contains("TypeError"), "{}", failed.message);
}

#[tokio::test]
async fn escape_11_a_tool_needing_approval_cannot_be_called_by_index() {
    let failed = failure("return await tools['approve_me']({});").await;
    assert!(failed.message.contains("TypeError"), "{}", failed.message);
}

#[tokio::test]
async fn escape_12_nor_through_a_proxy() {
    let seen = result("const p = new Proxy(tools, {}); return typeof p.approve_me;").await;
    assert_eq!(seen, json!("undefined"));
}

#[tokio::test]
async fn escape_13_nor_through_reflect() {
    let seen = result(
        "return [Reflect.get(tools, 'approve_me'), Reflect.ownKeys(tools).includes('approve_me')];",
    )
    .await;
    assert_eq!(seen, json!([null, false]));
}

#[tokio::test]
async fn escape_14_nor_by_giving_another_name_to_a_tool_function() {
    let (source, toolkit) = code_mode(Duration::from_secs(5));
    let code = "const f = tools.echo; return await f.call({name: 'approve_me'}, {text: 'x'});";
    let output = toolkit
        .call("execute", json!({ "code": code }))
        .await
        .unwrap();
    assert_eq!(output["result"], json!({ "text": "x" }));
    assert_eq!(source.seen.lock().unwrap()[0].0, "echo");
}

#[tokio::test]
async fn escape_15_a_tool_s_input_must_be_json() {
    let failed = failure("const a = {}; a.self = a; await tools.echo(a);").await;
    assert!(failed.message.contains("TypeError"), "{}", failed.message);
    let invalid = result("try { await tools.slow({text: 5}); } catch (e) { return e.code; }").await;
    assert_eq!(invalid, json!("InvalidInputError"));
}

#[tokio::test]
async fn escape_16_a_memory_bomb_is_stopped() {
    let failed = failure("const a = []; while (true) a.push(new Array(1e6).fill(1));").await;
    assert_eq!(failed.code, "CodeError");
    assert!(
        failed.message.contains("out of memory"),
        "{}",
        failed.message
    );
}

#[tokio::test]
async fn escape_17_out_of_memory_can_be_caught() {
    let caught = result("try { 'x'.repeat(1e9); } catch (e) { return 'caught'; }").await;
    assert_eq!(caught, json!("caught"));
}

#[tokio::test]
async fn escape_18_a_huge_array_is_refused() {
    let failed = failure("const a = new Array(2 ** 31).fill(0); return a.length;").await;
    assert_eq!(failed.code, "CodeError");
}

#[tokio::test]
async fn escape_19_deep_recursion_is_a_catchable_error() {
    let caught =
        result("function f(n) { return f(n + 1) + 1; } try { f(0); } catch (e) { return e.name; }")
            .await;
    assert!(
        caught == json!("RangeError") || caught == json!("InternalError"),
        "{caught}"
    );
}

#[tokio::test]
async fn escape_20_an_endless_loop_times_out() {
    let (_, toolkit) = code_mode(Duration::from_millis(300));
    let started = Instant::now();
    let failed = toolkit
        .call("execute", json!({ "code": "while (true) {}" }))
        .await
        .unwrap_err();
    assert_eq!(failed.code, "Timeout");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn escape_21_a_loop_of_heavy_builtins_still_times_out_in_time() {
    let (_, toolkit) = code_mode(Duration::from_millis(300));
    let started = Instant::now();
    let code = "const big = new Array(2e5).fill('xxxxxxxx'); while (true) { JSON.stringify(big); big.slice().sort(); }";
    let failed = toolkit
        .call("execute", json!({ "code": code }))
        .await
        .unwrap_err();
    assert_eq!(failed.code, "Timeout");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn escape_22_an_endless_loop_that_catches_the_interrupt_still_stops() {
    let (_, toolkit) = code_mode(Duration::from_millis(300));
    let code = "while (true) { try { while (true) {} } catch (e) {} }";
    let failed = toolkit
        .call("execute", json!({ "code": code }))
        .await
        .unwrap_err();
    assert_eq!(failed.code, "Timeout");
}

#[tokio::test]
async fn escape_23_atomics_wait_cannot_block_the_isolate_forever() {
    let (_, toolkit) = code_mode(Duration::from_millis(300));
    let code = "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return 'woke';";
    let outcome = toolkit.call("execute", json!({ "code": code })).await;
    assert!(outcome.is_err(), "{outcome:?}");
}

#[tokio::test]
async fn escape_24_a_promise_that_never_settles_fails_at_once() {
    let started = Instant::now();
    let failed = failure("await new Promise(() => {});").await;
    assert_eq!(failed.code, "CodeError");
    assert!(failed.message.contains("never comes"), "{}", failed.message);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn escape_25_unawaited_tool_promises_do_not_hold_the_run() {
    let (source, toolkit) = code_mode(Duration::from_secs(5));
    let started = Instant::now();
    let output = toolkit
        .call("execute", json!({ "code": "tools.block({}); return 1;" }))
        .await;
    assert_eq!(output.unwrap()["result"], json!(1));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        source.dropped.load(Ordering::SeqCst),
        "the abandoned call went on"
    );
}

#[tokio::test]
async fn escape_26_a_100_megabyte_tool_result_is_an_error_in_code() {
    let caught = result("try { await tools.huge(); } catch (e) { return e.code; }").await;
    assert_eq!(caught, json!("ResultTooLarge"));
}

#[tokio::test]
async fn escape_27_100_megabytes_of_logs_are_cut() {
    let output = run("for (let i = 0; i < 100; i++) console.log('x'.repeat(1e6)); return 'done';")
        .await
        .unwrap();
    assert_eq!(output["result"], json!("done"));
    let logs = output["logs"].as_array().unwrap();
    let total: usize = logs.iter().map(|l| l.as_str().unwrap().len()).sum();
    assert!(total < 2_100_000, "{total} characters of logs kept");
    assert!(
        logs.last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("were dropped")
    );
}

#[tokio::test]
async fn escape_28_a_result_with_no_json_form_is_a_code_error() {
    let failed = failure("return 10n;").await;
    assert!(failed.message.contains("not JSON"), "{}", failed.message);
    let cyclic = failure("const a = {}; a.a = a; return a;").await;
    assert!(cyclic.message.contains("not JSON"), "{}", cyclic.message);
}

#[tokio::test]
async fn escape_29_a_huge_error_message_is_cut() {
    let failed = failure("throw new Error('e'.repeat(1e7));").await;
    assert!(
        failed.message.len() < 5_000,
        "{} bytes",
        failed.message.len()
    );
}

#[tokio::test]
async fn escape_30_getters_on_the_result_run_in_the_isolate_only() {
    let output = result("return { get secret() { return typeof process; } };").await;
    assert_eq!(output, json!({ "secret": "undefined" }));
}

#[tokio::test]
async fn escape_31_symbols_and_functions_in_results_are_dropped_as_json_drops_them() {
    let output = result("return { f() {}, s: Symbol('x'), u: undefined, n: 1 };").await;
    assert_eq!(output, json!({ "n": 1 }));
}

#[tokio::test]
async fn escape_32_runs_do_not_share_globals() {
    let (_, toolkit) = code_mode(Duration::from_secs(5));
    toolkit
        .call("execute", json!({ "code": "globalThis.kept = 1;" }))
        .await
        .unwrap();
    let next = toolkit
        .call("execute", json!({ "code": "return typeof kept;" }))
        .await
        .unwrap();
    assert_eq!(next["result"], json!("undefined"));
}

#[tokio::test]
async fn escape_33_memory_stays_flat_over_a_thousand_runs() {
    fn resident_kib() -> usize {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let (_, toolkit) = code_mode(Duration::from_secs(5));
    let code = json!({ "code": "const a = new Array(1e4).fill('x'); return (await tools.echo({n: a.length})).n;" });
    for _ in 0..100 {
        toolkit.call("execute", code.clone()).await.unwrap();
    }
    let before = resident_kib();
    for _ in 0..1_000 {
        assert_eq!(
            toolkit.call("execute", code.clone()).await.unwrap()["result"],
            json!(10_000)
        );
    }
    let grown = resident_kib().saturating_sub(before);
    assert!(
        grown < 32 * 1024,
        "memory grew by {grown} KiB over 1,000 runs"
    );
}

// The declarations the model reads.

#[test]
fn declarations_say_shapes_required_enums_and_descriptions() {
    let schema = json!({
        "type": "object",
        "properties": {
            "owner": { "type": "string", "description": "Who owns it. Never */ closes early." },
            "state": { "enum": ["open", "closed"] },
            "labels": { "type": "array", "items": { "type": ["string", "number"] } },
            "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }] },
            "note": { "type": ["string", "null"] },
            "kind": { "const": "issue" },
            "with-dash": { "type": "boolean" },
            "node": { "$ref": "#/$defs/Node" },
            "deep": { "type": "object", "properties": { "a": { "type": "object", "properties": { "b": { "type": "object", "properties": { "c": { "type": "object", "properties": { "d": { "type": "object", "properties": { "e": { "type": "string" } } } } } } } } } } }
        },
        "required": ["owner"],
        "additionalProperties": false,
        "$defs": {
            "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" }, "value": { "type": "integer" } } }
        }
    });
    let toolkit = Toolkit::from_source(
        Scripted::new("s") as _,
        [definition("create_issue", schema).with_description("Opens an issue.")],
        &ToolkitOptions::default(),
    )
    .unwrap();
    let declared = declare_tools(toolkit.tools());
    let expected = r#"declare const tools: {
  /** Opens an issue. */
  create_issue(input: {
    /** Who owns it. Never *\/ closes early. */
    owner: string;
    state?: "open" | "closed";
    labels?: (string | number)[];
    pair?: [string, number];
    note?: string | null;
    kind?: "issue";
    "with-dash"?: boolean;
    node?: {
      next?: unknown;
      value?: number;
    };
    deep?: {
      a?: {
        b?: {
          c?: {
            d?: {
              e?: unknown;
            };
          };
        };
      };
    };
  }): Promise<unknown>;
};"#;
    assert_eq!(declared, expected);
}
