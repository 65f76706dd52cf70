//! What an agent reads of a failed call (seed 002, "ToolFailure").
//!
//! An MCP client shows the agent a failed call's message and nothing else, so whatever the agent
//! should do next must be folded into that message when the failure is built: [`message`] joins
//! the reason with a [`Remediation`] (`hint`, then `suggestedTool` as "Try list_things."),
//! dropping empty parts. Every value the caller supplied is passed through [`echo`] before it is
//! quoted back (cut to [`ECHO_LIMIT`] UTF-16 code units), and a value the engine produced itself
//! — a path, a diagnostic — through [`echo_engine`] ([`ENGINE_ECHO_LIMIT`]).
//!
//! ```
//! use toolkit_serve::failure::{Remediation, echo, message};
//!
//! let id = "missing-id";
//! let remediation = Remediation::hint("List the ids first.").suggested_tool("list_things");
//! assert_eq!(
//!     message(&format!("No thing \"{}\".", echo(id)), &remediation),
//!     "No thing \"missing-id\". List the ids first. Try list_things.",
//! );
//! assert_eq!(message("Config missing.", &Remediation::hint("Run init.")), "Config missing. Run init.");
//! ```

use serde::{Deserialize, Serialize};

pub use toolkit_core::text::ECHO_LIMIT;
use toolkit_core::text::cut_utf16;

/// The most UTF-16 code units of a value the engine itself produced (a path, a diagnostic)
/// echoed back in a message: larger than [`ECHO_LIMIT`], which is for caller-supplied values.
pub const ENGINE_ECHO_LIMIT: usize = 2_000;

/// What the agent can do about a failure, folded into its message by [`message`].
///
/// Serialized in the wire's camelCase (`hint`, `suggestedTool`); both parts are optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remediation {
    /// A sentence saying what to do next ("List the ids first.").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The tool to call next; the message reads `Try <tool>.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_tool: Option<String>,
}

impl Remediation {
    /// A remediation that is only a hint.
    ///
    /// ```
    /// use toolkit_serve::failure::Remediation;
    /// assert_eq!(Remediation::hint("Run init.").hint.as_deref(), Some("Run init."));
    /// ```
    pub fn hint(hint: impl Into<String>) -> Self {
        Self {
            hint: Some(hint.into()),
            suggested_tool: None,
        }
    }

    /// This remediation, also naming the tool to call next (replacing any named before).
    ///
    /// ```
    /// use toolkit_serve::failure::Remediation;
    /// let remediation = Remediation::default().suggested_tool("list_things");
    /// assert_eq!(remediation.suggested_tool.as_deref(), Some("list_things"));
    /// ```
    #[must_use]
    pub fn suggested_tool(mut self, tool: impl Into<String>) -> Self {
        self.suggested_tool = Some(tool.into());
        self
    }
}

/// The message an agent reads: `reason`, then the remediation's hint, then `Try <tool>.`, joined
/// by single spaces.
///
/// Each part is trimmed and an empty part is dropped, so an omitted or empty hint or tool never
/// leaves a double space or a stray "Try .".
pub fn message(reason: &str, remediation: &Remediation) -> String {
    let tool = remediation
        .suggested_tool
        .as_deref()
        .map(str::trim)
        .filter(|tool| !tool.is_empty());
    let try_tool = tool.map(|tool| format!("Try {tool}."));
    let parts = [
        Some(reason),
        remediation.hint.as_deref(),
        try_tool.as_deref(),
    ];
    let mut joined = String::new();
    for part in parts
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(part);
    }
    joined
}

/// A caller-supplied `value` as it may be echoed back in a message: cut to [`ECHO_LIMIT`] UTF-16
/// code units without splitting a surrogate pair, then `…`; a shorter value is kept whole.
///
/// ```
/// use toolkit_serve::failure::echo;
/// assert_eq!(echo(&"a".repeat(500)).encode_utf16().count(), 201); // 200, then "…"
/// ```
pub fn echo(value: &str) -> String {
    cut_utf16(value, ECHO_LIMIT)
}

/// A `value` the engine itself produced (a path, a diagnostic) as it may be echoed back: cut like
/// [`echo`], at the larger [`ENGINE_ECHO_LIMIT`].
///
/// ```
/// use toolkit_serve::failure::echo_engine;
/// let path = format!("/work/{}file.ts", "deep/".repeat(100));
/// assert_eq!(echo_engine(&path), path);
/// ```
pub fn echo_engine(value: &str) -> String {
    cut_utf16(value, ENGINE_ECHO_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Remediation {
        Remediation::hint("List the ids first.").suggested_tool("list_things")
    }

    #[test]
    fn the_remediation_is_folded_into_the_message() {
        assert_eq!(
            message("No thing \"x\".", &full()),
            "No thing \"x\". List the ids first. Try list_things."
        );
    }

    #[test]
    fn a_missing_part_is_dropped() {
        assert_eq!(
            message("Config missing.", &Remediation::hint("Run init.")),
            "Config missing. Run init."
        );
        assert_eq!(
            message(
                "Config missing.",
                &Remediation::default().suggested_tool("init")
            ),
            "Config missing. Try init."
        );
        assert_eq!(
            message("Config missing.", &Remediation::default()),
            "Config missing."
        );
    }

    #[test]
    fn an_empty_part_leaves_no_double_space_and_no_stray_try() {
        let empty = Remediation {
            hint: Some(String::new()),
            suggested_tool: Some("  ".into()),
        };
        assert_eq!(message("Config missing.", &empty), "Config missing.");
        let blank_hint = Remediation {
            hint: Some(" ".into()),
            suggested_tool: Some("init".into()),
        };
        assert_eq!(
            message("Config missing.", &blank_hint),
            "Config missing. Try init."
        );
        assert_eq!(message("", &full()), "List the ids first. Try list_things.");
        assert_eq!(message("", &Remediation::default()), "");
    }

    #[test]
    fn parts_are_trimmed() {
        let remediation = Remediation::hint("  Run init. ").suggested_tool(" init ");
        assert_eq!(
            message(" Config missing.  ", &remediation),
            "Config missing. Run init. Try init."
        );
    }

    #[test]
    fn the_remediation_reads_and_writes_camel_case() {
        let json = serde_json::to_value(full()).ok();
        assert_eq!(
            json,
            Some(
                serde_json::json!({"hint": "List the ids first.", "suggestedTool": "list_things"})
            )
        );
        let read: Result<Remediation, _> = serde_json::from_str(r#"{"suggestedTool":"t"}"#);
        assert_eq!(read.ok(), Some(Remediation::default().suggested_tool("t")));
    }

    #[test]
    fn a_caller_value_is_cut_to_200_units_then_an_ellipsis() {
        let cut = echo(&"a".repeat(500));
        assert_eq!(cut.encode_utf16().count(), ECHO_LIMIT + 1);
        assert!(cut.starts_with(&"a".repeat(200)));
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn a_value_at_the_limit_is_kept_whole() {
        let exact = "a".repeat(ECHO_LIMIT);
        assert_eq!(echo(&exact), exact);
        assert_eq!(echo(""), "");
    }

    #[test]
    fn a_surrogate_pair_at_the_cut_is_never_split() {
        // 199 units, then '😀' (two units) would end at 201: it goes whole, not half.
        let value = format!("{}😀b", "a".repeat(199));
        assert_eq!(echo(&value), format!("{}…", "a".repeat(199)));
        // 198 units, then '😀' ends exactly at 200: kept.
        let value = format!("{}😀b", "a".repeat(198));
        assert_eq!(echo(&value), format!("{}😀…", "a".repeat(198)));
    }

    #[test]
    fn units_are_utf16_not_bytes_or_chars() {
        // 'é' is two bytes but one unit: 200 of them fit.
        let accents = "é".repeat(200);
        assert_eq!(echo(&accents), accents);
        // '😀' is one char but two units: only 100 fit.
        let faces = "😀".repeat(150);
        assert_eq!(echo(&faces), format!("{}…", "😀".repeat(100)));
    }

    #[test]
    fn an_engine_value_takes_2000_units() {
        let path = format!("/work/{}file.ts", "deep/".repeat(100));
        assert_eq!(echo_engine(&path), path);
        assert_ne!(echo(&path), path);
        let long = "x".repeat(5_000);
        let cut = echo_engine(&long);
        assert_eq!(cut.encode_utf16().count(), ENGINE_ECHO_LIMIT + 1);
        assert!(cut.ends_with('…'));
    }
}
