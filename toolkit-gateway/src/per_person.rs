//! A source whose calls carry the credential of the person who makes them: [`PerPerson`].
//!
//! The source is made once more for each person with a credential of their own — in the secrets
//! file ([`PersonSecrets`]), or their own token exchanged or passed on ([`OnBehalf`]) — with that
//! credential, and kept while the credential stays the same
//! (at most [`MAX_PEOPLE`] at once). Its tools are listed by the source made with the source's own
//! configuration (an OpenAPI document's operations need no credential to be listed). A person
//! with none is refused with a failure the model reads — that person has to connect the source —
//! and never served another person's credential, nor the source's own unless the configuration
//! says `shared_fallback = true`. A person's own OAuth grant ([`Connected`]) is kept in a token
//! store instead, and a person without one is asked to connect it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use sha2::{Digest, Sha256};
use toolkit_core::context::Principal;
use toolkit_core::{
    BoxFuture, CallContext, JsonObject, Outcome, Reason, ToolDefinition, ToolSource,
    ToolSourceError,
};

use super::oauth_connect::Connected;
use super::on_behalf::OnBehalf;
use super::person_secrets::{Entry, PersonSecrets};

/// Where a person's credential for the source comes from.
// One per source, made once at the start: boxing a variant would only cost a `Box::new`.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Credential {
    /// The secrets file.
    Kept(Arc<PersonSecrets>),
    /// The person's own token, exchanged or passed on, given as the value of `name` (a security
    /// scheme, or a header) after `prefix` (`Bearer ` for a header).
    OnBehalf {
        on_behalf: Box<OnBehalf>,
        name: String,
        prefix: &'static str,
    },
    /// The person's own grant at the source's authorization server, which they connect through
    /// the gateway (`oauth.per_person`): the entry names its key in the token store.
    Connected(Connected),
}

/// The most people whose source is kept made at once; past it, the one made longest ago is
/// dropped (and made again at its person's next call).
pub const MAX_PEOPLE: usize = 1_024;

/// Makes the source with one person's credential.
pub(crate) type Make = Box<dyn Fn(&Entry) -> Result<Arc<dyn ToolSource>, String> + Send + Sync>;

/// A source made per person, from the secrets file.
pub(crate) struct PerPerson {
    shared: Arc<dyn ToolSource>,
    shared_fallback: bool,
    credential: Credential,
    make: Make,
    made: Mutex<PersonSources>,
}

/// One person's source as made: the credential's digest, the order made, the source.
type PersonSource = ([u8; 32], u64, Arc<dyn ToolSource>);

/// The sources made, by principal id.
#[derive(Default)]
struct PersonSources {
    next: u64,
    by_person: HashMap<String, PersonSource>,
}

impl PerPerson {
    /// `shared` (the source made with its own configuration) made again per person by `make`
    /// with their `credential`.
    pub(crate) fn new(
        shared: Arc<dyn ToolSource>,
        shared_fallback: bool,
        credential: Credential,
        make: Make,
    ) -> Self {
        Self {
            shared,
            shared_fallback,
            credential,
            make,
            made: Mutex::default(),
        }
    }

    /// The credential of `principal`, the person behind `context`'s call.
    async fn entry(
        &self,
        principal: &Principal,
        context: &CallContext,
    ) -> Result<Option<Entry>, ToolSourceError> {
        let name = self.shared.name();
        match &self.credential {
            Credential::Kept(secrets) => {
                secrets.get(principal.id(), name).await.map_err(|problem| {
                    tracing::error!(
                        source = name,
                        "people's credentials cannot be read: {problem}"
                    );
                    ToolSourceError::new(
                        name,
                        Reason::unavailable("people's credentials cannot be read"),
                    )
                })
            }
            Credential::OnBehalf {
                on_behalf,
                name: given_as,
                prefix,
            } => {
                let token = on_behalf
                    .token(principal, context.subject_token())
                    .await
                    .map_err(|description| {
                        ToolSourceError::new(name, Reason::CallFailed { description })
                    })?;
                Ok(Some(
                    [(given_as.clone(), format!("{prefix}{token}"))].into(),
                ))
            }
            Credential::Connected(connected) => {
                if let Some(entry) = connected.kept(principal).await? {
                    return Ok(Some(entry));
                }
                // No grant (never connected, or revoked): the source made with the last one goes.
                self.made
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .by_person
                    .remove(principal.id());
                connected.connect(principal, context).await.map(Some)
            }
        }
    }

    /// The source that runs `principal`'s calls, made with `entry`, their credential.
    fn source_of(
        &self,
        principal: &Principal,
        entry: Option<Entry>,
    ) -> Result<Arc<dyn ToolSource>, ToolSourceError> {
        let name = self.shared.name();
        let Some(entry) = entry else {
            if self.shared_fallback {
                return Ok(Arc::clone(&self.shared));
            }
            return Err(ToolSourceError::new(
                name,
                Reason::CallFailed {
                    description: format!(
                        "This source needs the credential of the person calling it, and none is \
                         kept for {}: they have to connect it first (the gateway's \
                         administrator runs `toolkit-gen secrets set --source {name}` for them). \
                         Do not try again until then.",
                        principal.name()
                    ),
                },
            ));
        };
        let digest: [u8; 32] =
            Sha256::digest(serde_json::to_vec(&entry).unwrap_or_default()).into();
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((kept, _, source)) = made.by_person.get(principal.id())
            && *kept == digest
        {
            return Ok(Arc::clone(source));
        }
        let source = (self.make)(&entry).map_err(|problem| {
            tracing::error!(
                source = name,
                principal = principal.id(),
                "a person's credential cannot be used: {problem}"
            );
            ToolSourceError::new(
                name,
                Reason::CallFailed {
                    description: "The credential kept for the person calling this source cannot \
                                  be used: they have to connect it again."
                        .to_owned(),
                },
            )
        })?;
        if made.by_person.len() >= MAX_PEOPLE
            && !made.by_person.contains_key(principal.id())
            && let Some(oldest) = made
                .by_person
                .iter()
                .min_by_key(|(_, (_, order, _))| *order)
                .map(|(id, _)| id.clone())
        {
            made.by_person.remove(&oldest);
        }
        made.next += 1;
        let order = made.next;
        made.by_person.insert(
            principal.id().to_owned(),
            (digest, order, Arc::clone(&source)),
        );
        Ok(source)
    }

    /// The call, run by the source of the person who makes it, with its server's result as
    /// written when `written`.
    async fn called(
        &self,
        tool: &str,
        input: JsonObject,
        context: &CallContext,
        written: bool,
    ) -> Outcome<ToolSourceError> {
        let loopback = Principal::loopback();
        let principal = context.principal().unwrap_or(&loopback);
        let source = match self.entry(principal, context).await {
            Ok(entry) => self.source_of(principal, entry),
            Err(error) => Err(error),
        };
        match source {
            Ok(source) => {
                source
                    .call_keeping_written(tool, input, context, written)
                    .await
            }
            Err(error) => Outcome::from(Err(error)),
        }
    }
}

impl ToolSource for PerPerson {
    fn name(&self) -> &str {
        self.shared.name()
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        self.shared.discover()
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async move { self.called(tool, input, context, false).await.answer })
    }

    fn call_outcome<'a>(
        &'a self,
        tool: &'a str,
        input: JsonObject,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Outcome<ToolSourceError>> {
        Box::pin(self.called(tool, input, context, true))
    }
}
