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
