//! A request that was not answered, as the reason a source fails with (MCP's transports and
//! `toolkit-auth`'s authorization client share it).

use toolkit_core::Reason;

/// A reqwest failure as the reason a source fails with. Connection refused or reset, a body cut
/// short and timeouts all mean the server cannot be reached now. The description leaves out the
/// URL.
pub fn transport_failure(error: reqwest::Error) -> Reason {
    let error = error.without_url();
    if error.is_builder() {
        Reason::unknown(format!("the request could not be built: {error}"))
    } else {
        Reason::unavailable(format!("the server could not be reached: {error}"))
    }
}
