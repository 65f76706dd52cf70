//! Typed answers on GitHub's REST description (npm `@octokit/openapi`, installed by
//! `scripts/install-test-peers`): the share of operations with a JSON answer schema whose
//! method returns a type, and every JSON example of a success answer the description gives,
//! read into its generated answer type by a generated crate compiled and run here.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;
use toolkit_gen::emit::{EmitOptions, SourceOptions, openapi_source};
use toolkit_runtime::openapi::{ReadOptions, read_operations};

use crate::common::nested_cargo;

fn github() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/peers/node_modules/@octokit/openapi/generated/api.github.com.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "GitHub's description is missing at {} ({error}): run scripts/install-test-peers",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap()
}

/// Follows a local `$ref`.
fn follow<'d>(document: &'d Value, value: &'d Value) -> &'d Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => document
            .pointer(reference.trim_start_matches('#'))
            .unwrap_or(&Value::Null),
        None => value,
    }
}

/// The JSON examples of the success answer of each operation (the response the reader takes:
/// the first 2xx, `2XX` last, with a JSON media type and a schema), by operation id.
fn examples(document: &Value) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    for item in document["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            let (Some(id), Some(responses)) = (
                operation.get("operationId").and_then(Value::as_str),
                operation.get("responses").and_then(Value::as_object),
            ) else {
                continue;
            };
            let mut successes: Vec<(u16, &Value)> = responses
                .iter()
                .filter_map(|(status, response)| {
                    let rank = if status == "2XX" {
                        300
                    } else {
                        status
                            .parse()
                            .ok()
                            .filter(|code| (200..300).contains(code))?
                    };
                    Some((rank, response))
                })
                .collect();
            successes.sort_by_key(|(rank, _)| *rank);
            let media = successes.into_iter().find_map(|(_, response)| {
                let content = follow(document, response).get("content")?.as_object()?;
                content
                    .iter()
                    .find(|(media_type, media)| {
                        let essence = media_type.split(';').next().unwrap_or_default().trim();
                        (essence == "application/json" || essence.ends_with("+json"))
                            && media.get("schema").is_some()
                    })
                    .map(|(_, media)| media)
            });
            let Some(media) = media else { continue };
            if let Some(example) = media.get("example") {
                found.push((id.to_owned(), example.clone()));
            }
            for example in media
                .get("examples")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|examples| examples.values())
            {
                if let Some(value) = follow(document, example).get("value") {
                    found.push((id.to_owned(), value.clone()));
                }
            }
        }
    }
    found
}

#[test]
fn github_answers_are_typed_and_its_answer_examples_fit_their_types() {
    let document = github();
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let module = openapi_source(
        "api.github.com.json",
        &read,
        &SourceOptions::new("github"),
        &EmitOptions::default(),
    );
    assert!(module.errors.is_empty(), "{:?}", module.errors);
    let typed = module.answers.values().filter(|a| a.is_typed()).count();
    let fully = module
        .answers
        .values()
        .filter(|a| a.is_typed() && a.untyped.is_empty())
        .count();
    let share = typed as f64 / module.answers.len() as f64;
    println!(
        "github: {} operations with a JSON answer schema, {typed} return a type ({:.2} %), {fully} fully typed",
        module.answers.len(),
        share * 100.0
    );
    assert!(share >= 0.95, "{typed} of {}", module.answers.len());

    // A crate of the module and a binary that reads each example into its answer type.
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("emit-answers");
    let examples_dir = root.join("examples-json");
    std::fs::create_dir_all(root.join("src/bin")).unwrap();
    std::fs::create_dir_all(&examples_dir).unwrap();
    // The crate of the module's source kind alone: generated code names nothing else.
    let http = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolkit-http");
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"emitted-answers\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\ntoolkit-http = {{ path = {:?} }}\n\n[workspace]\n",
            http.display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock"),
        root.join("Cargo.lock"),
    )
    .unwrap();
    std::fs::write(root.join("src/github.rs"), &module.code).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "//! GitHub's generated module.\n#![allow(missing_docs, deprecated)]\npub mod github {\n    include!(\"github.rs\");\n}\n",
    )
    .unwrap();
    let examples = examples(&document);
    let mut main = String::from(
        "use toolkit_http::codegen::{serde, serde_json, serde_path_to_error};\n\
         fn check<T: serde::de::DeserializeOwned>(index: usize, text: &str) {\n\
         \x20   let value: serde_json::Value = serde_json::from_str(text).unwrap();\n\
         \x20   match serde_path_to_error::deserialize::<_, T>(value) {\n\
         \x20       Ok(_) => println!(\"fits {index}\"),\n\
         \x20       Err(error) => println!(\"unfit {index} at {}: {}\", error.path(), error.inner()),\n\
         \x20   }\n}\nfn main() {\n",
    );
    let mut checked = 0;
    for (index, (operation, example)) in examples.iter().enumerate() {
        let Some(answer) = module.answers.get(operation) else {
            continue;
        };
        let Some(root_type) = &answer.root_type else {
            continue;
        };
        let file = examples_dir.join(format!("{index}.json"));
        std::fs::write(&file, example.to_string()).unwrap();
        writeln!(
            main,
            "    check::<emitted_answers::github::{root_type}>({index}, include_str!({:?}));",
            file.display().to_string()
        )
        .unwrap();
        checked += 1;
    }
    main.push_str("}\n");
    std::fs::write(root.join("src/bin/fit.rs"), main).unwrap();

    let output = nested_cargo()
        .args([
            "run",
            "--offline",
            "--quiet",
            "--bin",
            "fit",
            "--manifest-path",
        ])
        .arg(root.join("Cargo.toml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let fits = stdout
        .lines()
        .filter(|line| line.starts_with("fits "))
        .count();
    // An example that does not fit its type is checked against its answer's JSON Schema: one
    // the schema refuses too is an error of the description (an example missing a required
    // property, `null` where the schema has an object, a number written as a string); one the
    // schema accepts would be a bug of the generator.
    let mut document_errors = Vec::new();
    let mut generator_bugs = Vec::new();
    for line in stdout.lines().filter(|line| line.starts_with("unfit ")) {
        let rest = &line["unfit ".len()..];
        let (index, at) = rest.split_once(' ').unwrap();
        let (operation, example) = &examples[index.parse::<usize>().unwrap()];
        let schema = Value::Object(read.answers[operation].clone());
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .build(&schema)
            .unwrap();
        let told = format!("{operation} {at}");
        if validator.is_valid(example) {
            generator_bugs.push(told);
        } else {
            document_errors.push(told);
        }
    }
    println!(
        "github: {} answer examples, {checked} of typed answers: {fits} fit; {} do not, each \
         refused by its own schema too (errors of the description):\n{}",
        examples.len(),
        document_errors.len(),
        document_errors.join("\n")
    );
    assert_eq!(
        fits + document_errors.len() + generator_bugs.len(),
        checked,
        "{stdout}"
    );
    assert!(
        generator_bugs.is_empty(),
        "{} examples fit their schema but not their type:\n{}",
        generator_bugs.len(),
        generator_bugs.join("\n")
    );
}
