//! Typed values a call carries: [`Extensions`].
//!
//! Written here rather than taken from `http::Extensions`: that map clones every value each time
//! it is cloned, and a call's context is cloned for every call and every tool a call reaches; this
//! one shares its values (`Arc`) and copies its map only when a clone is changed.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Values of any type a call carries, one of each type, for the sources it reaches and the server
/// that serves it (in the manner of `http::Extensions`). Cheap to clone.
///
/// ```
/// use toolkit_core::context::Extensions;
///
/// #[derive(Debug, PartialEq)]
/// struct Tenant(&'static str);
///
/// let mut extensions = Extensions::new();
/// extensions.insert(Tenant("acme"));
/// assert_eq!(extensions.get::<Tenant>(), Some(&Tenant("acme")));
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    values: Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
}

impl Extensions {
    /// No values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps `value`, in place of a value of its type kept before.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        let values = self.values.get_or_insert_with(Arc::default);
        Arc::make_mut(values).insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if one is kept.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.values
            .as_ref()?
            .get(&TypeId::of::<T>())?
            .downcast_ref::<T>()
    }

    /// Lets go of the value of type `T`, if one is kept.
    pub fn remove<T: Send + Sync + 'static>(&mut self) {
        if let Some(values) = &mut self.values
            && values.contains_key(&TypeId::of::<T>())
        {
            Arc::make_mut(values).remove(&TypeId::of::<T>());
        }
    }

    /// How many values are kept.
    pub fn len(&self) -> usize {
        self.values.as_ref().map_or(0, |values| values.len())
    }

    /// Whether no value is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_changed_leaves_the_original_alone() {
        let mut first = Extensions::new();
        first.insert(1_u8);
        let mut second = first.clone();
        second.insert(2_u8);
        second.insert("text");
        assert_eq!(first.get::<u8>(), Some(&1));
        assert_eq!(second.get::<u8>(), Some(&2));
        assert_eq!(first.get::<&str>(), None);
        second.remove::<u8>();
        assert_eq!(second.get::<u8>(), None);
        assert_eq!((first.len(), second.len()), (1, 1));
        assert!(Extensions::new().is_empty());
    }
}
