//! The JSON kinds a union's members are told apart by: [`Kind`], read from a schema's `type` or
//! from a value.

use serde_json::Value;

/// The JSON kinds a union's members are told apart by, in the order an untagged enum tries them
/// (an integer before a number, so that `1` stays an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Kind {
    Bool,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    pub(super) fn of_type(name: &str) -> Option<Kind> {
        Some(match name {
            "boolean" => Kind::Bool,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }

    pub(super) fn of_value(value: &Value) -> Option<Kind> {
        Some(match value {
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if n.is_i64() || n.is_u64() => Kind::Integer,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
            Value::Null => return None,
        })
    }

    pub(super) fn variant_name(self) -> &'static str {
        match self {
            Kind::Bool => "Bool",
            Kind::Integer => "Integer",
            Kind::Number => "Number",
            Kind::String => "String",
            Kind::Array => "Array",
            Kind::Object => "Object",
        }
    }
}
