//! Which URLs an authorization may reach: every URL that comes from a server (metadata,
//! endpoints) goes through [`UrlPolicy`].

use std::net::IpAddr;

use url::{Host, Url};

use super::AuthError;

/// What URLs from metadata may be: `https`, or `http` on a loopback host when the MCP server is
/// itself on loopback; never an IP literal of a private, link-local or other internal range
/// (where cloud metadata services live) unless the MCP server is in that same class.
///
/// Host names are not resolved here: a name that resolves to an internal address passes.
#[derive(Clone, Debug)]
pub(crate) struct UrlPolicy {
    /// The class of the MCP server's host.
    server: HostClass,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HostClass {
    Loopback,
    Internal,
    Public,
}

fn class_of(url: &Url) -> HostClass {
    match url.host() {
        Some(Host::Domain(name)) => {
            // `localhost.` is `localhost` (a fully qualified name's root dot).
            let name = name.to_ascii_lowercase();
            let name = name.strip_suffix('.').unwrap_or(&name);
            if name == "localhost" || name.ends_with(".localhost") {
                HostClass::Loopback
            } else {
                HostClass::Public
            }
        }
        Some(Host::Ipv4(ip)) => class_of_ip(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => match ip.to_ipv4_mapped() {
            Some(v4) => class_of_ip(IpAddr::V4(v4)),
            None => class_of_ip(IpAddr::V6(ip)),
        },
        None => HostClass::Internal,
    }
}

fn class_of_ip(ip: IpAddr) -> HostClass {
    if ip.is_loopback() {
        return HostClass::Loopback;
    }
    let internal = match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || (a == 100 && (64..128).contains(&b)) // CGNAT
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
        }
    };
    if internal {
        HostClass::Internal
    } else {
        HostClass::Public
    }
}

impl UrlPolicy {
    /// The policy for an MCP server at `server`.
    pub(crate) fn for_server(server: &Url) -> Self {
        Self {
            server: class_of(server),
        }
    }

    /// `url`, if an authorization may reach it; `what` names it in the refusal.
    pub(crate) fn check(&self, url: &Url, what: &str) -> Result<(), AuthError> {
        let class = class_of(url);
        let scheme_ok = match url.scheme() {
            "https" => true,
            "http" => class == HostClass::Loopback && self.server == HostClass::Loopback,
            _ => false,
        };
        if !scheme_ok {
            return Err(AuthError::refused(format!(
                "the {what} is not an https URL (http only on loopback, for a server on loopback)"
            )));
        }
        if class != HostClass::Public && class != self.server {
            return Err(AuthError::refused(format!(
                "the {what} is on an internal address, and the MCP server is not"
            )));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(AuthError::refused(format!(
                "the {what} carries credentials in its URL"
            )));
        }
        Ok(())
    }

    /// `text` as a URL this policy lets an authorization reach.
    pub(crate) fn parse(&self, text: &str, what: &str) -> Result<Url, AuthError> {
        let url =
            Url::parse(text).map_err(|_| AuthError::refused(format!("the {what} is not a URL")))?;
        self.check(&url, what)?;
        Ok(url)
    }
}

#[cfg(feature = "mcp")]
/// Whether `url` is on a loopback host (a redirect URI must be).
pub(crate) fn is_loopback(url: &Url) -> bool {
    class_of(url) == HostClass::Loopback
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("a URL")
    }

    #[test]
    fn http_only_on_loopback_for_a_loopback_server() {
        let local = UrlPolicy::for_server(&url("http://localhost:3000/mcp"));
        assert!(
            local
                .check(&url("http://127.0.0.1:9/token"), "token endpoint")
                .is_ok()
        );
        assert!(
            local
                .check(&url("http://example.com/token"), "token endpoint")
                .is_err()
        );
        let public = UrlPolicy::for_server(&url("https://mcp.example.com/mcp"));
        assert!(
            public
                .check(&url("http://localhost/token"), "token endpoint")
                .is_err()
        );
        assert!(
            public
                .check(&url("https://as.example.com/token"), "t")
                .is_ok()
        );
        assert!(
            public
                .check(&url("https://169.254.169.254/latest"), "t")
                .is_err()
        );
        assert!(public.check(&url("https://10.0.0.1/token"), "t").is_err());
        // The trailing dot of a fully qualified name: still loopback.
        assert!(public.check(&url("https://localhost./token"), "t").is_err());
        #[cfg(feature = "mcp")]
        assert!(is_loopback(&url("http://LOCALHOST.:8080/callback")));
        assert!(
            public
                .check(&url("https://[::ffff:10.0.0.1]/token"), "t")
                .is_err()
        );
        assert!(public.check(&url("https://[fe80::1]/token"), "t").is_err());
        assert!(public.check(&url("file:///etc/passwd"), "t").is_err());
        assert!(
            public
                .check(&url("https://user:pw@as.example.com/"), "t")
                .is_err()
        );
    }
}
