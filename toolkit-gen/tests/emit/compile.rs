//! Real documents' modules compiled by rustc: a crate written under the target directory whose
//! library includes the modules — input types and source type — of every MCP tool of the corpus
//! and of OpenAPI documents with unions, merges, recursion and renames, checked (`cargo check`:
//! every type and lint, without code generation, which only costs time here) with
//! `#![deny(warnings, missing_docs)]`; and a smaller crate, of modules whose descriptions trip
//! rustdoc's and clippy's documentation lints, checked by `cargo clippy -- -D warnings` and
//! `cargo doc` with `RUSTDOCFLAGS=-D warnings`.

use std::path::{Path, PathBuf};

use toolkit_gen::emit::{EmitOptions, SourceOptions, Strictness, mcp_source, openapi_source};
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};

use crate::common::{corpus, forms, mcp_servers, nested_cargo};

/// The documents whose modules are compiled (the others are parsed by `corpus.rs`): compiling
/// costs minutes on a small machine, so a few that between them hold every form.
const DOCUMENTS: &[&str] = &[
    "nexus-dropshot.json",
    "openai-3.1.json",
    "petstore3-swagger-3.0.4.yaml",
    "twilio_api_v2010.json",
];

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Writes under the target directory a crate `dir` whose library, headed by `head` (its inner
/// attributes), includes each of `modules` (a name and its code) as a public module, and returns
/// its root. The crates share one target directory, so the toolkit is built once for them all.
fn write_crate(dir: &str, head: &str, modules: &[(String, String)]) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    let src = root.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let crate_path = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(name)
            .display()
            .to_string()
    };
    write(
        &root.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"emitted\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\n\
             toolkit-core = {{ path = {:?} }}\n\
             toolkit-http = {{ path = {:?} }}\n\
             toolkit-mcp = {{ path = {:?} }}\n\n\
             [workspace]\n",
            crate_path("toolkit-core"),
            crate_path("toolkit-http"),
            crate_path("toolkit-mcp"),
        ),
    );
    // The crates of the source kinds alone (and the core, for modules of types without a
    // source): generated code names nothing else (`toolkit_http::codegen`,
    // `toolkit_mcp::codegen`, `toolkit_core::codegen`).
    // The workspace's lock file, so that the crate builds offline with the versions already here.
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::copy(&lock, root.join("Cargo.lock")).unwrap();
    let mut lib =
        format!("//! Generated modules, compiled as a user's crate compiles them.\n{head}\n");
    for (stem, code) in modules {
        write(&src.join(format!("{stem}.rs")), code);
        lib.push_str(&format!(
            "/// Generated.\npub mod {stem} {{\n    include!(\"{stem}.rs\");\n}}\n"
        ));
    }
    write(&src.join("lib.rs"), &lib);
    root
}

/// Runs `cargo` with `args` on the crate at `root` (offline, quiet, in the shared target
/// directory), with the environment `env`, and asserts that it succeeds without a warning.
fn cargo_clean(root: &Path, args: &[&str], env: &[(&str, &str)]) {
    let output = nested_cargo()
        .arg(args[0])
        .args(["--offline", "--quiet", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .args(&args[1..])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && !stderr.contains("warning"),
        "`cargo {}` of the generated crate in {} is not clean:\n{stderr}",
        args.join(" "),
        root.display()
    );
}

#[test]
fn generated_code_lints_clean_under_clippy_and_rustdoc() {
    // Servers whose descriptions hold bare URLs, `[brackets]`, `<tags>` and lists whose next
    // line is not indented, a document with `<tags>` and undocumented properties, and the
    // fixture of every form, as inputs and as answers (deprecated fields, string enums, a tuple
    // struct): small, so that clippy and rustdoc take seconds, and between them every lint a
    // description trips.
    const SERVERS: &[&str] = &["basic-memory", "biomcp", "playwright"];
    let mut modules = Vec::new();
    for (server, definitions) in mcp_servers() {
        if SERVERS.contains(&server.as_str()) {
            let stem = server.replace('-', "_");
            let emitted = mcp_source(
                &format!("{server}.json"),
                &definitions,
                &SourceOptions::new(stem.clone()),
                &EmitOptions::default(),
            );
            modules.push((stem, emitted.code));
        }
    }
    assert_eq!(modules.len(), SERVERS.len());
    let name = "petstore3-swagger-3.0.4.yaml";
    let text = std::fs::read_to_string(corpus(&format!("openapi/{name}"))).unwrap();
    let read = read_operations(&decode_document(&text).unwrap(), &ReadOptions::default()).unwrap();
    let petstore = openapi_source(
        name,
        &read,
        &SourceOptions::new("petstore"),
        &EmitOptions::default(),
    );
    modules.push(("petstore".to_owned(), petstore.code));
    let forms = toolkit_gen::emit::module("forms.json", &forms(), &EmitOptions::default());
    modules.push(("forms".to_owned(), forms.code));
    // Every form as an answer's type (lenient structs, catch-all enums, aliases).
    let answers = mcp_source(
        "forms.json",
        &crate::common::forms_as_answers(),
        &SourceOptions::new("forms_answers"),
        &EmitOptions::default(),
    );
    modules.push(("forms_answers".to_owned(), answers.code));
    // `missing_docs` denied: a user's crate that documents everything may include the modules.
    let root = write_crate("emit-lint", "#![deny(warnings, missing_docs)]\n", &modules);
    cargo_clean(&root, &["clippy", "--", "-D", "warnings"], &[]);
    cargo_clean(
        &root,
        &["doc", "--no-deps"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    );
}

#[test]
fn generated_modules_of_real_documents_compile_without_warnings() {
    let mcp: Vec<_> = mcp_servers()
        .into_iter()
        .flat_map(|(_, definitions)| definitions)
        .collect();
    let mut modules = vec![(
        "livemcpbench".to_owned(),
        mcp_source(
            "livemcpbench-tools.json",
            &mcp,
            &SourceOptions::new("livemcpbench"),
            &EmitOptions::default(),
        ),
    )];
    // One document also as the schema says, so that open structs with their flattened map compile.
    let follow = EmitOptions {
        strictness: Strictness::FollowSchema,
        ..EmitOptions::default()
    };
    for name in DOCUMENTS {
        let stem: String = name
            .split('.')
            .next()
            .unwrap_or_default()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let text = std::fs::read_to_string(corpus(&format!("openapi/{name}"))).unwrap();
        let read =
            read_operations(&decode_document(&text).unwrap(), &ReadOptions::default()).unwrap();
        let source = SourceOptions::new(stem.clone());
        modules.push((
            stem.clone(),
            openapi_source(name, &read, &source, &EmitOptions::default()),
        ));
        if name.starts_with("nexus") {
            modules.push((
                format!("{stem}_follow"),
                openapi_source(name, &read, &source, &follow),
            ));
        }
    }
    let modules: Vec<(String, String)> = modules
        .into_iter()
        .map(|(stem, emitted)| (stem, emitted.code))
        .collect();
    let root = write_crate(
        "emit-compile",
        "#![deny(warnings, missing_docs)]\n",
        &modules,
    );
    cargo_clean(&root, &["check"], &[]);
}
