//! Real documents' modules compiled by rustc: a crate written under the target directory whose
//! library includes the modules — input types and source type — of every MCP tool of the corpus
//! and of OpenAPI documents with unions, merges, recursion and renames, checked (`cargo check`:
//! every type and lint, without code generation, which only costs time here) with
//! `#![deny(warnings)]`.

use std::path::Path;
use std::process::Command;

use toolkit_gen::emit::{EmitOptions, SourceOptions, Strictness, mcp_source, openapi_source};
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};

use crate::common::{corpus, mcp_servers};

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

#[test]
fn generated_modules_of_real_documents_compile_without_warnings() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("emit-compile");
    let src = root.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolkit-runtime");
    write(
        &root.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"emitted\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\n\
             toolkit-runtime = {{ path = {:?}, features = [\"http\", \"mcp\"] }}\n\n\
             [workspace]\n",
            runtime.display().to_string()
        ),
    );
    // The runtime alone: generated code names nothing else (`toolkit_runtime::codegen`).
    // The workspace's lock file, so that the crate builds offline with the versions already here.
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::copy(&lock, root.join("Cargo.lock")).unwrap();

    let mut lib = String::from(
        "//! Generated modules, compiled as a user's crate compiles them.\n#![deny(warnings)]\n\n",
    );
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
    for (stem, emitted) in &modules {
        write(&src.join(format!("{stem}.rs")), &emitted.code);
        lib.push_str(&format!(
            "/// Generated.\n#[allow(missing_docs)]\npub mod {stem} {{\n    include!(\"{stem}.rs\");\n}}\n"
        ));
    }
    write(&src.join("lib.rs"), &lib);

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["check", "--offline", "--quiet", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && !stderr.contains("warning"),
        "the generated crate in {} does not build cleanly:\n{stderr}",
        root.display()
    );
}
