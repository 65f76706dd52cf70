//! `toolkit-gen audit SNAPSHOT`: the static audit of an MCP `tools/list` ([`toolkit_gen::audit`]).
//!
//! ```text
//! toolkit-gen audit tools.json [--format json|text] [--deny error|warning|info] [--closed-input off|info|warning|error]
//! ```
//!
//! `SNAPSHOT` is what `toolkit-gen snapshot` writes, a bare `{"tools": [...]}` result, or a bare
//! array of tools. The findings go to stdout: JSON by default (`{"findings": [...], "summary":
//! {...}}`), or one line per finding and a summary with `--format text`.
//!
//! Exit status: **0** when no finding is as severe as `--deny` (errors by default: info and
//! warnings pass), **1** when one is (`--deny warning` fails on warnings too, `--deny info` on
//! anything), **2** when the listing cannot be read.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

use super::format::Format;
use super::progress::Progress;
use toolkit_gen::audit::{self, AuditOptions, Finding, Severity, Summary};

/// The exit code of a listing that cannot be read.
const USAGE: u8 = 2;

/// A severity on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Level {
    /// Info and worse.
    Info,
    /// Warnings and errors.
    #[value(alias = "warnings")]
    Warning,
    /// Errors only.
    #[value(alias = "errors")]
    Error,
}

impl From<Level> for Severity {
    fn from(level: Level) -> Self {
        match level {
            Level::Info => Self::Info,
            Level::Warning => Self::Warning,
            Level::Error => Self::Error,
        }
    }
}

/// The severity of open input levels on the command line, or `off`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ClosedInput {
    /// Not checked.
    Off,
    /// Reported as info.
    #[default]
    Info,
    /// Reported as warnings.
    Warning,
    /// Reported as errors.
    Error,
}

/// The arguments of `audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// The listing: a snapshot as `toolkit-gen snapshot` writes it, a bare `{"tools": [...]}`
    /// result, or a bare array of tools.
    pub snapshot: PathBuf,
    /// `json` (a stable shape, for scripts) or `text` (for people).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// The least severity that fails the run (exit 1).
    #[arg(long, value_enum, default_value_t = Level::Error)]
    pub deny: Level,
    /// How an object level of an input that accepts properties it does not name is reported.
    #[arg(long, value_enum, default_value_t)]
    pub closed_input: ClosedInput,
}

impl AuditArgs {
    fn options(&self) -> AuditOptions {
        let mut options = AuditOptions::default();
        options.closed_input = match self.closed_input {
            ClosedInput::Off => None,
            ClosedInput::Info => Some(Severity::Info),
            ClosedInput::Warning => Some(Severity::Warning),
            ClosedInput::Error => Some(Severity::Error),
        };
        options
    }
}

/// Reads the tools of the listing in `file`, as the server wrote them.
///
/// # Errors
///
/// A sentence naming the file when it cannot be read, is no JSON, or holds no tools.
pub fn read_listing(file: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|error| format!("cannot read {}: {error}", file.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|error| format!("{}: {error}", file.display()))?;
    match audit::tools_of(&value) {
        Some(tools) => Ok(tools.to_vec()),
        None => Err(format!(
            "{}: neither a snapshot, a tools/list result, nor an array of tools",
            file.display()
        )),
    }
}

/// `toolkit-gen audit`: writes the findings to `out` and exits by their severity.
pub fn run(args: &AuditArgs, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    let tools = match read_listing(&args.snapshot) {
        Ok(tools) => tools,
        Err(problem) => {
            let _ = writeln!(err, "toolkit-gen: {problem}");
            return ExitCode::from(USAGE);
        }
    };
    let findings = sweep(&tools, &args.options());
    let written = match args.format {
        Format::Json => writeln!(out, "{}", audit::to_json(tools.len(), &findings)),
        Format::Text => write!(out, "{}", audit::text(tools.len(), &findings)),
    };
    if written.is_err() {
        return ExitCode::FAILURE;
    }
    let worst = Summary::of(tools.len(), &findings).worst();
    if worst.is_some_and(|worst| worst >= Severity::from(args.deny)) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The audit, under a progress bar when the listing is long.
fn sweep(tools: &[Value], options: &AuditOptions) -> Vec<Finding> {
    let progress = Progress::new(tools.len() as u64, "auditing");
    let findings = audit::audit_with(tools, options, &mut |_| progress.step());
    progress.finish();
    findings
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(file: PathBuf, format: Format, deny: Level) -> AuditArgs {
        AuditArgs {
            snapshot: file,
            format,
            deny,
            closed_input: ClosedInput::Info,
        }
    }

    #[test]
    fn the_exit_status_follows_the_worst_finding_and_deny() {
        let dir = std::env::temp_dir().join(format!("toolkit-gen-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let warned = dir.join("warned.json");
        std::fs::write(
            &warned,
            r#"{"tools": [{"name": "a", "inputSchema": {"type": "object", "additionalProperties": false}}]}"#,
        )
        .unwrap();
        let broken = dir.join("broken.json");
        std::fs::write(
            &broken,
            r#"[{"name": "a", "inputSchema": {"type": "string"}}]"#,
        )
        .unwrap();
        let cases = [
            (&warned, Level::Error, ExitCode::SUCCESS),
            (&warned, Level::Warning, ExitCode::FAILURE),
            (&broken, Level::Error, ExitCode::FAILURE),
        ];
        for (file, deny, code) in cases {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            assert_eq!(
                run(&args(file.clone(), Format::Json, deny), &mut out, &mut err),
                code,
                "{} {deny:?}",
                file.display()
            );
            let report: Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(report["summary"]["tools"], 1);
        }
        let missing = dir.join("missing.json");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            run(
                &args(missing, Format::Text, Level::Error),
                &mut out,
                &mut err
            ),
            ExitCode::from(USAGE)
        );
        assert!(String::from_utf8_lossy(&err).contains("cannot read"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
