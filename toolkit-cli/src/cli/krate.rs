//! `toolkit-gen crate (--openapi DOC | --mcp SNAPSHOT)... --name NAME -o DIR`: a whole crate of
//! typed tools to commit — `Cargo.toml`, `src/lib.rs`, a module per input, a `README.md`.
//!
//! The crate depends on what its generated code names and nothing else: `toolkit-http` when it
//! holds an OpenAPI document's module, `toolkit-mcp` when it holds a snapshot's — by version, or
//! in a checkout of the toolkit (`--toolkit-path DIR`: `DIR/toolkit-http`, `DIR/toolkit-mcp`).
//!
//! The crate is written from the inputs alone, the same bytes each time, so that
//! `toolkit-gen check` (see [`super::check`]) can tell when the committed copy is stale.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use toolkit_gen::builder::{Builder, GenerateError, GeneratedModule, InputKind, label};

use super::strictness::StrictnessArg;

/// The exit code of inputs that cannot be read.
const USAGE: u8 = 2;

/// The inputs and shape of a generated crate, shared by `crate` and `check`. The crate records
/// them in its `Cargo.toml` (`[package.metadata.toolkit-gen]`, inputs relative to the crate),
/// so that `toolkit-gen check DIR` needs none of them again.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, clap::Args, serde::Serialize, serde::Deserialize,
)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct CrateArgs {
    /// Generate a module from this OpenAPI document (JSON or YAML) or Google Discovery document
    /// (`--discovery DOC`, an alias: the kind is read from the content); repeatable (`crate`
    /// needs an input: this or `--mcp`)
    #[arg(long = "openapi", visible_alias = "discovery", value_name = "DOC")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub openapi: Vec<PathBuf>,
    /// Generate a module from this MCP snapshot (as `toolkit-gen snapshot` writes it); repeatable
    #[arg(long = "mcp", value_name = "SNAPSHOT")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<PathBuf>,
    /// The crate's package name: ASCII letters, digits, `-` and `_`, starting with a letter
    /// (`crate` needs it)
    #[arg(long, value_name = "NAME", value_parser = package_name)]
    #[serde(skip)]
    pub name: Option<String>,
    /// The crate's version [default: 0.1.0]
    #[arg(long = "package-version", value_name = "SEMVER", value_parser = semver)]
    #[serde(skip)]
    pub version: Option<String>,
    /// The crate's license (an SPDX expression); without one the crate is `publish = false`
    #[arg(long, value_name = "SPDX", value_parser = spdx)]
    #[serde(skip)]
    pub license: Option<String>,
    /// How closed the generated input structs are [default: strict]
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strictness: Option<StrictnessArg>,
    /// Depend on the toolkit's crates in the checkout at DIR (relative to the crate: each
    /// dependency is `DIR/toolkit-http`, `DIR/toolkit-mcp`) instead of by version
    #[arg(long, value_name = "DIR", value_parser = checkout)]
    #[serde(skip)]
    pub toolkit_path: Option<String>,
    /// Keep only the OpenAPI operation with this id; repeatable (see `Builder::include_operation_id`)
    #[arg(long, value_name = "ID")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include_operation_id: Vec<String>,
    /// Leave out the OpenAPI operation with this id; repeatable
    #[arg(long, value_name = "ID")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude_operation_id: Vec<String>,
    /// Keep only the OpenAPI operations with this tag; repeatable
    #[arg(long, value_name = "TAG")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include_tag: Vec<String>,
    /// Leave out the OpenAPI operations with this tag; repeatable
    #[arg(long, value_name = "TAG")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude_tag: Vec<String>,
    /// Keep only the tools whose names match this glob; repeatable
    #[arg(long, value_name = "GLOB")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include_tools: Vec<String>,
    /// Leave out the tools whose names match this glob; repeatable
    #[arg(long, value_name = "GLOB")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude_tools: Vec<String>,
    /// `TOOL=NAME`: make the Rust names of a tool from NAME; repeatable
    #[arg(long, value_name = "TOOL=NAME", value_parser = pair)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rename: Vec<(String, String)>,
    /// The most characters of a tool's name its Rust names are made from
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_name_length: Option<u16>,
    /// `FORMAT=TYPE`: make schemas of a `format` the Rust type TYPE; repeatable
    #[arg(long, value_name = "FORMAT=TYPE", value_parser = pair)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replace_format: Vec<(String, String)>,
    /// `SCHEMA=TYPE`: make a named schema the Rust type TYPE; repeatable
    #[arg(long, value_name = "SCHEMA=TYPE", value_parser = pair)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replace_schema: Vec<(String, String)>,
    /// `GLOB=ATTRIBUTE`: add an attribute to the types whose names match; repeatable
    #[arg(long, value_name = "GLOB=ATTRIBUTE", value_parser = pair)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub type_attribute: Vec<(String, String)>,
    /// `GLOB=ATTRIBUTE`: add an attribute to the fields whose `Type.field` match; repeatable
    #[arg(long, value_name = "GLOB=ATTRIBUTE", value_parser = pair)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub field_attribute: Vec<(String, String)>,
}

/// Checks a package name as cargo would take it (and as a TOML string needs no escape).
fn package_name(name: &str) -> Result<String, String> {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(name.to_owned())
    } else {
        Err("a package name is ASCII letters, digits, `-` and `_`, starting with a letter".into())
    }
}

/// Checks a version as `MAJOR.MINOR.PATCH` with an optional pre-release or build of
/// `[0-9A-Za-z.-+]` (what a TOML string holds without escapes).
fn semver(version: &str) -> Result<String, String> {
    let (core, rest) = version
        .find(['-', '+'])
        .map_or((version, ""), |at| version.split_at(at));
    let numbers: Vec<&str> = core.split('.').collect();
    let valid = numbers.len() == 3
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.+".contains(&b));
    if valid {
        Ok(version.to_owned())
    } else {
        Err("a version is MAJOR.MINOR.PATCH, as `0.1.0` or `1.2.3-beta.1`".into())
    }
}

/// Checks a license expression for the characters SPDX uses (letters, digits, `.-+()` and
/// spaces), which a TOML string holds without escapes.
fn spdx(license: &str) -> Result<String, String> {
    let valid = !license.trim().is_empty()
        && license
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" .-+()".contains(&b));
    if valid {
        Ok(license.to_owned())
    } else {
        Err("a license is an SPDX expression, as `MIT OR Apache-2.0`".into())
    }
}

/// Checks a checkout's path for what a TOML string holds as it is written (no quote, backslash
/// or control character), its trailing `/` dropped.
fn checkout(dir: &str) -> Result<String, String> {
    let trimmed = dir.trim_end_matches('/');
    let valid =
        !trimmed.is_empty() && !dir.chars().any(|c| c == '"' || c == '\\' || c.is_control());
    if valid {
        Ok(trimmed.to_owned())
    } else {
        Err("a checkout is a path such as `../toolkit`, with `/` between its parts".into())
    }
}

/// The crates generated code names, by the kinds of the inputs: `toolkit-http` for OpenAPI
/// documents, `toolkit-mcp` for MCP snapshots.
const SOURCE_CRATES: [&str; 2] = ["toolkit-http", "toolkit-mcp"];

/// `KEY=VALUE`, split at the first `=`.
fn pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() && !value.is_empty() => {
            Ok((key.to_owned(), value.to_owned()))
        }
        _ => Err("expected KEY=VALUE".into()),
    }
}

impl CrateArgs {
    /// The arguments the crate in `dir` was written with, from its `Cargo.toml` (inputs made
    /// relative to the current directory again).
    ///
    /// # Errors
    ///
    /// No manifest, or one without `[package.metadata.toolkit-gen]`, as a sentence.
    pub fn recorded(dir: &Path) -> Result<Self, String> {
        let path = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let manifest: toml::Table = toml::from_str(&text)
            .map_err(|error| format!("{} is no crate manifest: {error}", path.display()))?;
        let package = manifest.get("package");
        let recorded = package
            .and_then(|p| p.get("metadata"))
            .and_then(|m| m.get("toolkit-gen"))
            .ok_or_else(|| {
                format!(
                    "{} records no `[package.metadata.toolkit-gen]`: give the arguments of `toolkit-gen crate`",
                    path.display()
                )
            })?;
        let mut args: CrateArgs = recorded.clone().try_into().map_err(|error| {
            format!(
                "the `[package.metadata.toolkit-gen]` of {} does not read: {error}",
                path.display()
            )
        })?;
        let text_of = |key: &str| {
            package
                .and_then(|p| p.get(key))
                .and_then(toml::Value::as_str)
                .map(str::to_owned)
        };
        args.name = text_of("name");
        args.version = text_of("version");
        args.license = text_of("license");
        // The checkout holds each dependency; a crate written before the source kinds had crates
        // of their own depends on `toolkit-runtime`, in the same checkout.
        let dependencies = manifest.get("dependencies");
        args.toolkit_path = SOURCE_CRATES
            .iter()
            .chain(&["toolkit-runtime"])
            .find_map(|name| {
                dependencies
                    .and_then(|d| d.get(*name))
                    .and_then(|d| d.get("path"))
                    .and_then(toml::Value::as_str)
            })
            .map(|path| match path.trim_end_matches('/').rsplit_once('/') {
                Some((checkout, _)) if !checkout.is_empty() => checkout.to_owned(),
                Some(_) => "/".to_owned(),
                None => ".".to_owned(),
            });
        for input in args.openapi.iter_mut().chain(args.mcp.iter_mut()) {
            *input = dir.join(&*input);
        }
        Ok(args)
    }

    /// The package name (`crate` refuses to run without one).
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("generated-tools")
    }

    /// Whether no input is given: `check DIR` then reads the crate's recorded arguments.
    pub fn has_inputs(&self) -> bool {
        !self.openapi.is_empty() || !self.mcp.is_empty()
    }

    /// These arguments as the crate in `dir` records them: inputs relative to `dir`.
    fn relative_to(&self, dir: &Path) -> Self {
        let base = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let relative = |path: &PathBuf| {
            let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            let relative = pathdiff::diff_paths(&path, &base).unwrap_or(path);
            // The same bytes on every platform.
            PathBuf::from(relative.to_string_lossy().replace('\\', "/"))
        };
        Self {
            openapi: self.openapi.iter().map(relative).collect(),
            mcp: self.mcp.iter().map(relative).collect(),
            ..self.clone()
        }
    }

    /// The builder of the crate's modules.
    fn builder(&self) -> Builder {
        let mut builder = Builder::new().strictness(self.strictness.unwrap_or_default().into());
        for document in &self.openapi {
            builder = builder.openapi(document);
        }
        for snapshot in &self.mcp {
            builder = builder.mcp_snapshot(snapshot);
        }
        for id in &self.include_operation_id {
            builder = builder.include_operation_id(id);
        }
        for id in &self.exclude_operation_id {
            builder = builder.exclude_operation_id(id);
        }
        for tag in &self.include_tag {
            builder = builder.include_tag(tag);
        }
        for tag in &self.exclude_tag {
            builder = builder.exclude_tag(tag);
        }
        for glob in &self.include_tools {
            builder = builder.include_tools(glob);
        }
        for glob in &self.exclude_tools {
            builder = builder.exclude_tools(glob);
        }
        for (tool, name) in &self.rename {
            builder = builder.rename(tool, name);
        }
        if let Some(length) = self.max_name_length {
            builder = builder.max_name_length(usize::from(length));
        }
        for (format, rust_type) in &self.replace_format {
            builder = builder.replace_format(format, rust_type);
        }
        for (schema, rust_type) in &self.replace_schema {
            builder = builder.replace_schema(schema, rust_type);
        }
        for (glob, attribute) in &self.type_attribute {
            builder = builder.type_attribute(glob, attribute);
        }
        for (glob, attribute) in &self.field_attribute {
            builder = builder.field_attribute(glob, attribute);
        }
        builder
    }

    /// The crate's files, as paths relative to its directory and their contents, in a fixed
    /// order.
    ///
    /// # Errors
    ///
    /// Every problem of every input.
    pub fn files(&self, dir: &Path) -> Result<Vec<(PathBuf, String)>, GenerateError> {
        let modules = self.builder().modules()?;
        let mut files = vec![
            (PathBuf::from("Cargo.toml"), self.manifest(dir)),
            (PathBuf::from("README.md"), self.readme(&modules)),
            (PathBuf::from("src/lib.rs"), self.lib(&modules)),
        ];
        for module in &modules {
            files.push((
                PathBuf::from("src").join(&module.file),
                module.module.code.clone(),
            ));
            if let Some(catalog) = &module.module.catalog {
                files.push((
                    PathBuf::from("src").join(&catalog.file),
                    catalog.json.clone(),
                ));
            }
        }
        Ok(files)
    }

    /// The inputs' file names, for headers.
    fn inputs(&self) -> String {
        let names: Vec<String> = self
            .openapi
            .iter()
            .chain(&self.mcp)
            .map(|path| label(path))
            .collect();
        names.join(", ")
    }

    /// The crates the generated code names: `toolkit-http` for OpenAPI documents, `toolkit-mcp`
    /// for snapshots (each module's `__tk` is its crate's `codegen`), and nothing else.
    fn dependencies(&self) -> String {
        let [http, mcp] = SOURCE_CRATES;
        let mut dependencies = String::new();
        for (name, used) in [
            (http, !self.openapi.is_empty()),
            (mcp, !self.mcp.is_empty()),
        ] {
            if !used {
                continue;
            }
            let _ = match &self.toolkit_path {
                Some(checkout) => {
                    let path = if checkout.ends_with('/') {
                        format!("{checkout}{name}")
                    } else {
                        format!("{checkout}/{name}")
                    };
                    writeln!(dependencies, "{name} = {{ path = {path:?} }}")
                }
                None => writeln!(dependencies, "{name} = \"0.1\""),
            };
        }
        dependencies
    }

    fn manifest(&self, dir: &Path) -> String {
        let license = match &self.license {
            Some(license) => format!("license = {license:?}\n"),
            None => "publish = false\n".to_owned(),
        };
        // Serialising these arguments cannot fail: strings, paths and lists of them.
        let recorded = toml::to_string(&self.relative_to(dir)).unwrap_or_default();
        format!(
            "# @generated by toolkit-gen from {inputs}. Do not edit: regenerate with `toolkit-gen crate`,\n\
             # check with `toolkit-gen check DIR` (it reads the arguments below).\n\
             [package]\n\
             name = {name:?}\n\
             version = {version:?}\n\
             edition = \"2024\"\n\
             {license}\
             description = \"Typed tools of {inputs}, generated by toolkit-gen.\"\n\
             \n\
             [dependencies]\n\
             {dependencies}\
             \n\
             [package.metadata.toolkit-gen]\n\
             {recorded}",
            dependencies = self.dependencies(),
            inputs = self.inputs(),
            name = self.name(),
            version = self.version.as_deref().unwrap_or("0.1.0"),
        )
    }

    fn lib(&self, modules: &[GeneratedModule]) -> String {
        let mut lib = format!(
            "// @generated by toolkit-gen from {}. Do not edit.\n\
             //! Typed tools, generated by toolkit-gen: one module per input, each with the input\n\
             //! types of its tools and one source type (a `ToolSource`) with a typed method per\n\
             //! tool. See the README.\n\n",
            self.inputs()
        );
        for module in modules {
            let _ = writeln!(
                lib,
                "/// The tools of `{}`.\n#[rustfmt::skip]\npub mod {};",
                label(&module.input),
                module.name
            );
        }
        lib
    }

    fn readme(&self, modules: &[GeneratedModule]) -> String {
        let mut readme = format!(
            "<!-- @generated by toolkit-gen from {}. Do not edit. -->\n# {}\n\n\
             Typed tools generated by `toolkit-gen` — input structs that refuse unknown fields, and\n\
             one source type per input that any `toolkit_runtime::Assembly` takes beside sources\n\
             discovered at run time.\n\n",
            self.inputs(),
            self.name()
        );
        readme.push_str("| module | input | tools | fully typed |\n| --- | --- | --- | --- |\n");
        for module in modules {
            let typed = module.module.tools.iter().filter(|t| t.is_typed()).count();
            let _ = writeln!(
                readme,
                "| `{}` | `{}` | {} | {typed} |",
                module.name,
                label(&module.input),
                module.module.tools.len(),
            );
        }
        let kind = |module: &GeneratedModule| {
            if self.mcp.contains(&module.input) {
                InputKind::McpSnapshot
            } else {
                InputKind::OpenApi
            }
        };
        readme.push_str("\n## Use\n\n```rust,ignore\n");
        for module in modules {
            match kind(module) {
                InputKind::OpenApi | InputKind::Graphql => {
                    let _ = writeln!(
                        readme,
                        "// {0}: an HTTP API, over a reqwest client that carries your credentials\n\
                         let {0} = {1}::{0}::{2}::new(\"https://api.example.com\", client)?;",
                        module.name,
                        self.name().replace('-', "_"),
                        module.source_type,
                    );
                }
                InputKind::McpSnapshot => {
                    let _ = writeln!(
                        readme,
                        "// {0}: an MCP server; `verify()` compares its live tools with the snapshot\n\
                         let {0} = {1}::{0}::{2}::http(url, client)?;",
                        module.name,
                        self.name().replace('-', "_"),
                        module.source_type,
                    );
                }
            }
        }
        readme.push_str(
            "```\n\n## Regenerate\n\n\
             Run `toolkit-gen crate` again with the same arguments (`Cargo.toml` records them under\n\
             `[package.metadata.toolkit-gen]`); `toolkit-gen check DIR` exits 1 when the committed\n\
             code is stale.\n",
        );
        readme
    }
}

/// `toolkit-gen crate ... -o DIR`.
pub fn write_crate(
    args: &CrateArgs,
    dir: &std::path::Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    if !args.has_inputs() || args.name.is_none() {
        let _ = writeln!(
            err,
            "toolkit-gen crate: give the inputs (`--openapi DOC`, `--mcp SNAPSHOT`) and `--name NAME`"
        );
        return ExitCode::from(USAGE);
    }
    // Made before the files (the inputs are recorded relative to it), and removed again when
    // nothing is written into it.
    let existed = dir.exists();
    if let Err(error) = std::fs::create_dir_all(dir) {
        let _ = writeln!(err, "toolkit-gen: cannot create {}: {error}", dir.display());
        return ExitCode::FAILURE;
    }
    let files = match args.files(dir) {
        Ok(files) => files,
        Err(error) => {
            if !existed {
                let _ = std::fs::remove_dir(dir);
            }
            let _ = writeln!(err, "{error}");
            return ExitCode::from(USAGE);
        }
    };
    for (path, text) in &files {
        let path = dir.join(path);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text));
        if let Err(error) = written {
            let _ = writeln!(err, "toolkit-gen: cannot write {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    }
    let _ = writeln!(
        out,
        "toolkit-gen: wrote the crate {} ({} files) to {}",
        args.name(),
        files.len(),
        dir.display()
    );
    ExitCode::SUCCESS
}
