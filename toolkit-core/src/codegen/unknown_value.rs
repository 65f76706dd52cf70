//! The error of a generated string enum's `FromStr`.

use std::fmt;

/// A string that is none of a generated enum's values (`"bird".parse::<PetStatus>()`): the
/// string, and the values the enum allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownValue {
    value: String,
    allowed: &'static [&'static str],
}

impl UnknownValue {
    /// `value`, which is none of `allowed`.
    pub fn new(value: &str, allowed: &'static [&'static str]) -> Self {
        Self {
            value: value.to_owned(),
            allowed,
        }
    }

    /// The string that was parsed.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The values the enum allows, in the document's order.
    pub fn allowed(&self) -> &'static [&'static str] {
        self.allowed
    }
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not one of ", self.value)?;
        for (index, allowed) in self.allowed.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{allowed:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownValue {}

#[cfg(test)]
mod tests {
    use super::UnknownValue;

    #[test]
    fn names_the_value_and_the_allowed_ones() {
        let error = UnknownValue::new("bird", &["available", "sold"]);
        assert_eq!(
            error.to_string(),
            r#""bird" is not one of "available", "sold""#
        );
        assert_eq!(error.value(), "bird");
        assert_eq!(error.allowed(), ["available", "sold"]);
    }
}
