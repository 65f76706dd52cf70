//! `toolkit-gateway --example-config` and `--help`, as a newcomer reads them: the example is a
//! configuration the gateway reads, it writes every key the configuration's tables take, and the
//! help is plain text that lists the tables and says where the keys are.
#![allow(clippy::panic)]

use toolkit_gateway::config::Config;

use crate::support::run;

/// The example, as the command prints it.
fn example() -> String {
    let (code, stdout, stderr) = run(&["--example-config"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    stdout
}

#[test]
fn the_example_configuration_is_read_by_the_gateway() {
    let text = example();
    let dir = std::env::temp_dir().join(format!(
        "toolkit-gateway-example-config-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("toolkit.toml");
    std::fs::write(&file, &text).unwrap();
    let loaded = Config::load(&file);
    std::fs::remove_dir_all(&dir).unwrap();
    let config = loaded.unwrap_or_else(|error| panic!("the example does not load: {error}"));
    assert_eq!(config.sources.len(), 9);
    assert!(config.serve.auth.is_some());
    assert!(config.audit.is_some());
    // Each kind of source is shown.
    for key in ["openapi", "discovery", "graphql", "url", "command"] {
        assert!(
            text.contains(&format!("\n{key} = ")),
            "no source with `{key}`"
        );
    }
}

/// Every key a table of the example takes (as the gateway's own "unknown field" message lists
/// them) is written in the example, set or in a comment: a key added to the configuration and
/// not to the example fails here.
#[test]
fn the_example_configuration_writes_every_key() {
    let text = example();
    let document: toml::Table = toml::from_str(&text).unwrap();
    let mut tables = Vec::new();
    paths(
        &toml::Value::Table(document.clone()),
        &mut Vec::new(),
        &mut tables,
    );
    let mut keys = std::collections::BTreeSet::new();
    let mut checked = 0;
    for path in &tables {
        let mut probe = toml::Value::Table(document.clone());
        let Some(toml::Value::Table(table)) = at(&mut probe, path) else {
            panic!("no table at {path:?}");
        };
        table.insert("not_a_key".to_owned(), toml::Value::Integer(0));
        let written = toml::to_string(&probe).unwrap();
        let Err(error) = Config::parse(&written) else {
            continue; // a map of names (headers, env, credentials) takes any key
        };
        let message = error.to_string();
        let Some(expected) = message
            .split_once("unknown field `not_a_key`, expected ")
            .map(|(_, expected)| expected)
        else {
            continue; // a table read as a value (a header's `{ env }`, a token store), not by key
        };
        checked += 1;
        // "one of `a`, `b`" or "`a`": every other piece between backticks is a key.
        keys.extend(expected.split('`').skip(1).step_by(2).map(str::to_owned));
    }
    // [serve], [serve.auth], [catalog], [policy], a rule, [approval], each source, its oauth,
    // per_person, on_behalf_of, resilience and its layers, [audit], the top level.
    assert!(checked >= 20, "only {checked} tables told their keys");
    for table in [
        "transport",
        "mode",
        "refresh_seconds",
        "groups_claim",
        "decision",
        "webhook",
    ] {
        assert!(keys.contains(table), "no table told `{table}`: {keys:?}");
    }
    let missing: Vec<&String> = keys
        .iter()
        .filter(|key| {
            // `key = …`, or a table's header: `[key]`, `[[key]]`, `[serve.key]`.
            ![format!("{key} = "), format!("[{key}]"), format!(".{key}]")]
                .iter()
                .any(|written| text.contains(written.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "keys the example does not write: {missing:?}"
    );
}

/// The paths of every table in `value`, arrays of tables and inline tables included.
fn paths(value: &toml::Value, path: &mut Vec<Step>, found: &mut Vec<Vec<Step>>) {
    match value {
        toml::Value::Table(table) => {
            found.push(path.clone());
            for (key, inner) in table {
                path.push(Step::Key(key.clone()));
                paths(inner, path, found);
                path.pop();
            }
        }
        toml::Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                path.push(Step::Index(index));
                paths(inner, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// One step into a TOML value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// The value at `path` in `value`.
fn at<'a>(value: &'a mut toml::Value, path: &[Step]) -> Option<&'a mut toml::Value> {
    path.iter()
        .try_fold(value, |value, step| match (step, value) {
            (Step::Key(key), toml::Value::Table(table)) => table.get_mut(key),
            (Step::Index(index), toml::Value::Array(items)) => items.get_mut(*index),
            _ => None,
        })
}

#[test]
fn help_is_plain_text_that_names_the_tables_and_the_example() {
    let (code, help, stderr) = run(&["--help"]);
    assert_eq!(code, 0, "{stderr}");
    // No rustdoc link syntax nor Rust paths a reader of a terminal cannot follow.
    for rustdoc in ["[`", "](", "crate::", "toolkit_gateway::"] {
        assert!(!help.contains(rustdoc), "`{rustdoc}` in:\n{help}");
    }
    for said in [
        "--example-config",
        "[serve]",
        "[serve.auth]",
        "[catalog]",
        "[policy]",
        "[approval]",
        "[[sources]]",
        "[audit]",
    ] {
        assert!(help.contains(said), "`{said}` not in:\n{help}");
    }
}

#[test]
fn the_gateway_needs_a_configuration_or_the_example() {
    let (code, _, stderr) = run(&[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--config <FILE>"), "{stderr}");
    let (code, _, stderr) = run(&["--config", "toolkit.toml", "--example-config"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}
