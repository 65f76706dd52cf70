//! One toolkit from many sources under a policy (the `assembly` tests of seed 000).

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;
use toolkit_core::naming::tool_name;
use toolkit_core::{Assembly, Decision, Member, assembly::AssemblyError, assembly::QualifiedName};

use crate::support::{Scripted, any_object, definition};

fn member(source: &Arc<Scripted>, tools: &[&str]) -> Member {
    let definitions = tools
        .iter()
        .map(|name| definition(name, any_object()))
        .collect();
    Member::new(Arc::clone(source) as _, definitions)
}

fn allow(_: &str, _: &toolkit_core::ToolDefinition) -> Decision {
    Decision::Allow
}

#[test]
fn tools_are_named_source_and_tool_in_member_order() {
    let github = Scripted::new("github");
    let linear = Scripted::new("linear.app");
    let toolkit = Assembly::new()
        .toolkit(
            &[
                member(&github, &["create_issue", "echo"]),
                member(&linear, &["echo"]),
            ],
            allow,
        )
        .unwrap();
    let names: Vec<_> = toolkit.definitions().map(|d| d.name().to_owned()).collect();
    assert_eq!(
        names,
        ["github__create_issue", "github__echo", "linear_app__echo"]
    );
}

#[test]
fn building_contacts_no_source() {
    let a = Scripted::new("a");
    let b = Scripted::new("b");
    Assembly::new()
        .toolkit(&[member(&a, &["echo"]), member(&b, &["echo"])], allow)
        .unwrap();
    assert_eq!(a.contacts() + b.contacts(), 0);
}

#[tokio::test]
async fn a_call_reaches_the_owning_source_by_the_name_it_knows() {
    let a = Scripted::new("a");
    let b = Scripted::new("b");
    let toolkit = Assembly::new()
        .toolkit(&[member(&a, &["echo"]), member(&b, &["echo"])], allow)
        .unwrap();
    assert_eq!(
        toolkit.call("b__echo", json!({ "x": 1 })).await,
        Ok(json!({ "x": 1 }))
    );
    assert_eq!(a.calls(), 0);
    let seen = b.seen.lock().unwrap();
    assert_eq!(seen[0].0, "echo");
}

#[tokio::test]
async fn failures_through_an_assembly_are_results_naming_no_address() {
    let a = Scripted::new("a");
    let toolkit = Assembly::new()
        .toolkit(&[member(&a, &["down", "fail"])], allow)
        .unwrap();
    let down = toolkit.call("a__down", json!({})).await.unwrap_err();
    assert!(down.retryable && !down.message.contains("10.1.2.3"));
    let fail = toolkit.call("a__fail", json!({})).await.unwrap_err();
    assert_eq!(fail.message, "the tool said no");
}

#[test]
fn the_policy_blocks_approves_and_allows() {
    let s = Scripted::new("s");
    let toolkit = Assembly::new()
        .toolkit(
            &[member(&s, &["read", "write", "delete"])],
            |source, definition| {
                assert_eq!(source, "s");
                match definition.name() {
                    "read" => Decision::Allow,
                    "write" => Decision::Approve,
                    _ => Decision::Block,
                }
            },
        )
        .unwrap();
    let names: Vec<_> = toolkit.definitions().map(|d| d.name().to_owned()).collect();
    assert_eq!(names, ["s__read", "s__write"]);
    let input = crate::support::object(json!({}));
    assert!(
        !toolkit
            .get("s__read")
            .unwrap()
            .approval()
            .is_required(&input)
    );
    assert!(
        toolkit
            .get("s__write")
            .unwrap()
            .approval()
            .is_required(&input)
    );
}

#[test]
fn decisions_are_stored_as_lowercase_words() {
    let policy = json!({ "a": "allow", "b": "approve", "c": "block" });
    let read: std::collections::BTreeMap<String, Decision> =
        serde_json::from_value(policy.clone()).unwrap();
    assert_eq!(read["b"], Decision::Approve);
    assert_eq!(serde_json::to_value(&read).unwrap(), policy);
    assert!(serde_json::from_value::<Decision>(json!("maybe")).is_err());
}

#[test]
fn a_name_clash_holds_every_clash() {
    let one = Scripted::new("a.b");
    let two = Scripted::new("a_b");
    let three = Scripted::new("x");
    let error = Assembly::new()
        .toolkit(
            &[
                member(&one, &["t", "u"]),
                member(&two, &["t", "u"]),
                member(&three, &["y z", "y/z"]),
            ],
            allow,
        )
        .unwrap_err();
    let AssemblyError::NameClash(clash) = error else {
        panic!("not a clash: {error}");
    };
    let names: Vec<_> = clash.clashes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a_b__t", "a_b__u", "x__y_z"]);
    assert_eq!(
        clash.clashes[0].tools,
        [
            QualifiedName {
                source: "a.b".into(),
                tool: "t".into()
            },
            QualifiedName {
                source: "a_b".into(),
                tool: "t".into()
            },
        ]
    );
}

#[test]
fn a_blocked_tool_cannot_clash() {
    let one = Scripted::new("a.b");
    let two = Scripted::new("a_b");
    let toolkit = Assembly::new()
        .toolkit(
            &[member(&one, &["t"]), member(&two, &["t"])],
            |source, _| {
                if source == "a.b" {
                    Decision::Block
                } else {
                    Decision::Allow
                }
            },
        )
        .unwrap();
    assert_eq!(toolkit.len(), 1);
}

#[test]
fn max_name_length_cuts_names_and_refuses_less_than_sixteen() {
    let s = Scripted::new("service");
    let long = "a_tool_with_a_rather_long_name";
    let toolkit = Assembly::new()
        .max_name_length(20)
        .toolkit(&[member(&s, &[long])], allow)
        .unwrap();
    let name = toolkit.definitions().next().unwrap().name().to_owned();
    assert_eq!(name.len(), 20);
    assert_eq!(name, tool_name("service", long, 20));
    let error = Assembly::new()
        .max_name_length(15)
        .toolkit(&[member(&s, &["t"])], allow)
        .unwrap_err();
    assert_eq!(error, AssemblyError::MaxNameLength { given: 15 });
}

#[test]
fn long_names_that_differ_after_the_cut_do_not_clash() {
    let s = Scripted::new("s");
    let base = "x".repeat(80);
    let toolkit = Assembly::new()
        .toolkit(
            &[member(&s, &[&format!("{base}1"), &format!("{base}2")])],
            allow,
        )
        .unwrap();
    assert_eq!(toolkit.len(), 2);
    assert!(toolkit.definitions().all(|d| d.name().len() == 64));
}

#[test]
fn a_renamed_tool_keeps_its_description_schema_and_hints() {
    let s = Scripted::new("s");
    let original = definition("t", json!({ "type": "object", "properties": { "a": {} } }))
        .with_description("does t");
    let toolkit = Assembly::new()
        .toolkit(
            &[Member::new(Arc::clone(&s) as _, vec![original.clone()])],
            allow,
        )
        .unwrap();
    let assembled = toolkit.definitions().next().unwrap();
    assert_eq!(assembled.description, original.description);
    assert_eq!(assembled.input_schema(), original.input_schema());
    assert_eq!(assembled.annotations, original.annotations);
}

fn name_pattern(max: usize) -> regex_lite::Regex {
    regex_lite::Regex::new(&format!("^[A-Za-z_][A-Za-z0-9_-]{{0,{}}}$", max - 1)).unwrap()
}

proptest! {
    #[test]
    fn every_name_is_one_a_model_api_accepts(
        source in "\\PC{0,40}",
        tool in "\\PC{0,120}",
        max in 16usize..=64,
    ) {
        let name = tool_name(&source, &tool, max);
        prop_assert!(name_pattern(max).is_match(&name), "{name:?}");
        prop_assert_eq!(&name, &tool_name(&source, &tool, max));
    }

    #[test]
    fn distinct_tools_get_distinct_names_or_a_reported_clash(
        tools in proptest::collection::vec("[a-z.]{1,3}|[a-z]{60,70}", 1..12),
    ) {
        let s = Scripted::new("s");
        let definitions: Vec<_> = {
            let mut seen = std::collections::HashSet::new();
            tools.iter().filter(|t| seen.insert((*t).clone())).map(|t| definition(t, any_object())).collect()
        };
        let count = definitions.len();
        match Assembly::new().toolkit(&[Member::new(s as _, definitions)], allow) {
            Ok(toolkit) => prop_assert_eq!(toolkit.len(), count),
            Err(AssemblyError::NameClash(clash)) => {
                for c in &clash.clashes {
                    prop_assert!(c.tools.len() >= 2);
                    for t in &c.tools {
                        prop_assert_eq!(&tool_name(&t.source, &t.tool, 64), &c.name);
                    }
                }
            }
            Err(other) => prop_assert!(false, "{other}"),
        }
    }
}
