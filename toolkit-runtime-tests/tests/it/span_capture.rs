//! The spans a call leaves (`telemetry`), captured with a subscriber: what the span tests here
//! and toolkit-mcp's tests (by path) check by name and field.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

use crate::support::ADDRESS;

/// One span as the subscriber saw it: its name, its fields (as text), its parent's name.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    pub name: String,
    pub fields: BTreeMap<String, String>,
    pub parent: Option<String>,
}

impl Captured {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Every span of the runtime's target, in the order they began.
#[derive(Clone, Default)]
pub struct Spans(Arc<Mutex<Vec<(u64, Captured)>>>);

impl Spans {
    pub fn all(&self) -> Vec<Captured> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, c)| c.clone())
            .collect()
    }

    pub fn named(&self, name: &str) -> Vec<Captured> {
        self.all().into_iter().filter(|c| c.name == name).collect()
    }

    /// A subscriber that captures into these (only the runtime's spans).
    pub fn subscriber(&self) -> impl tracing::Subscriber + Send + Sync {
        Registry::default().with(Capture(self.clone()))
    }
}

struct Capture(Spans);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S> Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().target() != toolkit_runtime::telemetry::TARGET {
            return;
        }
        let mut captured = Captured {
            name: attrs.metadata().name().to_owned(),
            ..Captured::default()
        };
        attrs.record(&mut Fields(&mut captured.fields));
        captured.parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.name().to_owned());
        self.0.0.lock().unwrap().push((id.into_u64(), captured));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.0.lock().unwrap();
        if let Some((_, captured)) = spans.iter_mut().rev().find(|(i, _)| *i == id.into_u64()) {
            values.record(&mut Fields(&mut captured.fields));
        }
    }
}

/// Runs `test` on a runtime of this thread with `spans` capturing.
pub fn capturing<F: std::future::Future<Output = ()>>(spans: &Spans, test: F) {
    let _default = tracing::subscriber::set_default(spans.subscriber());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(test);
}

/// No field of any span names an address, a credential or a header's value.
pub fn assert_nothing_secret(spans: &Spans, secrets: &[&str]) {
    for span in spans.all() {
        for (name, value) in &span.fields {
            for secret in secrets.iter().chain(&[ADDRESS, "127.0.0.1", "10.1.2.3"]) {
                assert!(
                    !value.contains(secret),
                    "{}.{name} = {value:?} names {secret:?}",
                    span.name
                );
            }
        }
    }
}
