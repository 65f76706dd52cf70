//! Many tools presented as two (the `tool-search` tests of seed 000).

use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_runtime::{
    Assembly, CallContext, Decision, Member, Toolkit, ToolkitOptions, approval::ApprovalRequest,
    approval::Verdict, model, search::MAX_QUERY_CHARS, search::Ranking, search::SearchIndex,
    search::SearchOptions, search::ToolSearch,
};

use crate::support::{Scripted, definition, object};

fn tool(name: &str, description: &str) -> toolkit_runtime::ToolDefinition {
    definition(
        name,
        json!({ "type": "object", "properties": { "text": { "type": "string" } } }),
    )
    .with_description(description)
}

fn catalog() -> Vec<toolkit_runtime::ToolDefinition> {
    vec![
        tool("create_issue", "Opens an issue in a repository."),
        tool("list-pulls", "Lists the pull requests of a repository."),
        tool("getWeather", "Tells the weather for a city."),
        tool("echo", "Says the text back."),
        tool("fail", "Always fails."),
        tool("down", "Is never up."),
        tool("block", "Never answers."),
    ]
}

fn presented(approve: &[&str]) -> (Arc<Scripted>, Toolkit) {
    let source = Scripted::new("s");
    let approve: Vec<String> = approve.iter().map(|s| (*s).to_owned()).collect();
    let toolkit = Toolkit::from_source(
        Arc::clone(&source) as _,
        catalog(),
        &ToolkitOptions::default().needs_approval(move |d| approve.iter().any(|a| a == d.name())),
    )
    .unwrap();
    (source, toolkit)
}

async fn search(toolkit: &Toolkit, input: Value) -> Value {
    toolkit.call("tool_search", input).await.unwrap()
}

fn names(found: &Value) -> Vec<&str> {
    found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_search_returns_name_description_and_input_schema_with_counts() {
    let (_, presented) = presented(&[]);
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    let found = search(&toolkit, json!({ "query": "weather" })).await;
    assert_eq!(
        found,
        json!({
            "tools": [{
                "name": "getWeather",
                "description": "Tells the weather for a city.",
                "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } }
            }],
            "matched": 1,
            "available": 7
        })
    );
}

#[tokio::test]
async fn names_read_in_words_and_a_word_that_begins_a_name_word_scores() {
    let (_, presented) = presented(&[]);
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    assert_eq!(
        names(&search(&toolkit, json!({ "query": "create" })).await),
        ["create_issue"]
    );
    assert_eq!(
        names(&search(&toolkit, json!({ "query": "pulls" })).await),
        ["list-pulls"]
    );
    assert_eq!(
        names(&search(&toolkit, json!({ "query": "weath" })).await),
        ["getWeather"]
    );
    // Stemming: "issues" finds the tool named for one.
    assert_eq!(
        names(&search(&toolkit, json!({ "query": "issues" })).await),
        ["create_issue"]
    );
}

#[tokio::test]
async fn the_name_counts_more_than_the_description() {
    let (_, presented) = presented(&[]);
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    // "repository" is in two descriptions; "pulls" in one name.
    let found = search(&toolkit, json!({ "query": "pull repository" })).await;
    assert_eq!(names(&found), ["list-pulls", "create_issue"]);
}

#[tokio::test]
async fn a_tool_that_scores_nothing_does_not_match() {
    let (_, presented) = presented(&[]);
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    let found = search(&toolkit, json!({ "query": "zebra" })).await;
    assert_eq!(found["matched"], 0);
    assert_eq!(found["tools"], json!([]));
}

#[tokio::test]
async fn a_query_is_read_up_to_its_cap_and_tool_search_refuses_a_longer_one() {
    let (_, presented) = presented(&[]);
    // The index reads the first MAX_QUERY_CHARS characters: a word within them matches, the
    // same word past them is not read (multi-byte filler, so that the cut is at a character).
    let index = SearchIndex::new(presented.definitions());
    let filler = "é ".repeat(MAX_QUERY_CHARS / 2);
    let within = format!("{}weather", &filler[..filler.len() - "é ".len() * 4]);
    assert_eq!(within.chars().count(), MAX_QUERY_CHARS - 8 + 7);
    assert_eq!(index.search(&within, 5).matched, 1);
    let past = format!("{filler}weather");
    assert_eq!(index.search(&past, 5).matched, 0);
    // The tool refuses it outright, naming the limit, and reads one at the limit.
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    let refused = toolkit
        .call("tool_search", json!({ "query": past }))
        .await
        .unwrap_err();
    assert_eq!(refused.code, "InvalidInputError");
    assert!(refused.message.contains("1024"), "{}", refused.message);
    let at_limit = format!("{}weather", "x ".repeat((MAX_QUERY_CHARS - 7) / 2));
    assert!(at_limit.chars().count() <= MAX_QUERY_CHARS);
    assert_eq!(
        search(&toolkit, json!({ "query": at_limit })).await["matched"],
        1
    );
}

#[tokio::test]
async fn a_query_with_no_words_lists_the_tools_in_order_up_to_the_limit() {
    let (_, presented) = presented(&[]);
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    let found = search(&toolkit, json!({ "query": " ?! " })).await;
    assert_eq!(
        names(&found),
        ["create_issue", "list-pulls", "getWeather", "echo", "fail"]
    );
    assert_eq!(
        (found["matched"].clone(), found["available"].clone()),
        (json!(7), json!(7))
    );
    let two = search(&toolkit, json!({ "query": "", "limit": 2 })).await;
    assert_eq!(names(&two), ["create_issue", "list-pulls"]);
}

#[tokio::test]
async fn the_limit_defaults_to_the_option_and_is_at_most_twenty() {
    let many: Vec<_> = (0..30)
        .map(|i| tool(&format!("tool_{i}"), "A tool."))
        .collect();
    let presented =
        Toolkit::from_source(Scripted::new("s") as _, many, &ToolkitOptions::default()).unwrap();
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default().limit(3));
    let found = search(&toolkit, json!({ "query": "tool" })).await;
    assert_eq!(names(&found).len(), 3);
    assert_eq!(found["matched"], 30);
    let refused = toolkit
        .call("tool_search", json!({ "query": "tool", "limit": 21 }))
        .await;
    assert_eq!(refused.unwrap_err().code, "InvalidInputError");
    let twenty = search(&toolkit, json!({ "query": "tool", "limit": 20 })).await;
    assert_eq!(names(&twenty).len(), 20);
}

#[tokio::test]
async fn tool_call_runs_a_tool_as_a_direct_call_does() {
    let (source, presented) = presented(&[]);
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    let echoed = toolkit
        .call(
            "tool_call",
            json!({ "name": "echo", "input": { "text": "hi" } }),
        )
        .await;
    assert_eq!(echoed, Ok(json!({ "text": "hi" })));
    let failed = toolkit
        .call("tool_call", json!({ "name": "fail", "input": {} }))
        .await;
    assert_eq!(failed.unwrap_err().message, "the tool said no");
    let invalid = toolkit
        .call(
            "tool_call",
            json!({ "name": "echo", "input": { "text": 1 } }),
        )
        .await;
    assert_eq!(invalid.unwrap_err().code, "InvalidInputError");
    let missing = toolkit
        .call("tool_call", json!({ "name": "nope", "input": {} }))
        .await;
    assert_eq!(missing.unwrap_err().code, "NotFoundError");
    assert_eq!(source.calls(), 2);
}

#[tokio::test]
async fn a_blocked_tool_can_be_neither_found_nor_called() {
    let source = Scripted::new("s");
    let assembled = Assembly::new()
        .toolkit(
            &[Member::new(Arc::clone(&source) as _, catalog())],
            |_, d| {
                if d.name() == "getWeather" {
                    Decision::Block
                } else {
                    Decision::Allow
                }
            },
        )
        .unwrap();
    let toolkit = ToolSearch::toolkit(&assembled, &SearchOptions::default());
    let found = search(&toolkit, json!({ "query": "weather" })).await;
    assert_eq!(found["matched"], 0);
    assert_eq!(found["available"], 6);
    let called = toolkit
        .call("tool_call", json!({ "name": "s__getWeather", "input": {} }))
        .await;
    assert_eq!(called.unwrap_err().code, "NotFoundError");
    assert_eq!(source.calls(), 0);
}

#[tokio::test]
async fn approval_is_the_called_tool_s_own() {
    let (_, presented) = presented(&["fail"]);
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    let call = toolkit.get("tool_call").unwrap();
    assert!(
        call.approval()
            .is_required(&object(json!({ "name": "fail", "input": {} })))
    );
    assert!(
        !call
            .approval()
            .is_required(&object(json!({ "name": "echo", "input": {} })))
    );
    let search = toolkit.get("tool_search").unwrap();
    assert!(!search.approval().may_be_required());
    // Through a model's call: declined means nothing ran.
    let answer = toolkit
        .answer(
            "tool_call",
            r#"{"name":"fail","input":{}}"#,
            &CallContext::new()
                .approver(|_: ApprovalRequest| async { Verdict::Decline { reason: None } }),
        )
        .await;
    assert!(answer.content.contains("ApprovalDeclined"));
}

#[test]
fn neither_tool_is_sent_in_strict_mode() {
    let (_, presented) = presented(&[]);
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    for tool in model::openai_tools(&toolkit) {
        assert_eq!(tool["function"]["strict"], false);
    }
}

#[test]
fn the_seed_s_plain_ranking_keeps_its_rules() {
    let definitions = catalog();
    let index = SearchIndex::with_ranking(&definitions, Ranking::Words);
    assert_eq!(index.search("weather", 5).tools, [2]);
    assert_eq!(index.search("repo", 5).tools, [0, 1]);
    assert_eq!(index.search("zebra", 5).matched, 0);
    assert_eq!(index.search("", 3).tools, [0, 1, 2]);
}

#[test]
fn parameters_and_the_source_are_searched_too() {
    let schema = json!({
        "type": "object",
        "properties": { "zip_code": { "type": "string", "description": "A postal code." } }
    });
    let definitions = vec![
        definition("shipping__quote", schema),
        definition("weather__now", json!({ "type": "object" })),
    ];
    let index = SearchIndex::new(&definitions);
    assert_eq!(index.search("postal", 5).tools, [0]);
    assert_eq!(index.search("zip", 5).tools, [0]);
    assert_eq!(index.search("weather", 5).tools, [1]);
}
