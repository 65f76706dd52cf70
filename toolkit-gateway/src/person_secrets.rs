//! Upstream credentials kept per person: [`PersonSecrets`], in a sealed owner-only file
//! ([`SecretsFile`]) for one machine, or in Redis
//! ([`RedisSecrets`]) for replicas on several — the token
//! store's two backends — each value sealed with a key from the environment
//! ([`SealingKey`]).

pub use super::redis_secrets::RedisSecrets;
pub use super::sealing_key::{Entry, SealingKey};
pub use super::secrets_file::SecretsFile;

use super::token_store::{RedisUrl, TokenStoreConfig};

/// Where people's credentials are kept.
#[derive(Debug)]
pub enum PersonSecrets {
    /// A sealed file.
    File(SecretsFile),
    /// A Redis server.
    Redis(Box<RedisSecrets>),
}

impl PersonSecrets {
    /// The store `config` names (a file, read now; or Redis, its URL read from its variable
    /// where it says), sealed with `key`.
    ///
    /// # Errors
    ///
    /// A message naming the file or variable: a file others may read, one that cannot be read
    /// or does not open with `key`; a variable unset; no Redis URL.
    pub fn open(config: &TokenStoreConfig, key: SealingKey) -> Result<Self, String> {
        match config {
            TokenStoreConfig::File(path) => SecretsFile::open(path, key).map(Self::File),
            TokenStoreConfig::Redis { url, key_prefix } => {
                let url = match url {
                    RedisUrl::Written(url) => url.clone(),
                    RedisUrl::Env(variable) => std::env::var(variable)
                        .map_err(|_| format!("the variable {variable} is not set"))?,
                };
                RedisSecrets::new(&url, key_prefix.clone(), key)
                    .map(|redis| Self::Redis(Box::new(redis)))
            }
        }
    }

    /// The credential of `principal` (its id) for `source`, as the store holds it now.
    ///
    /// # Errors
    ///
    /// The store cannot be read (the message names it, never a value).
    pub async fn get(&self, principal: &str, source: &str) -> Result<Option<Entry>, String> {
        match self {
            Self::File(file) => file.get(principal, source),
            Self::Redis(redis) => redis.get(principal, source).await,
        }
    }

    /// Keeps `entry` as `principal`'s credential for `source` (`None`: removes it).
    ///
    /// # Errors
    ///
    /// The store cannot be written.
    pub async fn set(
        &self,
        principal: &str,
        source: &str,
        entry: Option<Entry>,
    ) -> Result<(), String> {
        match self {
            Self::File(file) => file.set(principal, source, entry),
            Self::Redis(redis) => redis.set(principal, source, entry).await,
        }
    }

    /// Every `(principal, source, names)` held (never a value).
    ///
    /// # Errors
    ///
    /// The store cannot be read.
    pub async fn list(&self) -> Result<Vec<(String, String, Vec<String>)>, String> {
        match self {
            Self::File(file) => file.list(),
            Self::Redis(redis) => redis.list().await,
        }
    }
}
