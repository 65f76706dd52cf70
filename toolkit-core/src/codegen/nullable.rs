//! A property that may be left out *and* may be `null`: three states, not two.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The type of a generated field whose property is optional and nullable: it can be left out
/// ([`Absent`](Nullable::Absent), the default), sent as `null` ([`Null`](Nullable::Null)), or
/// hold a value. An `Option` cannot say the second: GitHub's `issues/update` takes
/// `"milestone": null` to remove an issue's milestone, while leaving `milestone` out keeps it.
///
/// A generated field of this type carries `#[serde(default, skip_serializing_if =
/// "__tk::Nullable::is_absent")]`, so that `Absent` writes nothing and a missing property reads
/// as `Absent`:
///
/// ```
/// use toolkit_core::codegen::{Nullable, serde, serde_json};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// #[serde(crate = "toolkit_core::codegen::serde")]
/// struct UpdateIssue {
///     #[serde(default, skip_serializing_if = "Nullable::is_absent")]
///     milestone: Nullable<i64>,
/// }
///
/// let write = |milestone| serde_json::to_string(&UpdateIssue { milestone }).unwrap();
/// assert_eq!(write(Nullable::Absent), r#"{}"#);
/// assert_eq!(write(Nullable::Null), r#"{"milestone":null}"#);
/// assert_eq!(write(Nullable::Value(3)), r#"{"milestone":3}"#);
///
/// let read = |json| serde_json::from_str::<UpdateIssue>(json).unwrap().milestone;
/// assert_eq!(read("{}"), Nullable::Absent);
/// assert_eq!(read(r#"{"milestone":null}"#), Nullable::Null);
/// assert_eq!(read(r#"{"milestone":3}"#), Nullable::Value(3));
/// ```
///
/// A property that is *required* and nullable is an `Option<T>` that must be there: its field
/// carries `#[serde(deserialize_with = "__tk::present")]` (see [`present`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Nullable<T> {
    /// Left out: nothing is written.
    #[default]
    Absent,
    /// Written as `null`.
    Null,
    /// A value.
    Value(T),
}

impl<T> Nullable<T> {
    /// Whether the property is left out (what `skip_serializing_if` asks).
    pub fn is_absent(&self) -> bool {
        matches!(self, Nullable::Absent)
    }

    /// Whether the property is an explicit `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Nullable::Null)
    }

    /// The value, if there is one.
    pub fn as_ref(&self) -> Option<&T> {
        match self {
            Nullable::Value(value) => Some(value),
            Nullable::Absent | Nullable::Null => None,
        }
    }

    /// The value, if there is one (absent and `null` are both `None`).
    pub fn into_option(self) -> Option<T> {
        match self {
            Nullable::Value(value) => Some(value),
            Nullable::Absent | Nullable::Null => None,
        }
    }
}

impl<T> From<T> for Nullable<T> {
    fn from(value: T) -> Self {
        Nullable::Value(value)
    }
}

impl<T> From<Option<T>> for Nullable<T> {
    /// `Some` is the value, `None` an explicit `null` (never `Absent`).
    fn from(value: Option<T>) -> Self {
        match value {
            Some(value) => Nullable::Value(value),
            None => Nullable::Null,
        }
    }
}

impl<T: Serialize> Serialize for Nullable<T> {
    /// `Absent` and `Null` both write `null`: a field skips `Absent` before it gets here.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Nullable::Value(value) => serializer.serialize_some(value),
            Nullable::Absent | Nullable::Null => serializer.serialize_none(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Nullable<T> {
    /// `null` is `Null`; a missing property is `Absent` through the field's `#[serde(default)]`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(deserializer)?.into())
    }
}

/// Reads a required, nullable property: `null` is `None`, and a missing property is an error
/// (serde's derive reads a missing `Option` field as `None` unless the field names a
/// `deserialize_with`, which this is).
///
/// ```
/// use toolkit_core::codegen::{serde, serde_json};
///
/// #[derive(Debug, serde::Deserialize)]
/// #[serde(crate = "toolkit_core::codegen::serde")]
/// struct Answer {
///     #[serde(deserialize_with = "toolkit_core::codegen::present")]
///     closed_at: Option<String>,
/// }
///
/// assert!(serde_json::from_str::<Answer>(r#"{"closed_at":null}"#).is_ok());
/// assert!(serde_json::from_str::<Answer>("{}").is_err());
/// ```
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn conversions_say_which_state() {
        assert_eq!(Nullable::from(Some(1)), Nullable::Value(1));
        assert_eq!(Nullable::<i32>::from(None), Nullable::Null);
        assert_eq!(Nullable::from(2), Nullable::Value(2));
        assert_eq!(Nullable::Value(3).into_option(), Some(3));
        assert_eq!(Nullable::<i32>::Null.into_option(), None);
        assert_eq!(Nullable::<i32>::Absent.as_ref(), None);
        assert!(Nullable::<i32>::default().is_absent());
        assert!(Nullable::<i32>::Null.is_null());
    }

    #[test]
    fn a_value_of_the_wrong_kind_is_an_error() {
        assert!(serde_json::from_str::<Nullable<i64>>("\"x\"").is_err());
        assert_eq!(
            serde_json::from_str::<Nullable<i64>>("null").unwrap(),
            Nullable::Null
        );
    }
}
