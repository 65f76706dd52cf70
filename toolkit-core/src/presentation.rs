//! Toolkits made of other toolkits: [`Toolkit::restrict`] and [`Toolkit::merge`].
//!
//! Search and code mode present the toolkit an assembly gave as another, through which the model
//! reaches the first; they share these. A tool of a restricted or merged toolkit runs as it does in
//! the toolkit it comes from (the same handler, the same compiled input check, the same approval),
//! and a call of it is [`Toolkit::call`]: the tool's JSON, `null` for a tool that gives nothing,
//! or a [`Failure`](crate::Failure).

use crate::toolkit::DuplicateName;
use crate::{Tool, Toolkit};

impl Toolkit {
    /// The toolkit of the tools for which `keep` says `true`, in their order.
    ///
    /// ```
    /// # use toolkit_core::Toolkit;
    /// # let toolkit = Toolkit::default();
    /// let readers = toolkit.restrict(|tool| tool.definition().annotations.hints().read_only);
    /// ```
    #[must_use]
    pub fn restrict(&self, keep: impl Fn(&Tool) -> bool) -> Toolkit {
        // The names were distinct in `self`, so they are in any part of it.
        Toolkit::from_tools(self.tools().filter(|tool| keep(tool)).cloned()).unwrap_or_default()
    }

    /// The toolkit of the tools of both, `self`'s first.
    ///
    /// # Errors
    ///
    /// [`DuplicateName`] when a tool of each has the same name.
    pub fn merge(&self, other: &Toolkit) -> Result<Toolkit, DuplicateName> {
        Toolkit::from_tools(self.tools().chain(other.tools()).cloned())
    }
}

/// The most tools a toolkit shows a model as they are (17); above it, [`PresentationRule`]
/// chooses search with deferred loading.
///
/// Measured, not guessed (`toolkit-runtime/examples/search_crossover.rs`; the table is in
/// `docs/search-and-code-mode.md`): over real MCP servers' tools (LiveMCPBench, 166 tokens a
/// definition on average) and MetaTool's labelled queries, the tokens of a task that needs one
/// tool with every definition shown, against those of the search tool, the search, the 5 tools
/// it loads, the extra request it takes and a second search when the first misses (recall@5).
/// Search costs less from 8 tools on with Anthropic's deferred loading (a deferred tool costs
/// nothing up front) and from 18 on with OpenAI's (a deferred function's name and description
/// stay): 17 is the most at which showing every tool costs less for both. For Anthropic alone,
/// `PresentationRule::default().threshold(7)`.
pub const SEARCH_THRESHOLD: usize = 17;

/// How a toolkit is shown to a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Presentation {
    /// Every tool's definition, in every request.
    Every,
    /// A search tool, the other tools deferred and loaded when a search finds them
    /// (`ToolSearch::deferring`, and the deferred shapes of [`crate::model`]).
    Search,
}

/// Chooses how a toolkit is shown: every tool up to a number of tools ([`SEARCH_THRESHOLD`] by
/// default), search above it.
///
/// ```
/// use toolkit_core::{Presentation, PresentationRule, SEARCH_THRESHOLD};
///
/// let rule = PresentationRule::default();
/// assert_eq!(rule.choose(SEARCH_THRESHOLD), Presentation::Every);
/// assert_eq!(rule.choose(SEARCH_THRESHOLD + 1), Presentation::Search);
/// // A host whose tools are larger than most (long schemas) searches sooner.
/// assert_eq!(rule.threshold(10).choose(11), Presentation::Search);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresentationRule {
    threshold: usize,
}

impl Default for PresentationRule {
    fn default() -> Self {
        Self {
            threshold: SEARCH_THRESHOLD,
        }
    }
}

impl PresentationRule {
    /// The most tools shown as they are ([`SEARCH_THRESHOLD`] by default).
    #[must_use]
    pub fn threshold(mut self, threshold: usize) -> Self {
        self.threshold = threshold;
        self
    }

    /// How `tools` tools are shown: [`Presentation::Every`] up to the threshold,
    /// [`Presentation::Search`] above it.
    pub fn choose(&self, tools: usize) -> Presentation {
        if tools > self.threshold {
            Presentation::Search
        } else {
            Presentation::Every
        }
    }

    /// How `toolkit` is shown ([`PresentationRule::choose`] of its number of tools).
    pub fn choose_for(&self, toolkit: &Toolkit) -> Presentation {
        self.choose(toolkit.len())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use serde_json::Value;

    use super::*;
    use crate::{Approval, JsonObject, ToolDefinition};

    fn toolkit(tools: usize) -> Toolkit {
        Toolkit::from_tools((0..tools).map(|i| {
            Tool::new(
                ToolDefinition::new(format!("tool_{i}"), JsonObject::new()).unwrap(),
                Approval::Never,
                Arc::new(|_, _| Box::pin(async { Ok(Value::Null) })),
            )
        }))
        .unwrap()
    }

    /// The measured crossover: 18 tools (OpenAI's; Anthropic's is 8).
    #[test]
    fn every_tool_up_to_the_crossover_and_search_above_it() {
        let rule = PresentationRule::default();
        assert_eq!(SEARCH_THRESHOLD, 17);
        for tools in [0, 1, 8, 17] {
            assert_eq!(
                rule.choose_for(&toolkit(tools)),
                Presentation::Every,
                "{tools}"
            );
        }
        for tools in [18, 19, 100, 400] {
            assert_eq!(
                rule.choose_for(&toolkit(tools)),
                Presentation::Search,
                "{tools}"
            );
        }
    }

    #[test]
    fn a_threshold_of_its_own_moves_the_switch() {
        let anthropic = PresentationRule::default().threshold(7);
        assert_eq!(anthropic.choose(7), Presentation::Every);
        assert_eq!(anthropic.choose(8), Presentation::Search);
        let never = PresentationRule::default().threshold(usize::MAX);
        assert_eq!(never.choose(usize::MAX), Presentation::Every);
        let always = PresentationRule::default().threshold(0);
        assert_eq!(always.choose(0), Presentation::Every);
        assert_eq!(always.choose(1), Presentation::Search);
    }
}
