//! `toolkit-gen openapi DOC [-o FILE]`, `toolkit-gen graphql SCHEMA [-o FILE]` and `toolkit-gen
//! mcp SNAPSHOT [-o FILE]`, the subcommands that write one module: the input types of every tool
//! of an OpenAPI document, of a GraphQL schema's root fields, or of an MCP `tools/list`
//! snapshot, and the source type that runs them, as one Rust module — made by
//! [`toolkit_gen::Builder`], as a `build.rs` makes it (a whole crate: [`krate`](super::krate)).
//!
//! The module goes to `FILE` (or stdout), and its source's catalog (the operations or tools as
//! JSON, which the module reads with `include_str!`) to `STEM.tools.json` beside it, unless
//! `--embed-catalog` keeps it inside (as it is on stdout); stderr gets each operation that is no
//! tool, one line with the share of tools whose input is fully typed, then a line per place typed
//! as `serde_json::Value` (`tool: #/pointer: reason`). Exit 0 when written, 2 when the input
//! cannot be read, 1 when the module cannot be made or written. `FILE`'s folder is made first
//! when it is missing, before the input is read, so a long generation never ends unwritten for
//! want of it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use toolkit_gen::builder::{Builder, DEFAULT_MAX_TYPES, InputKind, Module};

use super::progress::Progress;
use super::strictness::StrictnessArg;

/// The exit code of an input that cannot be read.
const USAGE: u8 = 2;

/// The arguments of `openapi`, `graphql` and `mcp`.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// The input: an OpenAPI document (JSON or YAML), a GraphQL schema (SDL or introspection
    /// JSON), or an MCP snapshot (as `toolkit-gen snapshot` writes it, a bare `{"tools": [...]}`
    /// result, or a bare array of tools).
    pub input: PathBuf,
    /// Where to write the module (stdout when left out); the catalog of a `STEM.rs` goes beside
    /// it, to `STEM.tools.json`.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Keep the catalog inside the module (a raw string constant) rather than beside it.
    #[arg(long)]
    pub embed_catalog: bool,
    /// How closed the generated structs are.
    #[arg(long, value_enum, default_value_t)]
    pub strictness: StrictnessArg,
    /// The most types the module may hold: a document that needs more fails, naming the tool
    /// that passed the bound, instead of taking the machine's memory (about 70 KB a type).
    #[arg(long, default_value_t = DEFAULT_MAX_TYPES)]
    pub max_types: usize,
    /// The source's name, which an assembly puts before its tools' names (and, in
    /// UpperCamelCase, the source type's name) [default: the input's file stem, in snake_case]
    #[arg(long)]
    pub name: Option<String>,
}

impl GenerateArgs {
    /// The builder `build.rs` would use for this input, read as `kind`: the strictness and type
    /// bound asked for, the module named `--name` (else after the input, as the builder does),
    /// and the catalog beside an output file named `*.rs` (`STEM.tools.json`), unless
    /// `--embed-catalog` (or stdout) keeps it inside.
    fn builder(&self, kind: InputKind) -> Builder {
        let builder = Builder::new()
            .strictness(self.strictness.into())
            .max_types(self.max_types);
        let builder = match kind {
            InputKind::OpenApi => builder.openapi(&self.input),
            InputKind::Graphql => builder.graphql(&self.input),
            InputKind::McpSnapshot => builder.mcp_snapshot(&self.input),
        };
        let builder = match &self.name {
            Some(name) => builder.module_name(&self.input, name),
            None => builder,
        };
        let beside = match &self.output {
            Some(output)
                if !self.embed_catalog && output.extension().is_some_and(|e| e == "rs") =>
            {
                output
                    .file_stem()
                    .map(|stem| format!("{}.tools.json", stem.to_string_lossy()))
            }
            _ => None,
        };
        match beside {
            Some(file) => builder.catalog_file_of(&self.input, file),
            None => builder.embed_catalog(true),
        }
    }
}

/// `toolkit-gen openapi DOC [-o FILE]`: each operation that is no tool said on stderr.
pub fn openapi(args: &GenerateArgs, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    generate(args, InputKind::OpenApi, out, err)
}

/// `toolkit-gen graphql SCHEMA [-o FILE]`: a tool per root query and mutation field, each
/// field that is no tool (a subscription) said on stderr.
pub fn graphql(args: &GenerateArgs, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    generate(args, InputKind::Graphql, out, err)
}

/// `toolkit-gen mcp SNAPSHOT [-o FILE]`.
pub fn mcp(args: &GenerateArgs, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    generate(args, InputKind::McpSnapshot, out, err)
}

/// The module of `args`' input read as `kind`, made by the [`Builder`] as `build.rs` makes it
/// (under a progress bar that steps as each tool is typed), and written.
fn generate(
    args: &GenerateArgs,
    kind: InputKind,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    if let Err(code) = make_output_folder(args, err) {
        return code;
    }
    let mut progress: Option<Progress> = None;
    let made = args.builder(kind).modules_observed(&mut |tool, tools| {
        progress
            .get_or_insert_with(|| Progress::new(tools as u64, "generating"))
            .step_with(tool);
    });
    if let Some(progress) = progress {
        progress.finish();
    }
    let module = match made {
        Ok(mut modules) if modules.len() == 1 => modules.remove(0),
        Ok(_) => {
            let _ = writeln!(err, "toolkit-gen: nothing was generated");
            return ExitCode::FAILURE;
        }
        Err(error) => {
            for problem in error.problems() {
                let _ = writeln!(err, "toolkit-gen: {problem}");
            }
            if error.unread() {
                return ExitCode::from(USAGE);
            }
            let _ = writeln!(err, "toolkit-gen: nothing was written");
            return ExitCode::FAILURE;
        }
    };
    for skipped in &module.skipped {
        let _ = writeln!(err, "{skipped}");
    }
    finish(args, &module.module, out, err)
}

/// Makes the folder the output file goes into when it is missing, before any work.
///
/// # Errors
///
/// The output's exit code, once the reason is written to `err`, when it cannot be made.
fn make_output_folder(args: &GenerateArgs, err: &mut dyn Write) -> Result<(), ExitCode> {
    let Some(folder) = args
        .output
        .as_deref()
        .and_then(Path::parent)
        .filter(|folder| !folder.as_os_str().is_empty())
    else {
        return Ok(());
    };
    std::fs::create_dir_all(folder).map_err(|error| {
        let _ = writeln!(
            err,
            "toolkit-gen: cannot make the folder {} for the output: {error}; nothing was read",
            folder.display()
        );
        ExitCode::FAILURE
    })
}

/// Writes the module and the typed-share report.
fn finish(
    args: &GenerateArgs,
    emitted: &Module,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    if !emitted.errors.is_empty() {
        for error in &emitted.errors {
            let _ = writeln!(err, "toolkit-gen: {}: {error}", args.input.display());
        }
        let _ = writeln!(err, "toolkit-gen: nothing was written");
        return ExitCode::FAILURE;
    }
    let written = match &args.output {
        Some(path) => {
            let catalog = emitted.catalog.as_ref().map(|catalog| {
                let beside = path.with_file_name(&catalog.file);
                let same = |a: &Path, b: &Path| {
                    a == b
                        || std::fs::canonicalize(a)
                            .is_ok_and(|a| std::fs::canonicalize(b).is_ok_and(|b| a == b))
                };
                if same(&beside, &args.input) {
                    return Err(format!(
                        "the catalog would overwrite the input {}: name the module otherwise, \
                         or give --embed-catalog",
                        args.input.display()
                    ));
                }
                std::fs::write(&beside, &catalog.json)
                    .map_err(|error| format!("cannot write {}: {error}", beside.display()))
            });
            catalog.unwrap_or(Ok(())).and_then(|()| {
                std::fs::write(path, &emitted.code)
                    .map_err(|error| format!("cannot write {}: {error}", path.display()))
            })
        }
        None => out
            .write_all(emitted.code.as_bytes())
            .map_err(|error| format!("cannot write the module: {error}")),
    };
    if let Err(problem) = written {
        let _ = writeln!(err, "toolkit-gen: {problem}");
        return ExitCode::FAILURE;
    }
    let typed = emitted.tools.iter().filter(|t| t.is_typed()).count();
    let _ = writeln!(
        err,
        "toolkit-gen: {typed} of {} tools fully typed ({:.1}%)",
        emitted.tools.len(),
        emitted.typed_share() * 100.0
    );
    for tool in &emitted.tools {
        for untyped in &tool.untyped {
            let _ = writeln!(err, "  {}: {untyped}", tool.tool);
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strict generation of `input`, to `output` or stdout.
    fn args(input: PathBuf, output: Option<PathBuf>, embed_catalog: bool) -> GenerateArgs {
        GenerateArgs {
            input,
            output,
            strictness: StrictnessArg::Strict,
            max_types: DEFAULT_MAX_TYPES,
            name: None,
            embed_catalog,
        }
    }

    #[test]
    fn a_module_over_its_type_bound_is_refused_naming_the_tool_and_writes_nothing() {
        let dir = std::env::temp_dir().join(format!("toolkit-gen-bound-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let input = dir.join("tasks.json");
        let tool = |name: &str| {
            format!(
                r#"{{"name":"{name}","inputSchema":{{"type":"object","properties":{{"at":{{"type":"object","properties":{{"{name}":{{"type":"string"}}}}}}}}}}}}"#
            )
        };
        std::fs::write(
            &input,
            format!(
                r#"{{"tools":[{},{},{}]}}"#,
                tool("one"),
                tool("two"),
                tool("three")
            ),
        )
        .unwrap_or_default();
        let output = dir.join("tasks.rs");
        let mut bounded = args(input.clone(), Some(output.clone()), false);
        // Each tool makes two types (its input and `at`): the second passes a bound of 3.
        bounded.max_types = 3;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(mcp(&bounded, &mut out, &mut err), ExitCode::FAILURE);
        let err = String::from_utf8_lossy(&err);
        assert!(
            err.contains("more than 3 types") && err.contains("tool `two` (2 of 3)"),
            "{err}"
        );
        assert!(!output.exists() && !dir.join("tasks.tools.json").exists());
        bounded.max_types = 6;
        assert_eq!(
            mcp(&bounded, &mut out, &mut err.to_string().into_bytes()),
            ExitCode::SUCCESS
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_snapshot_in_every_shape_is_read() {
        let dir = std::env::temp_dir().join(format!("toolkit-gen-generate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let tool = r#"{"name":"echo","annotations":null,"inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#;
        for (name, text) in [
            ("bare.json", format!("[{tool}]")),
            ("result.json", format!(r#"{{"tools":[{tool}]}}"#)),
            (
                "snapshot.json",
                format!(r#"{{"server":"s","protocolVersion":"2025-06-18","tools":[{tool}]}}"#),
            ),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap_or_default();
            let definitions = toolkit_gen::builder::read_mcp_snapshot(&path);
            assert_eq!(definitions.map(|d| d.len()), Ok(1), "{name}");
            let args = args(path, None, false);
            let (mut out, mut err) = (Vec::new(), Vec::new());
            assert_eq!(mcp(&args, &mut out, &mut err), ExitCode::SUCCESS);
            let code = String::from_utf8_lossy(&out);
            assert!(
                code.starts_with(&format!("// @generated by toolkit-gen from {name}")),
                "{code}"
            );
            assert!(code.contains("pub struct EchoInput"), "{code}");
            assert!(String::from_utf8_lossy(&err).contains("1 of 1 tools fully typed"));
        }
        let path = dir.join("bad.json");
        std::fs::write(&path, r#"{"tools":[{"name":""}]}"#).unwrap_or_default();
        let args = args(path, None, false);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(mcp(&args, &mut out, &mut err), ExitCode::from(USAGE));
        assert!(String::from_utf8_lossy(&err).contains("#/tools/0"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_module_written_to_a_file_reads_its_catalog_from_beside_it() {
        let dir = std::env::temp_dir().join(format!("toolkit-gen-catalog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let input = dir.join("tasks.json");
        let tool = r#"{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#;
        std::fs::write(&input, format!(r#"{{"tools":[{tool}]}}"#)).unwrap_or_default();
        for embed_catalog in [false, true] {
            let output = dir.join(format!("tasks_{embed_catalog}.rs"));
            let args = args(input.clone(), Some(output.clone()), embed_catalog);
            let (mut out, mut err) = (Vec::new(), Vec::new());
            assert_eq!(mcp(&args, &mut out, &mut err), ExitCode::SUCCESS);
            let code = std::fs::read_to_string(&output).unwrap_or_default();
            let beside = dir.join(format!("tasks_{embed_catalog}.tools.json"));
            let catalog = std::fs::read_to_string(&beside);
            if embed_catalog {
                assert!(catalog.is_err());
                assert!(
                    code.contains(r#"pub const TOOLS: &'static str = r#"["#),
                    "{code}"
                );
            } else {
                let catalog = catalog.unwrap_or_default();
                assert!(catalog.contains(r#""name":"echo""#), "{catalog}");
                let include = format!("::core::include_str!(\"tasks_{embed_catalog}.tools.json\")");
                assert!(code.contains(&include), "{code}");
            }
        }
        // A module named after its input's `*.tools.json`: its catalog would overwrite it.
        let input = dir.join("tasks.tools.json");
        std::fs::write(&input, format!(r#"{{"tools":[{tool}]}}"#)).unwrap_or_default();
        let args = args(input.clone(), Some(dir.join("tasks.rs")), false);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(mcp(&args, &mut out, &mut err), ExitCode::FAILURE);
        let err = String::from_utf8_lossy(&err);
        assert!(err.contains("would overwrite the input"), "{err}");
        let kept = std::fs::read_to_string(&input).unwrap_or_default();
        assert!(kept.starts_with(r#"{"tools""#), "{kept}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
