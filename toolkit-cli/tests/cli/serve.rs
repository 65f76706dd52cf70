//! `toolkit-gen serve`: the gateway's own process (`toolkit_gateway::process`, tested with the
//! `toolkit-gateway` binary in the gateway's tests) under the command line's name.

use crate::support::run;

#[test]
fn serve_prints_the_gateways_example_and_its_help() {
    let (code, stdout, stderr) = run(&["serve", "--example-config"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, toolkit_gateway::process::EXAMPLE_CONFIG);
    let (code, help, stderr) = run(&["serve", "--help"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(help.contains("toolkit-gen serve --config <FILE>"), "{help}");
    assert!(help.contains("[[sources]]"), "{help}");
    assert!(!help.contains("[`"), "{help}");
}

#[test]
fn serve_names_itself_in_a_failure_to_start() {
    let (code, _, stderr) = run(&["serve"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--config <FILE>"), "{stderr}");
    let (code, _, stderr) = run(&["serve", "--config", "/nonexistent/toolkit.toml"]);
    assert_eq!(code, 1);
    assert!(stderr.starts_with("toolkit-gen serve: "), "{stderr}");
}
