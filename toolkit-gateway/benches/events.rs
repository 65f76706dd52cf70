//! Events (SEP-3415) through the gateway beside a direct subscription: how late each event of a
//! push stream reaches its client, and what a subscription costs the gateway in memory.
//!
//! The upstream is `toolkit-gateway/tests/gateway/events_server.py` (no released server serves
//! events), whose `clock-tick` events each fall due at a known instant (the clock's epoch plus the
//! tick's index times the period): an event's lateness is when the client read it less that
//! instant, the fixture's own scheduling included on both paths. The runtime's MCP client reads one
//! stream straight from the fixture (stdio) and one through `toolkit-gateway --config` (this build,
//! in front of the same fixture) at once, in `ROUNDS` rounds of `EVENTS` ticks each; then `STREAMS`
//! streams are opened through the gateway and its resident memory read before and after.
//!
//! `cargo bench -p toolkit-gateway --bench events` (about a minute).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use toolkit_core::JsonObject;
use toolkit_mcp::{Delivery, EventOptions, EventStream, EventType, Mcp, StdioCommand};

/// The clock's period.
const TICK_MS: u64 = 20;
/// Ticks read per stream and round.
const EVENTS: usize = 100;
/// Rounds.
const ROUNDS: usize = 5;
/// Streams opened at once through the gateway for its memory (one person may hold 32).
const STREAMS: usize = 30;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

fn fixture(epoch: u64) -> StdioCommand {
    StdioCommand::new("python3")
        .arg(root().join("toolkit-gateway/tests/gateway/events_server.py"))
        .env("EVENTS_TICK_MS", TICK_MS.to_string())
        .env("EVENTS_RETAIN", "1000")
        .env("EVENTS_EPOCH_MS", epoch.to_string())
}

/// The gateway in front of the fixture, its configuration in `dir`.
fn gateway(dir: &Path, epoch: u64) -> StdioCommand {
    let config = dir.join("toolkit.toml");
    std::fs::write(
        &config,
        format!(
            "[catalog]\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n\n[[sources]]\n\
             name = \"clock\"\ncommand = [\"python3\", \"{}\"]\nenv = {{ EVENTS_TICK_MS = \
             \"EVENTS_TICK_MS\", EVENTS_RETAIN = \"EVENTS_RETAIN\", EVENTS_EPOCH_MS = \
             \"EVENTS_EPOCH_MS\" }}\n",
            root()
                .join("toolkit-gateway/tests/gateway/events_server.py")
                .display()
        ),
    )
    .unwrap();
    StdioCommand::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(config)
        .env("EVENTS_TICK_MS", TICK_MS.to_string())
        .env("EVENTS_RETAIN", "1000")
        .env("EVENTS_EPOCH_MS", epoch.to_string())
}

async fn event_type(mcp: &Mcp, name: &str) -> EventType {
    mcp.list_events()
        .await
        .unwrap()
        .into_iter()
        .find(|event| event.name == name)
        .unwrap()
}

/// A push stream of `event` from `mcp`, from now.
async fn subscribe(mcp: &Arc<Mcp>, event: &EventType) -> EventStream {
    mcp.stream_events(event, JsonObject::new(), None, EventOptions::default())
        .await
        .unwrap()
}

/// The lateness (ms) of the next `count` ticks of `stream`.
async fn lateness(stream: &mut EventStream, epoch: u64, count: usize) -> Vec<f64> {
    let mut late = Vec::with_capacity(count);
    while late.len() < count {
        let delivery = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Delivery::Event(event) = delivery {
            let tick = event.data["tick"].as_u64().unwrap();
            #[allow(clippy::cast_precision_loss)]
            let due = (epoch + tick * TICK_MS) as f64;
            late.push(now_ms() - due);
        }
    }
    late
}

fn percentile(sorted: &[f64], share: f64) -> f64 {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let at = ((sorted.len() - 1) as f64 * share).round() as usize;
    sorted[at]
}

/// The VmRSS (KiB) of the process `pid` alone.
fn rss(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_default()
}

/// The pid of the `toolkit-gateway` process started last.
fn gateway_pid() -> Option<u32> {
    let mut found = None;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let command = String::from_utf8_lossy(&command);
        if command.contains(env!("CARGO_BIN_EXE_toolkit-gateway")) && command.contains("--config") {
            found = found.max(Some(pid));
        }
    }
    found
}

#[tokio::main]
async fn main() {
    let dir = std::env::temp_dir().join(format!("toolkit-events-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let epoch = now_ms() as u64;
    let direct = Arc::new(Mcp::stdio("clock", fixture(epoch)));
    let through = Arc::new(Mcp::stdio("gateway", gateway(&dir, epoch)));
    let (direct_type, through_type) = (
        event_type(&direct, "clock-tick").await,
        event_type(&through, "clock__clock-tick").await,
    );
    let (mut direct_lates, mut through_lates) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let mut one = subscribe(&direct, &direct_type).await;
        let mut two = subscribe(&through, &through_type).await;
        let (a, b) = tokio::join!(
            lateness(&mut one, epoch, EVENTS),
            lateness(&mut two, epoch, EVENTS)
        );
        direct_lates.extend(a);
        through_lates.extend(b);
    }
    direct_lates.sort_by(f64::total_cmp);
    through_lates.sort_by(f64::total_cmp);
    println!("| path | p50 lateness (ms) | p99 (ms) | events |");
    println!("| --- | --- | --- | --- |");
    for (name, late) in [
        ("direct", &direct_lates),
        ("through the gateway", &through_lates),
    ] {
        println!(
            "| {name} | {:.2} | {:.2} | {} |",
            percentile(late, 0.5),
            percentile(late, 0.99),
            late.len()
        );
    }
    println!(
        "added by the gateway at p50: {:.2} ms",
        percentile(&through_lates, 0.5) - percentile(&direct_lates, 0.5)
    );

    let pid = gateway_pid().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss(pid);
    let mut open = Vec::new();
    for _ in 0..STREAMS {
        let mut stream = subscribe(&through, &through_type).await;
        lateness(&mut stream, epoch, 1).await;
        open.push(stream);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss(pid);
    #[allow(clippy::cast_precision_loss)]
    let per = (after.saturating_sub(before)) as f64 / STREAMS as f64;
    println!(
        "gateway VmRSS: {before} KiB with none, {after} KiB with {STREAMS} streams: {per:.0} KiB a stream"
    );
    drop(open);
    direct.close().await;
    through.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
