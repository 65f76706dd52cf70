//! The limits of an MCP source, and what it asks the host: [`McpOptions`].

use std::sync::Arc;
use std::time::Duration;

use toolkit_core::context::Clients;

use super::Elicitation;

/// The limits of an MCP source (every one a bound on what a server can make the source do), and
/// the host's answer to what a server asks of its person.
///
/// ```
/// use std::time::Duration;
/// use toolkit_mcp::McpOptions;
///
/// let options = McpOptions::default().timeout(Duration::from_secs(20));
/// assert_eq!(options.max_pages, 1_000);
/// assert_eq!(options.max_call_time, Duration::from_secs(600));
/// assert_eq!(options.max_listing_bytes, 32 * 1024 * 1024);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpOptions {
    /// How long a call or a discovery may take in all, retries and the first contact with the
    /// server included; past it the source fails as unavailable. One minute by default.
    pub timeout: Duration,
    /// The longest a call may live when its server keeps reporting progress: each
    /// `notifications/progress` for the call starts [`timeout`](Self::timeout) anew (the spec
    /// allows it), but never past this. The call asks for progress (a `progressToken`) for it.
    /// 10 minutes by default; no longer than `timeout` turns it off (and a call then asks for
    /// progress only when its host wants it).
    pub max_call_time: Duration,
    /// The most bytes of one answer (an HTTP body, an event, a stdio line); a longer one fails a
    /// call as [`CallFailed`](toolkit_core::Reason::CallFailed) (the model is told to ask for less) and
    /// a listing as [`InvalidResponse`](toolkit_core::Reason::InvalidResponse). 16 MiB by default.
    pub max_response_bytes: usize,
    /// The most pages of `tools/list` read in one discovery; more is an invalid response (a
    /// server that pages forever). 1,000 by default.
    pub max_pages: usize,
    /// The most bytes of tools (as JSON) one discovery reads over all its pages; more is an
    /// invalid response, so that a server cannot fill memory with `max_pages` pages of
    /// `max_response_bytes` each. 32 MiB by default.
    pub max_listing_bytes: usize,
    /// How many times a call is sent again when the server answers `input_required` (the
    /// stateless revision's multi-round-trip requests: what it asks is answered, see
    /// [`elicitation`](Self::elicitation) and [`relay`](Self::relay)); one more such answer fails
    /// the call as an invalid response. 8 by default.
    pub input_required_rounds: usize,
    /// stdio: how long to wait for an answer to `server/discover` before taking the server for
    /// one of the session revisions (some never answer it). 3 seconds by default.
    pub discover_wait: Duration,
    /// stdio: how long each step of stopping a server may take: after its stdin closes, and after
    /// SIGTERM; then it is killed. 2 seconds by default.
    pub shutdown_wait: Duration,
    /// What answers a server's `elicitation/create` (see [`Elicitation`]): given, the source
    /// declares the `elicitation` capability and asks it; `None` (the default), every elicitation
    /// is declined at once. In the stateless revision it answers the elicitations of an
    /// `input_required` result the same way.
    pub elicitation: Option<Elicitation>,
    /// For a server that serves this source's tools (a gateway, feature `serve`): the source
    /// declares the `sampling`, `elicitation` and `roots` capabilities, and each
    /// `sampling/createMessage`, `elicitation/create` or `roots/list` its server sends on the
    /// stream of a served call is passed to the client of that call, and the client's answer back
    /// (one sent on a stream of no call, to the client of the one served call in flight, if only
    /// one is). A client that did not declare the capability is not asked: an elicitation goes to
    /// [`elicitation`](Self::elicitation) (or is declined), a sampling or roots request is refused
    /// (`-32601`), as for a client without it. Off by default.
    pub relay: bool,
    /// For a relaying source (see [`relay`](Self::relay)): the clients of the server that serves
    /// it, for what its server asks on a stream of no call (`roots/list` once it starts, or
    /// after a client said its roots changed): asked of the one client there is when exactly one
    /// session is joined ([`Clients`]), rather than of the call in flight. None by default: only
    /// the one call in flight's client is asked, and with none such a request is answered as
    /// for a client without the capability.
    pub clients: Option<Arc<Clients>>,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            max_call_time: Duration::from_secs(600),
            max_response_bytes: 16 * 1024 * 1024,
            max_pages: 1_000,
            max_listing_bytes: 32 * 1024 * 1024,
            input_required_rounds: 8,
            discover_wait: Duration::from_secs(3),
            shutdown_wait: Duration::from_secs(2),
            elicitation: None,
            relay: false,
            clients: None,
        }
    }
}

/// Builder methods: each sets one field, the others keep their [`Default`] values.
impl McpOptions {
    /// Sets [`timeout`](Self::timeout).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`max_call_time`](Self::max_call_time).
    #[must_use]
    pub fn max_call_time(mut self, max_call_time: Duration) -> Self {
        self.max_call_time = max_call_time;
        self
    }

    /// Sets [`max_response_bytes`](Self::max_response_bytes).
    #[must_use]
    pub fn max_response_bytes(mut self, max_response_bytes: usize) -> Self {
        self.max_response_bytes = max_response_bytes;
        self
    }

    /// Sets [`max_pages`](Self::max_pages).
    #[must_use]
    pub fn max_pages(mut self, max_pages: usize) -> Self {
        self.max_pages = max_pages;
        self
    }

    /// Sets [`max_listing_bytes`](Self::max_listing_bytes).
    #[must_use]
    pub fn max_listing_bytes(mut self, max_listing_bytes: usize) -> Self {
        self.max_listing_bytes = max_listing_bytes;
        self
    }

    /// Sets [`input_required_rounds`](Self::input_required_rounds).
    #[must_use]
    pub fn input_required_rounds(mut self, input_required_rounds: usize) -> Self {
        self.input_required_rounds = input_required_rounds;
        self
    }

    /// Sets [`discover_wait`](Self::discover_wait).
    #[must_use]
    pub fn discover_wait(mut self, discover_wait: Duration) -> Self {
        self.discover_wait = discover_wait;
        self
    }

    /// Sets [`shutdown_wait`](Self::shutdown_wait).
    #[must_use]
    pub fn shutdown_wait(mut self, shutdown_wait: Duration) -> Self {
        self.shutdown_wait = shutdown_wait;
        self
    }

    /// Sets [`elicitation`](Self::elicitation).
    #[must_use]
    pub fn elicitation(mut self, elicitation: Elicitation) -> Self {
        self.elicitation = Some(elicitation);
        self
    }

    /// Sets [`relay`](Self::relay).
    #[must_use]
    pub fn relay(mut self, relay: bool) -> Self {
        self.relay = relay;
        self
    }

    /// Sets [`clients`](Self::clients).
    #[must_use]
    pub fn clients(mut self, clients: Arc<Clients>) -> Self {
        self.clients = Some(clients);
        self
    }
}
