//! What the command-line tests share: running the built `toolkit-gen` as a user runs it.

use std::process::Command;

/// Runs `toolkit-gen` with `args`: its exit code, stdout and stderr.
pub fn run(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_toolkit-gen"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
