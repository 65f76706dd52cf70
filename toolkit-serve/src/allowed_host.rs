//! Which `Host` a server answers (against DNS rebinding): [`host_allowed`].

use axum::http::uri::Authority;

/// Whether `host` is one of `allowed`: the same name or address (case and IPv6 brackets aside),
/// and the same port where the allowed one names a port — the rule rmcp's Streamable HTTP
/// service applies, whose check is private to it. Shared by the calls this crate answers past
/// rmcp and by a host that guards its other routes with the same rule.
///
/// ```
/// use axum::http::uri::Authority;
/// use toolkit_serve::host_allowed;
///
/// let allowed = ["localhost".to_owned(), "gw.example:8443".to_owned()];
/// assert!(host_allowed(&Authority::from_static("LOCALHOST:3000"), &allowed));
/// assert!(!host_allowed(&Authority::from_static("gw.example:80"), &allowed));
/// ```
pub fn host_allowed(host: &Authority, allowed: &[String]) -> bool {
    let name = |text: &str| {
        text.trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase()
    };
    let host_name = name(host.host());
    allowed.iter().any(|allowed| {
        match Authority::try_from(allowed.trim()) {
            Ok(authority) => {
                name(authority.host()) == host_name
                    && authority
                        .port_u16()
                        .is_none_or(|port| host.port_u16() == Some(port))
            }
            // A bare IPv6 address (`::1`) is no authority: compared as a name.
            Err(_) => name(allowed) == host_name,
        }
    })
}
