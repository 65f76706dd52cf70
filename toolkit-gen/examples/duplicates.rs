//! How many of a generated module's types repeat another's body: the whole module of an OpenAPI
//! document (inputs and typed answers, as `toolkit-gen openapi` writes it), its types counted
//! and grouped by body — what follows the type's name, its fields' documentation included, its
//! own documentation not.
//!
//! ```text
//! cargo run --release -p toolkit-gen --example duplicates -- DOCUMENT [--list]
//! ```
//!
//! Prints the module's size, its types (tool inputs, one per tool, apart), how many of the
//! others have a body equal to an earlier type's, and with `--list` each group of equal bodies.
//! Issue #13's goal on GitHub's description: at most 1 %.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::{BTreeMap, HashSet};

use toolkit_gen::emit::{EmitOptions, SourceOptions, openapi_source};
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};

/// Each type of `code` (a formatted module) not named in `skip`: its name and body.
fn types<'c>(code: &'c str, skip: &HashSet<&str>) -> Vec<(&'c str, String)> {
    let mut found = Vec::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let Some((kind, rest)) = ["pub struct ", "pub enum ", "pub type "]
            .iter()
            .find_map(|start| line.strip_prefix(start).map(|rest| (*start, rest)))
        else {
            continue;
        };
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        let mut body = format!("{kind}{}", &rest[name_end..]);
        if !(line.ends_with(';') || line.ends_with("{}")) {
            for inner in lines.by_ref() {
                body.push('\n');
                body.push_str(inner);
                if inner == "}" {
                    break;
                }
            }
        }
        if line.contains("(__tk::HttpSource)") || skip.contains(name) {
            continue;
        }
        found.push((name, body));
    }
    found
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: duplicates DOCUMENT [--list]");
        std::process::exit(2);
    };
    let list = args.any(|arg| arg == "--list");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| {
        eprintln!("{path}: {error}");
        std::process::exit(1);
    });
    let Ok(document) = decode_document(&text) else {
        eprintln!("{path}: neither JSON nor YAML");
        std::process::exit(1);
    };
    let Ok(read) = read_operations(&document, &ReadOptions::default()) else {
        eprintln!("{path}: not an OpenAPI document");
        std::process::exit(1);
    };
    let module = openapi_source(
        &path,
        &read,
        &SourceOptions::new("api"),
        &EmitOptions::default(),
    );
    let inputs: HashSet<&str> = module.tools.iter().map(|t| t.root_type.as_str()).collect();
    let all = types(&module.code, &HashSet::new());
    let others = types(&module.code, &inputs);
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, body) in &others {
        groups.entry(body.as_str()).or_default().push(name);
    }
    let repeated: usize = groups.values().map(|names| names.len() - 1).sum();
    let mut all_groups: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, body) in &all {
        *all_groups.entry(body.as_str()).or_default() += 1;
    }
    let all_repeated: usize = all_groups.values().map(|count| count - 1).sum();
    #[allow(clippy::cast_precision_loss)]
    let share = |part: usize, whole: usize| part as f64 * 100.0 / whole.max(1) as f64;
    println!(
        "module: {} bytes, {} lines; of which the embedded operations {} bytes",
        module.code.len(),
        module.code.lines().count(),
        module
            .code
            .find("pub const OPERATIONS")
            .and_then(|start| module.code.get(start..)?.find("\"#;"))
            .unwrap_or(0)
    );
    println!(
        "types: {} ({} tool inputs); of the {} others, {} have a body equal to another's \
         ({:.2} %); counting the tool inputs, {} of {} ({:.2} %)",
        all.len(),
        all.len() - others.len(),
        others.len(),
        repeated,
        share(repeated, others.len()),
        all_repeated,
        all.len(),
        share(all_repeated, all.len())
    );
    if list {
        for (body, names) in groups.iter().filter(|(_, names)| names.len() > 1) {
            let first = body.lines().next().unwrap_or_default();
            println!("{}: {first} …", names.join(", "));
        }
    }
}
