//! What each person is shown, when it depends on who they are: [`Views`].
//!
//! A server whose policy names people (a gateway's rules for a group, a name, a scope) shows each
//! person the toolkit of their view: `tools/list` lists what they may call, and a call of a tool
//! outside their view is a call of an unknown tool. People of one view share one toolkit, built
//! the first time one of them asks and kept until the served toolkit is replaced.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use toolkit_core::Toolkit;
use toolkit_core::context::Principal;

use super::served::Served;

/// The most views a served toolkit keeps built; past it, a view is built for each request that
/// needs it (correct, and slower), so that a server whose people each have a view of their own
/// does not grow without bound.
pub const MAX_KEPT_VIEWS: usize = 1_024;

/// What each person is shown: a key per person (people with one key are shown one toolkit), and
/// the toolkit of each key.
///
/// ```
/// use toolkit_core::{Toolkit, context::Principal};
/// use toolkit_serve::Views;
///
/// /// Alice is shown every tool; everyone else none.
/// struct AliceOnly(Toolkit);
///
/// impl Views for AliceOnly {
///     fn key(&self, principal: &Principal) -> String {
///         (principal.name() == "alice").to_string()
///     }
///     fn toolkit(&self, key: &str) -> Toolkit {
///         if key == "true" { self.0.clone() } else { Toolkit::default() }
///     }
/// }
/// ```
pub trait Views: Send + Sync + 'static {
    /// The key of what `principal` is shown.
    fn key(&self, principal: &Principal) -> String;

    /// The toolkit shown to the people of `key`.
    fn toolkit(&self, key: &str) -> Toolkit;
}

/// The views of one served toolkit, built as people ask.
pub(crate) struct BuiltViews {
    views: Arc<dyn Views>,
    built: Mutex<HashMap<String, Arc<Served>>>,
}

impl BuiltViews {
    pub(crate) fn new(views: Arc<dyn Views>) -> Self {
        Self {
            views,
            built: Mutex::default(),
        }
    }

    /// The toolkit served to `principal`.
    pub(crate) fn of(&self, principal: &Principal) -> Arc<Served> {
        let key = self.views.key(principal);
        if let Some(served) = self.lock().get(&key) {
            return Arc::clone(served);
        }
        // Built outside the lock: two people of a new view at once may both build it.
        let served = Arc::new(Served::new(self.views.toolkit(&key)));
        let mut built = self.lock();
        if built.len() < MAX_KEPT_VIEWS {
            built.entry(key).or_insert_with(|| Arc::clone(&served));
        }
        served
    }

    /// The toolkit of `principal`'s view, as the views give it.
    pub(crate) fn toolkit(&self, principal: &Principal) -> Toolkit {
        self.views.toolkit(&self.views.key(principal))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Served>>> {
        self.built.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for BuiltViews {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Views")
            .field("built", &self.lock().len())
            .finish_non_exhaustive()
    }
}
