//! Toolkits made of toolkits (the `presentation` tests of seed 000).

use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::{Toolkit, ToolkitOptions};

use crate::support::Scripted;

fn toolkit(name: &str) -> (Arc<Scripted>, Toolkit) {
    let source = Scripted::new(name);
    let toolkit = Toolkit::from_source(
        Arc::clone(&source) as _,
        Scripted::definitions(),
        &ToolkitOptions::default().needs_approval(|d| d.name() == "fail"),
    )
    .unwrap();
    (source, toolkit)
}

#[tokio::test]
async fn a_restricted_toolkit_runs_its_tools_as_the_first_does() {
    let (source, full) = toolkit("s");
    let some = full.restrict(|tool| ["echo", "nothing", "fail"].contains(&tool.name()));
    assert_eq!(some.len(), 3);
    assert_eq!(
        some.call("echo", json!({ "a": 1 })).await,
        Ok(json!({ "a": 1 }))
    );
    assert_eq!(some.call("nothing", json!({})).await, Ok(Value::Null));
    assert_eq!(
        some.call("down", json!({})).await.unwrap_err().code,
        "NotFoundError"
    );
    assert!(some.get("fail").unwrap().approval().may_be_required());
    assert_eq!(source.calls(), 2);
}

#[tokio::test]
async fn a_merged_toolkit_has_both_in_order() {
    let (_, first) = toolkit("a");
    let (_, second) = toolkit("b");
    let first = first.restrict(|tool| tool.name() == "echo");
    let second = second.restrict(|tool| tool.name() == "nothing");
    let both = first.merge(&second).unwrap();
    let names: Vec<_> = both.tools().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["echo", "nothing"]);
    assert_eq!(both.call("nothing", json!({})).await, Ok(Value::Null));
}

#[test]
fn merging_tools_of_one_name_fails() {
    let (_, first) = toolkit("a");
    let (_, second) = toolkit("b");
    assert_eq!(first.merge(&second).unwrap_err().name, "echo");
}
