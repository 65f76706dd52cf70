//! A progress bar on stderr for long runs (GitHub's 1,223 operations), drawn only when stderr is
//! a terminal: a script or a build log never sees it.
//!
//! ```ignore
//! use crate::cli::progress::Progress;
//!
//! let progress = Progress::new(3, "auditing");
//! for _ in 0..3 {
//!     progress.step();
//! }
//! progress.finish();
//! ```

use std::io::IsTerminal as _;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Fewer steps than this draw no bar: the run is over before a person could read it.
const MIN_STEPS: u64 = 200;

/// A bar counting the steps of a run; dropped or [finished](Progress::finish), it clears itself.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar of `steps` steps labelled `label` (`generating`), on stderr when stderr is a
    /// terminal and the run is long enough to be worth one; otherwise nothing is drawn.
    pub fn new(steps: u64, label: &str) -> Self {
        if steps < MIN_STEPS || !std::io::stderr().is_terminal() {
            return Self::hidden();
        }
        Self::drawn(steps, label, ProgressDrawTarget::stderr())
    }

    /// A bar that draws nothing.
    pub fn hidden() -> Self {
        Self { bar: None }
    }

    fn drawn(steps: u64, label: &str, target: ProgressDrawTarget) -> Self {
        let bar = ProgressBar::with_draw_target(Some(steps), target);
        let style = ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {wide_msg}")
            .map(|style| style.progress_chars("=> "));
        if let Ok(style) = style {
            bar.set_style(style);
        }
        bar.set_prefix(label.to_owned());
        Self { bar: Some(bar) }
    }

    /// Whether the bar is drawn.
    #[cfg(test)]
    pub fn is_drawn(&self) -> bool {
        self.bar.is_some()
    }

    /// One step done.
    pub fn step(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// One step done, naming what it was (a tool's name).
    pub fn step_with(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(what.to_owned());
            bar.inc(1);
        }
    }

    /// The run is over: the bar is cleared from the terminal.
    pub fn finish(self) {
        drop(self);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_runs_and_pipes_draw_nothing() {
        assert!(!Progress::new(3, "x").is_drawn());
        // Under the test runner stderr is captured, not a terminal.
        assert!(!Progress::new(10_000, "x").is_drawn());
        let hidden = Progress::hidden();
        hidden.step();
        hidden.step_with("tool");
        hidden.finish();
    }

    #[test]
    fn a_drawn_bar_counts_its_steps() {
        let progress = Progress::drawn(5, "test", ProgressDrawTarget::hidden());
        progress.step();
        progress.step_with("b");
        let position = progress.bar.as_ref().map(ProgressBar::position);
        assert_eq!(position, Some(2));
        progress.finish();
    }
}
