//! Hand-written tools: a typed input and an async function.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolkit_core::{
    Assembly, Decision, FnSource, FnTool, Member, Reason, ToolSource, functions::FnSourceError,
};

/// Orders a pizza.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Order {
    /// The pizza's size.
    size: Size,
    /// Extra toppings.
    #[serde(default)]
    toppings: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

fn pizzeria() -> FnSource {
    FnSource::builder("pizzeria")
        .tool(
            FnTool::new("order", |order: Order| async move {
                if order.toppings.iter().any(|t| t == "pineapple") {
                    return Err(Reason::call_failed("We do not put pineapple on pizza."));
                }
                let size = match order.size {
                    Size::Small => "small",
                    Size::Large => "large",
                };
                Ok(json!({ "ordered": size, "toppings": order.toppings.len() }))
            })
            .description("Orders a pizza."),
        )
        .build()
        .unwrap()
}

#[test]
fn the_input_schema_comes_from_the_type() {
    let definitions = pizzeria().definitions();
    let schema = definitions[0].input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["size"]));
    assert_eq!(
        schema["properties"]["toppings"]["description"],
        "Extra toppings."
    );
    assert!(!schema.contains_key("$schema"));
    assert_eq!(
        definitions[0].description.as_deref(),
        Some("Orders a pizza.")
    );
}

#[tokio::test]
async fn discover_gives_the_definitions() {
    let source = pizzeria();
    assert_eq!(source.discover().await.unwrap(), source.definitions());
}

#[tokio::test]
async fn a_hand_written_tool_runs_checks_and_fails_as_any_other() {
    let source = pizzeria();
    let definitions = source.definitions();
    let toolkit = Assembly::new()
        .toolkit(&[Member::new(Arc::new(source), definitions)], |_, _| {
            Decision::Allow
        })
        .unwrap();
    let ordered = toolkit
        .call(
            "pizzeria__order",
            json!({ "size": "large", "toppings": ["olives"] }),
        )
        .await;
    assert_eq!(ordered, Ok(json!({ "ordered": "large", "toppings": 1 })));

    let refused = toolkit
        .call(
            "pizzeria__order",
            json!({ "size": "medium", "crust": "thin" }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code, "InvalidInputError");
    assert!(
        refused.message.contains("unknown property \"crust\""),
        "{}",
        refused.message
    );
    assert!(
        refused
            .message
            .contains("Accepted params at the root: size, toppings.")
    );

    let failed = toolkit
        .call(
            "pizzeria__order",
            json!({ "size": "small", "toppings": ["pineapple"] }),
        )
        .await
        .unwrap_err();
    assert_eq!(failed.code, "CallFailedError");
    assert_eq!(failed.message, "We do not put pineapple on pizza.");
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_of_the_source() {
    let error = pizzeria()
        .call(
            "nope",
            json!({}).as_object().cloned().unwrap(),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.source, "pizzeria");
    assert_eq!(error.reason.code(), "NotFoundError");
}

#[test]
fn names_must_be_distinct_and_not_empty() {
    #[derive(Deserialize, JsonSchema)]
    struct Nothing {}
    let twice = FnSource::builder("s")
        .tool(FnTool::new("t", |_: Nothing| async { Ok(1) }))
        .tool(FnTool::new("t", |_: Nothing| async { Ok(2) }))
        .build();
    assert_eq!(twice.unwrap_err(), FnSourceError::DuplicateName("t".into()));
    let empty = FnSource::builder("s")
        .tool(FnTool::new("", |_: Nothing| async { Ok(1) }))
        .build();
    assert!(matches!(empty, Err(FnSourceError::Definition(_))));
}
