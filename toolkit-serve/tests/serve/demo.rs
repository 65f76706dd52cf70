//! The demo toolkit of the serving tests and of `toolkit-serve-fixture`: hand-written tools that
//! answer, fail with a remediation, panic, need approval, and answer nothing.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolkit_runtime::serve::failure::{Remediation, echo, message};
use toolkit_runtime::{FnSource, FnTool, Reason, Toolkit, ToolkitOptions, definition::Annotations};

/// Answers with the text it is given.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Echo {
    /// The text to answer with.
    pub text: String,
}

/// Adds two numbers.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Add {
    /// The first number.
    pub a: f64,
    /// The second number.
    pub b: f64,
}

/// A thing by its id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindThing {
    /// The thing's id.
    pub id: String,
}

/// No parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

/// The demo tools: `echo`, `add`, `find_thing`, `explode` (panics), `wipe` (needs approval),
/// `nothing` (answers `null`).
pub fn toolkit() -> Toolkit {
    let source = FnSource::builder("demo")
        .tool(
            FnTool::new("echo", |input: Echo| async move { Ok(input.text) })
                .description("Answers with the text it is given.")
                .annotations(Annotations {
                    title: Some("Echo".into()),
                    read_only: Some(true),
                    open_world: Some(false),
                    ..Annotations::default()
                }),
        )
        .tool(
            FnTool::new("add", |input: Add| async move {
                Ok(json!({"sum": input.a + input.b}))
            })
            .description("Adds two numbers.")
            .read_only(),
        )
        .tool(
            FnTool::new("find_thing", |input: FindThing| async move {
                if input.id == "known" {
                    return Ok(json!({"name": "a known thing"}));
                }
                let remediation =
                    Remediation::hint("List the ids first.").suggested_tool("list_things");
                Err(Reason::call_failed(message(
                    &format!("No thing \"{}\".", echo(&input.id)),
                    &remediation,
                )))
            })
            .description("Fetches a thing by id."),
        )
        .tool(
            FnTool::new("explode", |_: Nothing| async move {
                if std::hint::black_box(true) {
                    panic!("the tool broke");
                }
                Ok(json!(null))
            })
            .description("Panics."),
        )
        .tool(
            FnTool::new("wipe", |_: Nothing| async move { Ok("wiped") })
                .description("Wipes everything (asks a person first).")
                .annotations(Annotations {
                    read_only: Some(true),
                    destructive: Some(false),
                    ..Annotations::default()
                }),
        )
        .tool(
            FnTool::new("nothing", |_: Nothing| async move { Ok(json!(null)) })
                .description("Answers nothing."),
        )
        .build()
        .expect("the demo tools are valid");
    let definitions = source.definitions();
    let options =
        ToolkitOptions::default().needs_approval(|definition| definition.name() == "wipe");
    Toolkit::from_source(Arc::new(source), definitions, &options).expect("distinct names")
}
