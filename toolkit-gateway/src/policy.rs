//! The gateway's policy: rules of glob patterns over a source's and a tool's name, each deciding
//! allow, approve or block; where several match, the most restrictive wins; where none does, the
//! configured default.
//!
//! A tool that appears when the catalog is refreshed falls under the same rules as every other:
//! nothing is granted to it that the rules do not say. A rule that matches no tool of the catalog
//! is reported when the gateway starts, because a `block` that blocks nothing is usually a
//! misspelt name, and a silent one is a security bug.

use globset::{Glob, GlobMatcher};
use toolkit_runtime::{Decision, ToolDefinition};

use super::catalog::Catalog;
use super::config::{ConfigError, PolicyConfig};

/// The compiled policy.
#[derive(Clone, Debug)]
pub struct Policy {
    default: Decision,
    rules: Vec<Rule>,
}

/// One compiled rule, with its patterns as written (for reports).
#[derive(Clone, Debug)]
struct Rule {
    source: GlobMatcher,
    tool: GlobMatcher,
    decision: Decision,
}

impl Rule {
    fn matches(&self, source: &str, tool: &str) -> bool {
        self.source.is_match(source) && self.tool.is_match(tool)
    }

    fn describe(&self) -> String {
        format!(
            "{{ source = {:?}, tool = {:?}, decision = {:?} }}",
            self.source.glob().glob(),
            self.tool.glob().glob(),
            name(self.decision)
        )
    }
}

impl Policy {
    /// Compiles the `[policy]` table.
    ///
    /// # Errors
    ///
    /// Every pattern that is no glob, with its rule's number.
    pub fn new(config: &PolicyConfig) -> Result<Self, ConfigError> {
        let mut problems = Vec::new();
        let mut rules = Vec::new();
        for (number, rule) in config.rules.iter().enumerate() {
            let source = compile(&rule.source, number, "source", &mut problems);
            let tool = compile(&rule.tool, number, "tool", &mut problems);
            if let (Some(source), Some(tool)) = (source, tool) {
                rules.push(Rule {
                    source,
                    tool,
                    decision: rule.decision,
                });
            }
        }
        if problems.is_empty() {
            Ok(Self {
                default: config.default,
                rules,
            })
        } else {
            Err(ConfigError(problems.join("; ")))
        }
    }

    /// What the policy decides for `tool` of `source`: the most restrictive decision of the rules
    /// that match, or the default when none does.
    pub fn decide(&self, source: &str, tool: &ToolDefinition) -> Decision {
        self.decide_name(source, tool.name())
    }

    /// What the policy decides for what `source` names `name` (a tool, a prompt, or a resource's
    /// URI as the source writes it): as [`Policy::decide`], the rules' `tool` pattern matched
    /// against `name`.
    pub fn decide_name(&self, source: &str, name: &str) -> Decision {
        self.rules
            .iter()
            .filter(|rule| rule.matches(source, name))
            .map(|rule| rule.decision)
            .max_by_key(|decision| severity(*decision))
            .unwrap_or(self.default)
    }

    /// The rules that match no tool of `catalog`, described as written (for the start report).
    pub fn dead_rules(&self, catalog: &Catalog) -> Vec<String> {
        self.rules
            .iter()
            .filter(|rule| {
                !catalog.entries().any(|(source, definitions)| {
                    definitions
                        .iter()
                        .any(|definition| rule.matches(source, definition.name()))
                })
            })
            .map(Rule::describe)
            .collect()
    }
}

fn compile(
    pattern: &str,
    number: usize,
    field: &str,
    problems: &mut Vec<String>,
) -> Option<GlobMatcher> {
    match Glob::new(pattern) {
        Ok(glob) => Some(glob.compile_matcher()),
        Err(error) => {
            problems.push(format!(
                "policy rule {}: `{field}` is no glob pattern: {error}",
                number + 1
            ));
            None
        }
    }
}

/// Block is the most restrictive, then approve, then allow.
fn severity(decision: Decision) -> u8 {
    match decision {
        Decision::Allow => 0,
        Decision::Approve => 1,
        Decision::Block => 2,
    }
}

fn name(decision: Decision) -> &'static str {
    match decision {
        Decision::Allow => "allow",
        Decision::Approve => "approve",
        Decision::Block => "block",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::config::RuleConfig;
    use crate::tests::tool;

    fn rule(source: &str, tool: &str, decision: Decision) -> RuleConfig {
        RuleConfig {
            source: source.into(),
            tool: tool.into(),
            decision,
        }
    }

    fn policy(default: Decision, rules: Vec<RuleConfig>) -> Policy {
        Policy::new(&PolicyConfig { default, rules }).unwrap()
    }

    #[test]
    fn the_most_restrictive_matching_rule_wins_whatever_the_order() {
        let rules = vec![
            rule("*", "*", Decision::Allow),
            rule("github", "delete_*", Decision::Block),
            rule("github", "*_repo", Decision::Approve),
        ];
        let policy = policy(Decision::Approve, rules);
        assert_eq!(
            policy.decide("github", &tool("delete_repo")),
            Decision::Block
        );
        assert_eq!(
            policy.decide("github", &tool("create_repo")),
            Decision::Approve
        );
        assert_eq!(
            policy.decide("github", &tool("list_issues")),
            Decision::Allow
        );
        assert_eq!(
            policy.decide("gitlab", &tool("delete_repo")),
            Decision::Allow
        );
    }

    #[test]
    fn a_tool_no_rule_matches_gets_the_default() {
        let policy = policy(
            Decision::Block,
            vec![rule("notes", "find", Decision::Allow)],
        );
        assert_eq!(policy.decide("notes", &tool("find")), Decision::Allow);
        assert_eq!(policy.decide("notes", &tool("erase")), Decision::Block);
    }

    #[test]
    fn rules_that_match_no_tool_are_reported() {
        let policy = policy(
            Decision::Allow,
            vec![
                rule("github", "delete_*", Decision::Block),
                rule("githbu", "*", Decision::Block),
            ],
        );
        let mut catalog = Catalog::default();
        catalog.set("github", vec![tool("delete_repo")]);
        assert_eq!(
            policy.dead_rules(&catalog),
            ["{ source = \"githbu\", tool = \"*\", decision = \"block\" }"]
        );
    }

    #[test]
    fn a_bad_pattern_is_named_with_its_rule() {
        let error = Policy::new(&PolicyConfig {
            default: Decision::Allow,
            rules: vec![rule("*", "[unclosed", Decision::Block)],
        })
        .unwrap_err();
        assert!(
            error
                .0
                .starts_with("policy rule 1: `tool` is no glob pattern"),
            "{error}"
        );
    }
}
