//! The gateway's policy: rules deciding allow, approve or block for the tools they match, by
//! the source's and the tool's names (globs), by what the tool's annotations say, and by who asks
//! (a principal's name, groups and scopes). Where several rules match, the most restrictive
//! decision wins; where none does, the configured default.
//!
//! A tool that appears when the catalog is refreshed falls under the same rules as every other:
//! nothing is granted to it that the rules do not say. A rule that matches no tool of the catalog,
//! or no person the gateway can know, is reported when the gateway starts, because a `block` that
//! blocks nothing is usually a misspelt name, and a silent one is a security bug.
//!
//! What a person sees depends only on which rules naming people hold for them: their
//! [`View`]. People of one view are shown one toolkit, built once.

use globset::{Glob, GlobMatcher};
use serde_json::Value;
use toolkit_core::context::Principal;
use toolkit_core::{Decision, ToolDefinition};

use super::catalog::Catalog;
use super::config::{AuthConfig, AuthMode, ConfigError, PolicyConfig, RuleConfig};

/// The compiled policy.
#[derive(Clone, Debug)]
pub struct Policy {
    default: Decision,
    /// The path of the claim that lists a person's groups (`realm_access.roles`: two steps).
    groups_claim: Vec<String>,
    rules: Vec<Rule>,
    /// How many rules name people: the length of every [`View`].
    personal: usize,
}

/// Which of the policy's rules that name people hold for one person, in the rules' order. People
/// with one view are shown the same tools under the same decisions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct View(Vec<bool>);

impl View {
    /// The view as text (`"01"`), for a server's cache of views.
    pub fn key(&self) -> String {
        self.0
            .iter()
            .map(|holds| if *holds { '1' } else { '0' })
            .collect()
    }

    /// The view [`View::key`] wrote; `None` for text it does not write.
    pub fn from_key(key: &str) -> Option<Self> {
        key.chars()
            .map(|bit| match bit {
                '1' => Some(true),
                '0' => Some(false),
                _ => None,
            })
            .collect::<Option<Vec<bool>>>()
            .map(Self)
    }
}

/// One compiled rule, with its patterns as written (for reports).
#[derive(Clone, Debug)]
struct Rule {
    source: GlobMatcher,
    tool: GlobMatcher,
    annotations: Annotations,
    /// Who the rule is for, with its place in a [`View`]; `None`: everyone.
    who: Option<(usize, Who)>,
    decision: Decision,
}

/// The annotations a rule matches; each given one must be as the tool's hints read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Annotations {
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
}

impl Annotations {
    fn of(rule: &RuleConfig) -> Self {
        Self {
            read_only: rule.read_only,
            destructive: rule.destructive,
            idempotent: rule.idempotent,
            open_world: rule.open_world,
        }
    }

    fn any(&self) -> bool {
        *self != Self::default()
    }

    fn matches(&self, definition: &ToolDefinition) -> bool {
        let hints = definition.annotations.hints();
        let holds = |wanted: Option<bool>, has: bool| wanted.is_none_or(|wanted| wanted == has);
        holds(self.read_only, hints.read_only)
            && holds(self.destructive, hints.destructive)
            && holds(self.idempotent, hints.idempotent)
            && holds(self.open_world, hints.open_world)
    }
}

/// Who a rule is for: every condition given holds.
#[derive(Clone, Debug)]
struct Who {
    name: Option<GlobMatcher>,
    /// One of them at least.
    groups: Vec<String>,
    /// Every one of them.
    scopes: Vec<String>,
}

impl Who {
    fn matches(&self, principal: &Principal, groups_claim: &[String]) -> bool {
        self.name
            .as_ref()
            .is_none_or(|name| name.is_match(principal.name()))
            && (self.groups.is_empty() || {
                let held = groups(principal, groups_claim);
                self.groups
                    .iter()
                    .any(|group| held.contains(&group.as_str()))
            })
            && (self.scopes.is_empty() || {
                let held = scopes(principal);
                self.scopes
                    .iter()
                    .all(|scope| held.contains(&scope.as_str()))
            })
    }
}

/// The groups `principal`'s token lists in the claim at `path`: an array of strings, or one
/// string of names separated by spaces.
fn groups<'a>(principal: &'a Principal, path: &[String]) -> Vec<&'a str> {
    let mut steps = path.iter();
    let Some(first) = steps.next() else {
        return Vec::new();
    };
    let found = steps.try_fold(principal.claims().get(first.as_str()), |value, step| {
        Some(value?.as_object()?.get(step.as_str()))
    });
    found.flatten().map(names).unwrap_or_default()
}

/// The scopes `principal`'s token holds: `scope` (names separated by spaces) or `scp` (an array,
/// or a string as `scope` is).
fn scopes(principal: &Principal) -> Vec<&str> {
    let claims = principal.claims();
    claims
        .get("scope")
        .or_else(|| claims.get("scp"))
        .map(names)
        .unwrap_or_default()
}

fn names(value: &Value) -> Vec<&str> {
    match value {
        Value::String(text) => text.split_whitespace().collect(),
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

impl Rule {
    /// Whether the rule holds for the tool or name, leaving aside who asks.
    fn matches_name(&self, source: &str, name: &str) -> bool {
        self.source.is_match(source) && self.tool.is_match(name)
    }

    fn matches(&self, source: &str, definition: &ToolDefinition) -> bool {
        self.matches_name(source, definition.name()) && self.annotations.matches(definition)
    }

    /// Whether the rule holds for the people of `view`.
    fn holds_in(&self, view: &View) -> bool {
        self.who
            .as_ref()
            .is_none_or(|(place, _)| view.0.get(*place).copied().unwrap_or(false))
    }

    fn describe(&self) -> String {
        let mut text = format!(
            "{{ source = {:?}, tool = {:?}",
            self.source.glob().glob(),
            self.tool.glob().glob(),
        );
        let annotations = [
            ("read_only", self.annotations.read_only),
            ("destructive", self.annotations.destructive),
            ("idempotent", self.annotations.idempotent),
            ("open_world", self.annotations.open_world),
        ];
        for (key, value) in annotations {
            if let Some(value) = value {
                text.push_str(&format!(", {key} = {value}"));
            }
        }
        if let Some((_, who)) = &self.who {
            if let Some(name) = &who.name {
                text.push_str(&format!(", principal = {:?}", name.glob().glob()));
            }
            if !who.groups.is_empty() {
                text.push_str(&format!(", groups = {:?}", who.groups));
            }
            if !who.scopes.is_empty() {
                text.push_str(&format!(", scopes = {:?}", who.scopes));
            }
        }
        text.push_str(&format!(", decision = {:?} }}", name(self.decision)));
        text
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
        let mut personal = 0;
        for (number, rule) in config.rules.iter().enumerate() {
            let source = compile(&rule.source, number, "source", &mut problems);
            let tool = compile(&rule.tool, number, "tool", &mut problems);
            let who_name = rule
                .principal
                .as_ref()
                .map(|pattern| compile(pattern, number, "principal", &mut problems));
            let (Some(source), Some(tool)) = (source, tool) else {
                continue;
            };
            let who = match who_name {
                Some(None) => continue,
                _ if !rule.names_principals() => None,
                name => {
                    personal += 1;
                    Some((
                        personal - 1,
                        Who {
                            name: name.flatten(),
                            groups: rule.groups.clone(),
                            scopes: rule.scopes.clone(),
                        },
                    ))
                }
            };
            rules.push(Rule {
                source,
                tool,
                annotations: Annotations::of(rule),
                who,
                decision: rule.decision,
            });
        }
        if config.groups_claim.split('.').any(str::is_empty) {
            problems.push(format!(
                "policy.groups_claim {:?} is no claim name or dotted path",
                config.groups_claim
            ));
        }
        if problems.is_empty() {
            Ok(Self {
                default: config.default,
                groups_claim: config.groups_claim.split('.').map(str::to_owned).collect(),
                rules,
                personal,
            })
        } else {
            Err(ConfigError(problems.join("; ")))
        }
    }

    /// Which of the rules naming people hold for `principal`.
    pub fn view(&self, principal: &Principal) -> View {
        let mut holds = vec![false; self.personal];
        for rule in &self.rules {
            if let Some((place, who)) = &rule.who {
                holds[*place] = who.matches(principal, &self.groups_claim);
            }
        }
        View(holds)
    }

    /// Whether any rule names people (else every person has one view).
    pub fn is_personal(&self) -> bool {
        self.personal > 0
    }

    /// What the policy decides for `tool` of `source`, for the people of `view`: the most
    /// restrictive decision of the rules that match, or the default when none does.
    pub fn decide(&self, view: &View, source: &str, tool: &ToolDefinition) -> Decision {
        self.most_restrictive(
            self.rules
                .iter()
                .filter(|rule| rule.holds_in(view) && rule.matches(source, tool)),
        )
    }

    /// What the policy decides for what `source` names `name` (a prompt, or a resource's URI as
    /// the source writes it), for the people of `view`: as [`Policy::decide`], the rules' `tool`
    /// pattern matched against `name`. A rule that names annotations speaks of tools only.
    pub fn decide_name(&self, view: &View, source: &str, name: &str) -> Decision {
        self.most_restrictive(self.rules.iter().filter(|rule| {
            rule.holds_in(view) && !rule.annotations.any() && rule.matches_name(source, name)
        }))
    }

    /// Whether the policy may decide *approve* for `tool` of `source` for someone: for the one
    /// person without authentication, or by a rule naming people.
    pub fn may_approve(&self, source: &str, tool: &ToolDefinition) -> bool {
        self.decide(&self.view(&Principal::loopback()), source, tool) == Decision::Approve
            || self.rules.iter().any(|rule| {
                rule.who.is_some()
                    && rule.decision == Decision::Approve
                    && rule.matches(source, tool)
            })
    }

    fn most_restrictive<'a>(&self, rules: impl Iterator<Item = &'a Rule>) -> Decision {
        rules
            .map(|rule| rule.decision)
            .max_by_key(|decision| severity(*decision))
            .unwrap_or(self.default)
    }

    /// The rules that match no tool of `catalog` and none of `named` (the `(source, name)` of the
    /// sources' prompts and event types, which a rule without annotations decides too), described
    /// as written (for the start report).
    pub fn dead_rules(&self, catalog: &Catalog, named: &[(String, String)]) -> Vec<String> {
        self.rules
            .iter()
            .filter(|rule| {
                !catalog.entries().any(|(source, definitions)| {
                    definitions
                        .iter()
                        .any(|definition| rule.matches(source, definition))
                }) && (rule.annotations.any()
                    || !named
                        .iter()
                        .any(|(source, name)| rule.matches_name(source, name)))
            })
            .map(Rule::describe)
            .collect()
    }

    /// The rules that name people no request the gateway takes can come from, described as
    /// written with why (for the start report): a name no configured token has, or groups and
    /// scopes where no token has claims (opaque tokens, or no authentication), or a groups claim
    /// the issuer does not say it issues.
    pub fn unknowable_rules(&self, auth: Option<&AuthConfig>) -> Vec<String> {
        let names: Option<Vec<Principal>> = match auth {
            None => Some(vec![Principal::loopback()]),
            Some(auth) if auth.mode == AuthMode::Tokens => Some(
                auth.tokens
                    .iter()
                    .map(|token| Principal::token(&token.name))
                    .collect(),
            ),
            Some(_) => None,
        };
        self.rules
            .iter()
            .filter_map(|rule| {
                let (_, who) = rule.who.as_ref()?;
                let why = if let Some(names) = &names {
                    if !who.groups.is_empty() || !who.scopes.is_empty() {
                        Some(
                            "it names groups or scopes, and no token the gateway takes carries                              claims (only `[serve.auth] mode = \"jwt\"` does)"
                                .to_owned(),
                        )
                    } else if !names
                        .iter()
                        .any(|principal| who.matches(principal, &self.groups_claim))
                    {
                        let known: Vec<&str> = names.iter().map(Principal::name).collect();
                        Some(format!(
                            "its principal matches none of those the gateway takes ({})",
                            known.join(", ")
                        ))
                    } else {
                        None
                    }
                } else {
                    None
                };
                why.map(|why| format!("{} matches no one: {why}", rule.describe()))
            })
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
    use crate::config::NamedToken;
    use crate::tests::tool;
    use serde_json::json;

    fn rule(source: &str, tool: &str, decision: Decision) -> RuleConfig {
        RuleConfig {
            source: source.into(),
            tool: tool.into(),
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
            principal: None,
            groups: Vec::new(),
            scopes: Vec::new(),
            decision,
        }
    }

    fn policy(default: Decision, rules: Vec<RuleConfig>) -> Policy {
        Policy::new(&PolicyConfig {
            default,
            groups_claim: "groups".into(),
            rules,
        })
        .unwrap()
    }

    fn everyone(policy: &Policy) -> View {
        policy.view(&Principal::loopback())
    }

    /// A tool whose annotations are `annotations` (the definition's form: `readOnly`, …).
    fn annotated(name: &str, annotations: serde_json::Value) -> ToolDefinition {
        let schema = json!({ "type": "object" });
        let mut definition =
            ToolDefinition::new(name, schema.as_object().cloned().unwrap()).unwrap();
        definition.annotations = serde_json::from_value(annotations).unwrap();
        definition
    }

    /// A JWT's holder with `claims`.
    fn person(name: &str, claims: serde_json::Value) -> Principal {
        Principal::jwt("https://issuer.example", name)
            .with_claims(claims.as_object().cloned().unwrap())
    }

    #[test]
    fn the_most_restrictive_matching_rule_wins_whatever_the_order() {
        let rules = vec![
            rule("*", "*", Decision::Allow),
            rule("github", "delete_*", Decision::Block),
            rule("github", "*_repo", Decision::Approve),
        ];
        let policy = policy(Decision::Approve, rules);
        let view = everyone(&policy);
        assert_eq!(
            policy.decide(&view, "github", &tool("delete_repo")),
            Decision::Block
        );
        assert_eq!(
            policy.decide(&view, "github", &tool("create_repo")),
            Decision::Approve
        );
        assert_eq!(
            policy.decide(&view, "github", &tool("list_issues")),
            Decision::Allow
        );
        assert_eq!(
            policy.decide(&view, "gitlab", &tool("delete_repo")),
            Decision::Allow
        );
    }

    #[test]
    fn a_tool_no_rule_matches_gets_the_default() {
        let policy = policy(
            Decision::Block,
            vec![rule("notes", "find", Decision::Allow)],
        );
        let view = everyone(&policy);
        assert_eq!(
            policy.decide(&view, "notes", &tool("find")),
            Decision::Allow
        );
        assert_eq!(
            policy.decide(&view, "notes", &tool("erase")),
            Decision::Block
        );
    }

    #[test]
    fn read_only_tools_allowed_the_rest_approved_as_the_readme_teaches() {
        let mut reads = rule("*", "*", Decision::Allow);
        reads.read_only = Some(true);
        let policy = policy(Decision::Approve, vec![reads]);
        let view = everyone(&policy);
        let reader = annotated("read_file", json!({ "readOnly": true }));
        let writer = annotated("write_file", json!({ "readOnly": false }));
        let silent = annotated("move_file", json!({}));
        assert_eq!(policy.decide(&view, "files", &reader), Decision::Allow);
        assert_eq!(policy.decide(&view, "files", &writer), Decision::Approve);
        assert_eq!(policy.decide(&view, "files", &silent), Decision::Approve);
    }

    #[test]
    fn an_unstated_hint_has_the_protocols_default() {
        let mut destroys = rule("*", "*", Decision::Block);
        destroys.destructive = Some(true);
        let mut closed = rule("*", "*", Decision::Approve);
        closed.open_world = Some(false);
        let policy = policy(Decision::Allow, vec![destroys, closed]);
        let view = everyone(&policy);
        // Unstated: destructive, open-world.
        assert_eq!(
            policy.decide(&view, "s", &annotated("silent", json!({}))),
            Decision::Block
        );
        // A read-only tool is never destructive, whatever it says.
        assert_eq!(
            policy.decide(
                &view,
                "s",
                &annotated("reader", json!({ "readOnly": true, "destructive": true }))
            ),
            Decision::Allow
        );
        assert_eq!(
            policy.decide(
                &view,
                "s",
                &annotated("local", json!({ "destructive": false, "openWorld": false }))
            ),
            Decision::Approve
        );
    }

    #[test]
    fn rules_by_person_name_groups_and_scopes() {
        let mut admins = rule("files", "*", Decision::Allow);
        admins.groups = vec!["admins".into()];
        let mut bob = rule("files", "delete_*", Decision::Block);
        bob.principal = Some("bob*".into());
        let mut writers = rule("files", "write_*", Decision::Allow);
        writers.scopes = vec!["files:write".into(), "tools".into()];
        let policy = policy(Decision::Block, vec![admins, bob, writers]);
        let alice = person("alice", json!({ "groups": ["staff", "admins"] }));
        let bob = person(
            "bob",
            json!({ "groups": "admins", "scope": "tools files:write" }),
        );
        let carol = person("carol", json!({ "scp": ["files:write", "tools"] }));
        let dave = person("dave", json!({ "scope": "tools" }));
        let decide =
            |who: &Principal, name: &str| policy.decide(&policy.view(who), "files", &tool(name));
        assert_eq!(decide(&alice, "delete_file"), Decision::Allow);
        assert_eq!(decide(&bob, "delete_file"), Decision::Block);
        assert_eq!(decide(&bob, "read_file"), Decision::Allow);
        assert_eq!(decide(&carol, "write_file"), Decision::Allow);
        assert_eq!(decide(&carol, "read_file"), Decision::Block);
        assert_eq!(
            decide(&dave, "write_file"),
            Decision::Block,
            "one scope of two"
        );
        // One view per set of rules holding: alice and an admin of another name share one.
        let erin = person("erin", json!({ "groups": ["admins"] }));
        assert_eq!(policy.view(&alice), policy.view(&erin));
        assert_ne!(policy.view(&alice), policy.view(&bob));
        assert_eq!(
            View::from_key(&policy.view(&bob).key()),
            Some(policy.view(&bob))
        );
        assert_eq!(View::from_key("01x"), None);
    }

    #[test]
    fn the_groups_claim_may_be_a_dotted_path() {
        let mut admins = rule("*", "*", Decision::Allow);
        admins.groups = vec!["admin".into()];
        let policy = Policy::new(&PolicyConfig {
            default: Decision::Block,
            groups_claim: "realm_access.roles".into(),
            rules: vec![admins],
        })
        .unwrap();
        let keycloak = person("k", json!({ "realm_access": { "roles": ["admin"] } }));
        let flat = person("f", json!({ "roles": ["admin"], "groups": ["admin"] }));
        assert_eq!(
            policy.decide(&policy.view(&keycloak), "s", &tool("t")),
            Decision::Allow
        );
        assert_eq!(
            policy.decide(&policy.view(&flat), "s", &tool("t")),
            Decision::Block
        );
        let bad = Policy::new(&PolicyConfig {
            default: Decision::Block,
            groups_claim: "realm_access.".into(),
            rules: Vec::new(),
        });
        assert!(bad.is_err());
    }

    #[test]
    fn a_rule_naming_annotations_speaks_of_tools_only() {
        let mut reads = rule("*", "*", Decision::Block);
        reads.read_only = Some(false);
        let policy = policy(Decision::Allow, vec![reads]);
        let view = everyone(&policy);
        assert_eq!(
            policy.decide_name(&view, "s", "file:///notes"),
            Decision::Allow
        );
        assert_eq!(policy.decide(&view, "s", &tool("t")), Decision::Block);
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
            policy.dead_rules(&catalog, &[]),
            ["{ source = \"githbu\", tool = \"*\", decision = \"block\" }"]
        );
        // A rule naming a source's prompt or event type, not a tool, is not dead.
        let policy = self::policy(
            Decision::Allow,
            vec![rule("other", "bad-event", Decision::Block)],
        );
        assert_eq!(policy.dead_rules(&catalog, &[]).len(), 1);
        let named = [("other".to_owned(), "bad-event".to_owned())];
        assert!(policy.dead_rules(&catalog, &named).is_empty());
    }

    #[test]
    fn rules_that_match_no_one_the_gateway_takes_are_reported() {
        let mut alice = rule("*", "*", Decision::Allow);
        alice.principal = Some("alice".into());
        let mut alcie = rule("*", "*", Decision::Allow);
        alcie.principal = Some("alcie".into());
        let mut admins = rule("*", "*", Decision::Allow);
        admins.groups = vec!["admins".into()];
        let policy = policy(Decision::Block, vec![alice, alcie, admins]);
        let tokens = AuthConfig {
            mode: AuthMode::Tokens,
            resource: None,
            issuer: None,
            jwks_url: None,
            scopes: Vec::new(),
            leeway_seconds: 30,
            token_types: Vec::new(),
            tokens: vec![NamedToken {
                name: "alice".into(),
                env: "ALICE".into(),
            }],
        };
        let reported = policy.unknowable_rules(Some(&tokens));
        assert_eq!(reported.len(), 2, "{reported:?}");
        assert!(reported[0].contains("\"alcie\"") && reported[0].contains("(alice)"));
        assert!(reported[1].contains("groups"));
        // Without authentication, the one person is `loopback`.
        assert_eq!(policy.unknowable_rules(None).len(), 3);
        let jwt = AuthConfig {
            mode: AuthMode::Jwt,
            tokens: Vec::new(),
            ..tokens
        };
        assert!(policy.unknowable_rules(Some(&jwt)).is_empty());
    }

    #[test]
    fn a_bad_pattern_is_named_with_its_rule() {
        let mut bad = rule("*", "*", Decision::Block);
        bad.principal = Some("[unclosed".into());
        let error = Policy::new(&PolicyConfig {
            default: Decision::Allow,
            groups_claim: "groups".into(),
            rules: vec![rule("*", "[unclosed", Decision::Block), bad],
        })
        .unwrap_err();
        assert!(
            error
                .0
                .starts_with("policy rule 1: `tool` is no glob pattern"),
            "{error}"
        );
        assert!(error.0.contains("policy rule 2: `principal`"), "{error}");
    }
}
