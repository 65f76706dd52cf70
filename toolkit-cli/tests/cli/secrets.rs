//! `toolkit-gen secrets`: people's credentials for a gateway's source set from standard input,
//! listed without a value and removed, in the sealed file the gateway reads
//! (`toolkit-gateway/tests/gateway/team.rs` serves calls with them).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// The key that seals the test's secrets file (base64 of 32 bytes).
const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// `toolkit-gen secrets ACTION --config DIR/toolkit.toml --source secured` with `arguments` and
/// `stdin`: its exit code, stdout and stderr.
fn secrets(dir: &Path, action: &str, arguments: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolkit-gen"))
        .args(["secrets", action, "--config"])
        .arg(dir.join("toolkit.toml"))
        .args(["--source", "secured"])
        .args(arguments)
        .env("CLI_SECRETS_KEY", KEY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn secrets_are_set_from_stdin_listed_without_values_and_removed() {
    let dir = std::env::temp_dir().join(format!("toolkit-gen-secrets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("secured.json"),
        r#"{"openapi": "3.1.0", "info": {"title": "secured", "version": "1"}, "paths": {}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("toolkit.toml"),
        "[policy]\ndefault = \"allow\"\n\n[[sources]]\nname = \"secured\"\nopenapi = \"secured.json\"\n\
         base_url = \"http://127.0.0.1:9\"\n\
         per_person = { secrets = \"people.secrets\", key_env = \"CLI_SECRETS_KEY\" }\n",
    )
    .unwrap();
    for person in ["alice", "bob"] {
        let principal = format!("token:{person}");
        let (code, said, stderr) = secrets(
            &dir,
            "set",
            &["--principal", &principal, "--name", "bearer"],
            &format!("{person}-upstream-secret\n"),
        );
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(said, format!("kept bearer of {principal} for secured\n"));
    }
    let (code, listed, _) = secrets(&dir, "list", &[], "");
    assert_eq!(code, 0);
    assert_eq!(listed, "token:alice\tbearer\ntoken:bob\tbearer\n");
    let sealed = std::fs::read(dir.join("people.secrets")).unwrap();
    assert!(!String::from_utf8_lossy(&sealed).contains("upstream-secret"));

    // No value on standard input: refused, nothing kept.
    let (code, _, stderr) = secrets(
        &dir,
        "set",
        &["--principal", "token:carol", "--name", "bearer"],
        "",
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("no value on standard input"), "{stderr}");

    let (code, _, stderr) = secrets(&dir, "remove", &["--principal", "token:bob"], "");
    assert_eq!(code, 0, "{stderr}");
    let (_, listed, _) = secrets(&dir, "list", &[], "");
    assert_eq!(listed, "token:alice\tbearer\n");
    let (code, _, stderr) = secrets(&dir, "remove", &["--principal", "token:bob"], "");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("token:bob has no credential for secured"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
