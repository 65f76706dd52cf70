//! What the tests share.
#![allow(dead_code)]

use serde_json::Value;
use toolkit_runtime::JsonObject;

/// `value` as a JSON object; panics in a test when it is not one.
pub fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("not an object: {other}"),
    }
}
