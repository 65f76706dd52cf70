//! Integration tests of toolkit-code, in one binary: the hardened worker isolate and its pool.
#![allow(clippy::unwrap_used, clippy::panic)]

mod worker;

/// The worker program the tests run: `toolkit-code-worker`, a test peer of toolkit-runtime-tests
/// that can be made to crash, beside this test's executable (`target/<profile>/deps/…` →
/// `target/<profile>/`), where a workspace build put it.
fn worker_program() -> std::path::PathBuf {
    let test = std::env::current_exe().unwrap();
    let profile = test.parent().and_then(std::path::Path::parent).unwrap();
    let worker = profile.join(format!(
        "toolkit-code-worker{}",
        std::env::consts::EXE_SUFFIX
    ));
    assert!(
        worker.is_file(),
        "{} is missing: run `cargo build -p toolkit-runtime-tests --features code-test-worker \
         --bin toolkit-code-worker` (a workspace run with every feature builds it)",
        worker.display()
    );
    worker
}
