//! Skills (SEP-2640) through the gateway: `toolkit-gateway --config` in front of two FastMCP
//! 4.2 servers (PyPI `fastmcp`, `skills_server.py`) serving a folder of skills, as sources `docs`
//! and `more`. FastMCP's own client (`skills_client.py`) lists, gets and reads every skill
//! through the gateway, checking each file's digest and size: each source's skills are served
//! under its name (`skill://docs/git-workflow/SKILL.md`), their digests as the source wrote them,
//! and a policy rule keeps a skill out. The runtime's client loads them the same way, and refuses
//! a file changed since its entry was read. The TypeScript SDK v2's client (`skills_client.mjs`,
//! its `SkillsClient`) reads the gateway's own skills (`serve.skills`, a folder) beside them.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolkit_mcp::{Mcp, StdioCommand};

use crate::support::root;

/// FastMCP's Python, installed by `scripts/install-test-peers`.
fn fastmcp_python() -> PathBuf {
    let python = root().join("target/peers/fastmcp-python/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-test-peers",
        python.display()
    );
    python
}

/// A copy of the skills folder (the test may change it), and the gateway's configuration in
/// `dir`: `skills_server.py` over it as sources `docs` and `more`, with `rules` (each server given
/// the gateway's `SKILLS_RELOAD` and `FASTMCP_LOG_LEVEL`).
fn configure(dir: &Path, rules: &str) -> PathBuf {
    configure_with(dir, rules, "")
}

/// A copy of the skills folder in `to`.
fn copy_skills(to: &Path) {
    for file in [
        "git-workflow/SKILL.md",
        "pdf-processing/SKILL.md",
        "pdf-processing/references/FORMS.md",
    ] {
        let to = to.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(
            root()
                .join("toolkit-gateway/tests/gateway/skills")
                .join(file),
            to,
        )
        .unwrap();
    }
}

/// As [`configure`], with `serve` as the `[serve]` table.
fn configure_with(dir: &Path, rules: &str, serve: &str) -> PathBuf {
    let skills = dir.join("skills");
    copy_skills(&skills);
    let server = root().join("toolkit-gateway/tests/gateway/skills_server.py");
    let source = |name: &str| {
        format!(
            "\n[[sources]]\nname = \"{name}\"\ncommand = [\"{}\", \"{}\", \"{}\"]\n\
             env = {{ SKILLS_RELOAD = \"SKILLS_RELOAD\", FASTMCP_LOG_LEVEL = \"FASTMCP_LOG_LEVEL\" }}\n",
            fastmcp_python().display(),
            server.display(),
            skills.display()
        )
    };
    let config = format!(
        "[serve]\n{serve}\n\n[catalog]\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n\
         rules = [{rules}]\n{}{}",
        source("docs"),
        source("more")
    );
    let path = dir.join("toolkit.toml");
    std::fs::write(&path, config).unwrap();
    path
}

/// What a peer client printed (one JSON line), once it says it read every skill.
fn read_back(output: &std::process::Output) -> serde_json::Value {
    let seen: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| json!(String::from_utf8_lossy(&output.stdout)));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        seen.get("error").is_none() && seen.is_object(),
        "{seen}\n{stderr}"
    );
    seen
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-skills-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn fastmcps_client_reads_every_sources_skills_through_the_gateway_digests_verified() {
    let dir = scratch("fastmcp");
    let block = r#"{ source = "more", tool = "skill://git-workflow/*", decision = "block" }"#;
    let config = configure(&dir, block);
    let output = std::process::Command::new(fastmcp_python())
        .arg(root().join("toolkit-gateway/tests/gateway/skills_client.py"))
        .args([env!("CARGO_BIN_EXE_toolkit-gateway"), "--config"])
        .arg(&config)
        .env("FASTMCP_LOG_LEVEL", "WARNING")
        .env("SKILLS_RELOAD", "0")
        .output()
        .unwrap();
    let seen = read_back(&output);
    assert_eq!(
        seen["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({}),
        "{seen}"
    );
    let uris: Vec<&str> = seen["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|skill| skill["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://docs/git-workflow/SKILL.md",
            "skill://docs/pdf-processing/SKILL.md",
            "skill://more/pdf-processing/SKILL.md",
        ],
        "each source's skills under its name, the blocked one left out: {seen}"
    );
    for skill in seen["skills"].as_array().unwrap() {
        assert_eq!(skill["verified"], true, "{skill}");
    }
    let forms = &seen["skills"][1]["files"];
    assert_eq!(
        forms["skill://docs/pdf-processing/references/FORMS.md"],
        json!(
            std::fs::metadata(dir.join("skills/pdf-processing/references/FORMS.md"))
                .unwrap()
                .len()
        ),
        "{forms}"
    );
    assert_eq!(seen["skills"][0]["frontmatter"]["license"], "Apache-2.0");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtimes_client_loads_a_skill_through_the_gateway_and_refuses_a_changed_file() {
    let dir = scratch("runtime");
    let config = configure(&dir, "");
    let gateway = Mcp::stdio(
        "gateway",
        StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
            .arg("--config")
            .arg(&config)
            .env("SKILLS_RELOAD", "1")
            .env("FASTMCP_LOG_LEVEL", "WARNING"),
    );
    assert!(gateway.has_skills().await.unwrap());
    let skills = gateway.list_skills().await.unwrap();
    assert_eq!(skills.len(), 4, "{skills:?}");
    let pdf = skills
        .iter()
        .find(|skill| skill.uri == "skill://docs/pdf-processing/SKILL.md")
        .cloned()
        .unwrap();
    assert_eq!(pdf.name(), "pdf-processing");

    let loaded = gateway.load_skill(&pdf.uri).await.unwrap();
    assert!(loaded.verified);
    let written = std::fs::read_to_string(dir.join("skills/pdf-processing/SKILL.md")).unwrap();
    assert_eq!(loaded.text, written);
    let shown = loaded.to_string();
    assert!(shown.starts_with("Skill pdf-processing: "), "{shown}");
    assert!(shown.contains("skill://docs/pdf-processing/"), "{shown}");
    let forms_uri = "skill://docs/pdf-processing/references/FORMS.md";
    let forms = gateway.read_skill_file(&loaded, forms_uri).await.unwrap();
    assert_eq!(
        forms,
        std::fs::read(dir.join("skills/pdf-processing/references/FORMS.md")).unwrap()
    );
    // A file the entry does not list is no file of the skill.
    let unlisted = gateway
        .read_skill_file(&loaded, "skill://docs/git-workflow/SKILL.md")
        .await
        .unwrap_err();
    assert!(
        unlisted.to_string().contains("is not a file of the skill"),
        "{unlisted}"
    );

    // The file changes after the entry was read: refused, naming the file and what differs.
    std::fs::write(
        dir.join("skills/pdf-processing/references/FORMS.md"),
        "# Forms\nChanged since.\n",
    )
    .unwrap();
    let changed = gateway
        .read_skill_file(&loaded, forms_uri)
        .await
        .unwrap_err();
    let message = changed.to_string();
    assert!(message.contains(forms_uri), "{message}");
    assert!(
        message.contains("bytes where its skill's entry says")
            || message.contains("does not match its digest"),
        "{message}"
    );
    // So is a SKILL.md changed since its entry was held.
    let mut edited = written.clone();
    edited.push_str("\nOne more line.\n");
    std::fs::write(dir.join("skills/pdf-processing/SKILL.md"), edited).unwrap();
    let stale = gateway.load(pdf.clone()).await.unwrap_err();
    assert!(stale.to_string().contains(&pdf.uri), "{stale}");
    // Its entry asked anew matches the new content.
    let fresh = gateway.load_skill(&pdf.uri).await.unwrap();
    assert!(fresh.text.ends_with("One more line.\n"));
    // A skill not served.
    let unknown = gateway
        .get_skill("skill://docs/nowhere/SKILL.md")
        .await
        .unwrap_err();
    assert!(
        matches!(
            unknown.reason,
            toolkit_core::Reason::NotFound { .. } | toolkit_core::Reason::InvalidInput { .. }
        ),
        "{unknown:?}"
    );
    gateway.close().await;

    // A client whose answers are capped below a file's size: the file is refused, nothing kept.
    let capped = Mcp::stdio_with_options(
        "gateway",
        StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
            .arg("--config")
            .arg(&config)
            .env("SKILLS_RELOAD", "1")
            .env("FASTMCP_LOG_LEVEL", "WARNING"),
        toolkit_mcp::McpOptions::default().max_response_bytes(256),
    );
    let over = capped.load_skill(&pdf.uri).await.unwrap_err();
    assert!(over.to_string().contains("more than 256 bytes"), "{over}");
    capped.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_typescript_sdks_client_reads_the_gateways_own_skills_and_its_sources() {
    let dir = scratch("typescript");
    copy_skills(&dir.join("own"));
    let config = configure_with(&dir, "", "skills = \"own\"");
    let output = std::process::Command::new("node")
        .arg(root().join("toolkit-gateway/tests/gateway/skills_client.mjs"))
        .args([env!("CARGO_BIN_EXE_toolkit-gateway"), "--config"])
        .arg(&config)
        .env(
            "SDK_MODULES",
            root().join("target/peers/ext-apps-npm/node_modules"),
        )
        .env("FASTMCP_LOG_LEVEL", "WARNING")
        .env("SKILLS_RELOAD", "0")
        .output()
        .unwrap();
    let seen = read_back(&output);
    let uris: Vec<&str> = seen["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|skill| skill["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://git-workflow/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://docs/git-workflow/SKILL.md",
            "skill://docs/pdf-processing/SKILL.md",
            "skill://more/git-workflow/SKILL.md",
            "skill://more/pdf-processing/SKILL.md",
        ],
        "the gateway's own skills, then each source's under its name: {seen}"
    );
    for skill in seen["skills"].as_array().unwrap() {
        assert_eq!(skill["verified"], true, "{skill}");
    }
    assert_eq!(
        seen["skills"][1]["files"]["skill://pdf-processing/references/FORMS.md"],
        json!(
            std::fs::metadata(dir.join("own/pdf-processing/references/FORMS.md"))
                .unwrap()
                .len()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The runtime's client over HTTP with `token`.
fn client(port: u16, token: &str) -> Mcp {
    crate::support::bearer_client(port, Some(token))
}

/// Two people, one gateway: a rule naming bob keeps a source's skill from him (listed, got and
/// read), and alice, at the same time, lists, loads and reads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_a_rule_keeps_from_one_person_is_served_to_the_other() {
    let dir = scratch("people");
    let port = crate::support::free_port();
    let serve = format!(
        "transport = \"http\"\naddress = \"127.0.0.1:{port}\"\n[serve.auth]\nmode = \"tokens\"\n\
         tokens = [{{ name = \"alice\", env = \"ALICE_TOKEN\" }}, {{ name = \"bob\", env = \"BOB_TOKEN\" }}]"
    );
    let rule = r#"{ principal = "bob", source = "docs", tool = "skill://pdf-processing/*", decision = "block" }"#;
    let config = configure_with(&dir, rule, &serve);
    let mut gateway = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(&config)
        .env("ALICE_TOKEN", "alice-token")
        .env("BOB_TOKEN", "bob-token")
        .env("SKILLS_RELOAD", "0")
        .env("FASTMCP_LOG_LEVEL", "WARNING")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (alice, bob) = (client(port, "alice-token"), client(port, "bob-token"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alice.has_skills().await.is_err() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let pdf = "skill://docs/pdf-processing/SKILL.md";
    let forms = "skill://docs/pdf-processing/references/FORMS.md";
    let (hers, his) = tokio::join!(alice.list_skills(), bob.list_skills());
    let uris = |skills: Vec<toolkit_mcp::Skill>| -> Vec<String> {
        skills.into_iter().map(|skill| skill.uri).collect()
    };
    let (hers, his) = (uris(hers.unwrap()), uris(his.unwrap()));
    assert!(hers.contains(&pdf.to_owned()), "{hers:?}");
    assert!(!his.contains(&pdf.to_owned()), "{his:?}");
    assert_eq!(hers.len(), his.len() + 1, "{hers:?} {his:?}");

    let (loaded, refused) = tokio::join!(alice.load_skill(pdf), bob.load_skill(pdf));
    let loaded = loaded.unwrap();
    assert!(loaded.verified);
    let refused = refused.unwrap_err();
    assert!(
        refused.to_string().contains("No skill") || refused.to_string().contains("No resource"),
        "{refused}"
    );
    let read = alice.read_skill_file(&loaded, forms).await.unwrap();
    assert!(!read.is_empty());
    let unread = bob.read_resource(forms).await.unwrap_err();
    assert!(unread.to_string().contains("No resource"), "{unread}");
    let _ = gateway.kill().await;
    let _ = std::fs::remove_dir_all(&dir);
}
