//! Which `Host` a server answers (against DNS rebinding): [`AllowedHosts`].

use axum::http::uri::Authority;

/// The `Host` values a server answers: the same name or address as one of them (case and IPv6
/// brackets aside), and the same port where that one names a port — the rule rmcp's Streamable
/// HTTP service applies, whose check is private to it. Shared by the calls this crate answers
/// past rmcp and by a host that guards its other routes with the same rule.
///
/// Read once, when made: a request is then checked without parsing or copying any allowed value
/// (both checks, on every request, took about 5,000 instructions of a call that way).
///
/// ```
/// use axum::http::uri::Authority;
/// use toolkit_serve::AllowedHosts;
///
/// let allowed = AllowedHosts::new(&["localhost".to_owned(), "gw.example:8443".to_owned()]);
/// assert!(allowed.allows(&Authority::from_static("LOCALHOST:3000")));
/// assert!(allowed.allows(&Authority::from_static("gw.example:8443")));
/// assert!(!allowed.allows(&Authority::from_static("gw.example:80")));
/// ```
#[derive(Clone, Debug, Default)]
pub struct AllowedHosts {
    /// Each allowed name or address without brackets, and its port if it names one.
    allowed: Vec<(String, Option<u16>)>,
}

impl AllowedHosts {
    /// The hosts `allowed` names: each a name or address, with a port or without (`localhost`,
    /// `gw.example:8443`, `[::1]:8080`, or a bare IPv6 address `::1`).
    #[must_use]
    pub fn new(allowed: &[String]) -> Self {
        let allowed = allowed
            .iter()
            .map(|allowed| match Authority::try_from(allowed.trim()) {
                Ok(authority) => (bare(authority.host()).to_owned(), authority.port_u16()),
                // A bare IPv6 address (`::1`) is no authority: compared as a name.
                Err(_) => (bare(allowed.trim()).to_owned(), None),
            })
            .collect();
        Self { allowed }
    }

    /// Whether none is named (then a server that takes any `Host` takes every one).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty()
    }

    /// Whether `host` is one of these.
    #[must_use]
    pub fn allows(&self, host: &Authority) -> bool {
        let name = bare(host.host());
        self.allowed.iter().any(|(allowed, port)| {
            allowed.eq_ignore_ascii_case(name)
                && port.is_none_or(|port| host.port_u16() == Some(port))
        })
    }
}

/// A name or address without IPv6 brackets.
fn bare(text: &str) -> &str {
    text.trim_start_matches('[').trim_end_matches(']')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_host_is_allowed_by_name_or_address_and_by_port_where_one_is_named() {
        let allowed: Vec<String> = [
            "localhost",
            "127.0.0.1",
            "::1",
            "[::2]",
            "gw.example:8443",
            " ::3 ",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        let allowed = AllowedHosts::new(&allowed);
        let host = |text: &str| Authority::try_from(text).unwrap();
        for good in [
            "localhost:8808",
            "LOCALHOST",
            "127.0.0.1:1",
            "[::1]:80",
            "[::2]",
            "gw.example:8443",
            "[::3]:80",
        ] {
            assert!(allowed.allows(&host(good)), "{good}");
        }
        for bad in [
            "attacker.example",
            "localhost.attacker.example",
            "gw.example",
            "gw.example:80",
            "127.0.0.2",
        ] {
            assert!(!allowed.allows(&host(bad)), "{bad}");
        }
        assert!(AllowedHosts::default().is_empty());
        assert!(!allowed.is_empty());
    }
}
