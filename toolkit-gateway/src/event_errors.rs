//! The events extension's errors (SEP-3415), as the gateway answers them: their codes, and
//! [`refused`], a refusal with one.

use serde_json::Value;
use toolkit_serve::Refusal;

/// `NotFound`: no such event type, or no such webhook subscription (`data.kind` says which).
pub(crate) const NOT_FOUND: i32 = -32023;
/// `Forbidden`: the asker may not subscribe (or did not authenticate, for a webhook).
pub(crate) const FORBIDDEN: i32 = -32024;
/// `ResourceExhausted`: a cap was reached (`data.limit` and `data.max` say which).
pub(crate) const RESOURCE_EXHAUSTED: i32 = -32025;
/// `CallbackEndpointError`: a webhook's callback could not be verified or reached
/// (`data.reason`).
pub(crate) const CALLBACK_ENDPOINT_ERROR: i32 = -32027;

/// The refusal of `code` with `message` and `data`.
pub(crate) fn refused(code: i32, message: impl Into<String>, data: Option<Value>) -> Refusal {
    Refusal::Coded {
        code,
        message: message.into(),
        data,
    }
}
