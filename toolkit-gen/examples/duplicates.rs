//! How many of a generated module's types repeat another's body: the whole module of an OpenAPI
//! document (inputs and typed answers, as `toolkit-gen openapi` writes it), its types counted
//! and grouped by body — what follows the type's name, its fields' documentation included, its
//! own documentation not.
//!
//! ```text
//! cargo run --release -p toolkit-gen --example duplicates -- DOCUMENT [--list]
//! ```
//!
//! Prints the module's size, the share of answer schemas typed, its types — structs and enums; aliases (`pub type`), which name a
//! type and make none, apart; tool inputs (one per tool) apart — how many of the others have a
//! body equal to an earlier type's (derives and serde attributes included: a strict struct and
//! a lenient one of the same fields differ), and with `--list` each group of equal bodies.
//! Issue #13's goal on GitHub's description: at most 1 %.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::{BTreeMap, HashSet};

use quote::ToTokens as _;

use toolkit_gen::emit::{EmitOptions, SourceOptions, openapi_source};
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};

/// What a module declares: its types (structs and enums) not named in `skip`, each with its
/// body — the item with its name, its documentation and its lint allows taken out (its derives,
/// serde attributes, fields and their documentation kept; a string enum's values from its
/// `string_enum!`) — and its aliases (`pub type`).
fn declared(code: &str, skip: &HashSet<&str>) -> (Vec<(String, String)>, usize) {
    let Ok(file) = syn::parse_file(code) else {
        eprintln!("the module does not parse");
        std::process::exit(1);
    };
    let own = |attrs: &mut Vec<syn::Attribute>| {
        attrs.retain(|a| !a.path().is_ident("doc") && !a.path().is_ident("allow"));
    };
    let placeholder = syn::Ident::new("T", proc_macro2::Span::call_site());
    // A string enum's values are in its `__tk::string_enum!(Name { Variant = "value", … })`.
    let values: BTreeMap<String, String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(item)
                if item.mac.path.is_ident("string_enum")
                    || item
                        .mac
                        .path
                        .segments
                        .last()
                        .is_some_and(|segment| segment.ident == "string_enum") =>
            {
                let mut tokens = item.mac.tokens.clone().into_iter();
                let name = tokens.next()?.to_string();
                Some((
                    name,
                    tokens.collect::<proc_macro2::TokenStream>().to_string(),
                ))
            }
            _ => None,
        })
        .collect();
    let (mut types, mut aliases) = (Vec::new(), 0);
    for item in file.items {
        let (name, body) = match item {
            syn::Item::Struct(mut item) => {
                let name = item.ident.to_string();
                own(&mut item.attrs);
                item.ident = placeholder.clone();
                (name, item.to_token_stream().to_string())
            }
            syn::Item::Enum(mut item) => {
                let name = item.ident.to_string();
                own(&mut item.attrs);
                item.ident = placeholder.clone();
                let body = item.to_token_stream().to_string();
                let values = values.get(&name).map_or("", String::as_str);
                (name, format!("{body} {values}"))
            }
            syn::Item::Type(_) => {
                aliases += 1;
                continue;
            }
            _ => continue,
        };
        if !skip.contains(name.as_str()) && !body.contains("__tk :: HttpSource") {
            types.push((name, body));
        }
    }
    (types, aliases)
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
    let (all, aliases) = declared(&module.code, &HashSet::new());
    let (others, _) = declared(&module.code, &inputs);
    let repeats = |types: &[(String, String)]| -> (BTreeMap<String, Vec<String>>, usize) {
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, body) in types {
            groups.entry(body.clone()).or_default().push(name.clone());
        }
        let repeated = groups.values().map(|names| names.len() - 1).sum();
        (groups, repeated)
    };
    let (groups, repeated) = repeats(&others);
    let (_, all_repeated) = repeats(&all);
    #[allow(clippy::cast_precision_loss)]
    let share = |part: usize, whole: usize| part as f64 * 100.0 / whole.max(1) as f64;
    let operations = module
        .code
        .find("pub const OPERATIONS")
        .and_then(|start| module.code.get(start..)?.find("]}\""))
        .unwrap_or(0);
    println!(
        "module: {} bytes, {} lines; the embedded operations {} bytes",
        module.code.len(),
        module.code.lines().count(),
        operations
    );
    println!(
        "types (structs and enums): {} ({} tool inputs), and {} aliases (`pub type`); of the {} \
         types other than inputs, {} have a body equal to another's ({:.2} %); counting the tool \
         inputs, {} of {} ({:.2} %)",
        all.len(),
        all.len() - others.len(),
        aliases,
        others.len(),
        repeated,
        share(repeated, others.len()),
        all_repeated,
        all.len(),
        share(all_repeated, all.len())
    );
    let typed_answers = module.answers.values().filter(|a| a.is_typed()).count();
    println!(
        "answers: {typed_answers} of {} operations with a JSON answer schema return a type \
         ({:.2} %)",
        module.answers.len(),
        share(typed_answers, module.answers.len())
    );
    if list {
        for (body, names) in groups.iter().filter(|(_, names)| names.len() > 1) {
            let shown: String = body.chars().take(160).collect();
            println!("{}: {shown} …", names.join(", "));
        }
    }
}
