//! What the policy and a person's credential add to a call: the person's view of the policy
//! (twelve rules, four naming people by name, group and scope, read from a JWT's claims) found in
//! the views kept, and their upstream credential read from a secrets file holding 1,000 people.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolkit_core::Decision;
use toolkit_core::context::Principal;
use toolkit_gateway::config::{PolicyConfig, RuleConfig};
use toolkit_gateway::person_secrets::{SealingKey, SecretsFile};
use toolkit_gateway::policy::Policy;

fn rule(tool: &str, decision: Decision) -> RuleConfig {
    RuleConfig {
        source: "*".into(),
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

fn policy_and_credentials(c: &mut Criterion) {
    let mut rules: Vec<RuleConfig> = (0..8)
        .map(|n| rule(&format!("tool_{n}_*"), Decision::Block))
        .collect();
    let mut admins = rule("*", Decision::Allow);
    admins.groups = vec!["admins".into(), "ops".into()];
    let mut writers = rule("write_*", Decision::Allow);
    writers.scopes = vec!["files:write".into()];
    let mut bob = rule("delete_*", Decision::Block);
    bob.principal = Some("bob*".into());
    let mut readers = rule("*", Decision::Allow);
    readers.read_only = Some(true);
    readers.groups = vec!["staff".into()];
    rules.extend([admins, writers, bob, readers]);
    let policy = Policy::new(&PolicyConfig {
        default: Decision::Approve,
        groups_claim: "groups".into(),
        rules,
    })
    .unwrap();
    let alice = Principal::jwt("https://issuer.example", "alice").with_claims(
        json!({"groups": ["staff", "admins"], "scope": "tools files:write"})
            .as_object()
            .cloned()
            .unwrap(),
    );
    // The views a server keeps: one per set of rules holding.
    let mut kept = HashMap::new();
    kept.insert(policy.view(&alice).key(), ());
    c.bench_function("policy: a person's view found among those kept", |b| {
        b.iter(|| {
            let key = policy.view(black_box(&alice)).key();
            black_box(kept.get(&key));
        });
    });

    let dir = std::env::temp_dir().join(format!("toolkit-bench-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("people.secrets");
    let _ = std::fs::remove_file(&path);
    let key = SealingKey::from_base64("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").unwrap();
    let secrets = SecretsFile::open(&path, key).unwrap();
    for person in 0..1_000 {
        let entry = [("bearer".to_owned(), format!("secret-of-{person}"))].into();
        secrets
            .set(
                &format!("jwt:https://issuer.example#p{person}"),
                "api",
                Some(entry),
            )
            .unwrap();
    }
    c.bench_function("credentials: a person's of 1,000, file unchanged", |b| {
        b.iter(|| black_box(secrets.get(black_box("jwt:https://issuer.example#p500"), "api")));
    });
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, policy_and_credentials);
criterion_main!(benches);
