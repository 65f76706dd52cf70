//! An audit's findings as JSON (for scripts) and as text (for people).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{Finding, Severity};

/// How many tools were audited and how many findings of each severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// The tools (entries) of the listing.
    pub tools: usize,
    /// The tools with no finding worse than info.
    pub clean: usize,
    /// Findings of severity error.
    pub errors: usize,
    /// Findings of severity warning.
    pub warnings: usize,
    /// Findings of severity info.
    pub info: usize,
}

impl Summary {
    /// The summary of `findings` over a listing of `tools` tools.
    pub fn of(tools: usize, findings: &[Finding]) -> Self {
        let count = |severity| findings.iter().filter(|f| f.severity == severity).count();
        let mut flagged: Vec<usize> = findings
            .iter()
            .filter(|f| f.severity > Severity::Info)
            .map(|f| f.index)
            .collect();
        flagged.sort_unstable();
        flagged.dedup();
        Self {
            tools,
            clean: tools.saturating_sub(flagged.len()),
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            info: count(Severity::Info),
        }
    }

    /// The worst severity found, if any.
    pub fn worst(&self) -> Option<Severity> {
        if self.errors > 0 {
            Some(Severity::Error)
        } else if self.warnings > 0 {
            Some(Severity::Warning)
        } else if self.info > 0 {
            Some(Severity::Info)
        } else {
            None
        }
    }
}

/// The findings as JSON:
///
/// ```json
/// { "findings": [{ "severity": "error", "check": "objectRootedInput", "tool": "edit", "index": 0,
///                  "pointer": "#/inputSchema", "message": "..." }],
///   "summary": { "tools": 1, "clean": 0, "errors": 1, "warnings": 0, "info": 0 } }
/// ```
pub fn to_json(tools: usize, findings: &[Finding]) -> Value {
    let summary = Summary::of(tools, findings);
    let findings: Vec<Value> = findings
        .iter()
        .map(|finding| {
            json!({
                "severity": finding.severity.as_str(),
                "check": finding.check.as_str(),
                "tool": finding.tool,
                "index": finding.index,
                "pointer": finding.pointer,
                "message": finding.message,
            })
        })
        .collect();
    json!({
        "findings": findings,
        "summary": {
            "tools": summary.tools,
            "clean": summary.clean,
            "errors": summary.errors,
            "warnings": summary.warnings,
            "info": summary.info,
        },
    })
}

/// The findings as lines for people, one per finding
/// (`error[objectRootedInput] edit #/inputSchema: ...`), then a summary line.
pub fn text(tools: usize, findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let _ = writeln!(out, "{finding}");
    }
    let summary = Summary::of(tools, findings);
    let _ = writeln!(
        out,
        "{} tools audited, {} clean: {} errors, {} warnings, {} info",
        summary.tools, summary.clean, summary.errors, summary.warnings, summary.info
    );
    out
}
