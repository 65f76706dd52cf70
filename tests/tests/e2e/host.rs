//! A host's flow: discover, store the catalog as a file, read it back later, assemble, call.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolkit_runtime::{
    Assembly, CallContext, Decision, FnSource, FnTool, Member, ToolSource,
    approval::ApprovalRequest, approval::Verdict, definition::decode_catalog,
    definition::encode_catalog,
};

/// Looks a word up.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Lookup {
    /// The word.
    word: String,
}

fn dictionary() -> FnSource {
    FnSource::builder("dictionary")
        .tool(
            FnTool::new("lookup", |input: Lookup| async move {
                Ok(json!({ "word": input.word, "meaning": "a unit of language" }))
            })
            .read_only(),
        )
        .tool(FnTool::new("forget", |_: Lookup| async { Ok(json!(null)) }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_catalog_stored_as_a_file_builds_the_same_toolkit_in_a_later_turn() {
    // Refresh: ask the source, store what it has.
    let source = Arc::new(dictionary());
    let discovered = source.discover().await.unwrap();
    let file =
        std::env::temp_dir().join(format!("toolkit-e2e-catalog-{}.json", std::process::id()));
    std::fs::write(&file, encode_catalog(&discovered)).unwrap();

    // A later turn: read the catalog, assemble under the stored policy, let the model call.
    let stored = decode_catalog(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(stored, discovered);
    let policy: std::collections::HashMap<String, Decision> =
        serde_json::from_value(json!({ "lookup": "allow", "forget": "block" })).unwrap();
    let toolkit = Assembly::new()
        .toolkit(&[Member::new(source, stored)], |_, definition| {
            policy
                .get(definition.name())
                .copied()
                .unwrap_or(Decision::Block)
        })
        .unwrap();
    assert_eq!(toolkit.len(), 1);
    // The person would decline anything they are asked about: an allowed tool asks no one.
    let declining =
        CallContext::new().approver(|_: ApprovalRequest| async { Verdict::decline("no") });
    let answer = toolkit
        .answer("dictionary__lookup", r#"{"word":"tool"}"#, &declining)
        .await;
    assert!(!answer.is_error, "{}", answer.content);
    assert!(answer.content.contains("a unit of language"));
    let approving = CallContext::new().approver(|_: ApprovalRequest| async { Verdict::Approve });
    let blocked = toolkit
        .answer("dictionary__forget", r#"{"word":"tool"}"#, &approving)
        .await;
    assert!(blocked.is_error && blocked.content.contains("NotFoundError"));
}
