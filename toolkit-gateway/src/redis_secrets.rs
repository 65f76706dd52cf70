//! People's upstream credentials in Redis: [`RedisSecrets`], for gateway replicas on several
//! machines (the token store's other backend). Each person's credential for a source is one key,
//! `PREFIX SOURCE / PRINCIPAL`, its value sealed with the [`SealingKey`] and bound to its key, so a
//! value copied to another person's key does not open. A value read is kept for
//! [`KEPT_FOR`] so that calls do not each wait on Redis; a credential removed is used no more
//! after that.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::sealing_key::{Entry, SealingKey};

/// How long a credential read from Redis is used before it is read again.
pub const KEPT_FOR: Duration = Duration::from_secs(5);

/// The prefix of the keys unless configured.
pub const PREFIX: &str = "toolkit:secrets:";

/// How long a request to Redis may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The associated data every sealed value is bound to, before its key.
const AAD: &[u8] = b"toolkit person secrets v1 redis\0";

/// People's credentials in a Redis server.
pub struct RedisSecrets {
    client: redis::Client,
    connection: tokio::sync::OnceCell<ConnectionManager>,
    prefix: String,
    key: SealingKey,
    read: Mutex<HashMap<String, (Option<Entry>, Instant)>>,
}

impl std::fmt::Debug for RedisSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSecrets")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisSecrets {
    /// The credentials at the Redis server of `url`, under keys that start with `prefix`, sealed
    /// with `key`; nothing is connected until the first use.
    ///
    /// # Errors
    ///
    /// `url` is no Redis URL (the message does not repeat it: it may hold a password).
    pub fn new(url: &str, prefix: Option<String>, key: SealingKey) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(|_| {
            "the secrets store's URL is not a Redis URL (redis://HOST:PORT/DB or rediss://…)"
                .to_owned()
        })?;
        Ok(Self {
            client,
            connection: tokio::sync::OnceCell::new(),
            prefix: prefix.unwrap_or_else(|| PREFIX.to_owned()),
            key,
            read: Mutex::default(),
        })
    }

    fn key_of(&self, principal: &str, source: &str) -> String {
        format!("{}{source}/{principal}", self.prefix)
    }

    fn bound(key: &str) -> Vec<u8> {
        [AAD, key.as_bytes()].concat()
    }

    async fn connection(&self) -> Result<ConnectionManager, String> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(1);
        self.connection
            .get_or_try_init(|| {
                let client = self.client.clone();
                async move { ConnectionManager::new_with_config(client, config).await }
            })
            .await
            .cloned()
            .map_err(|error| {
                format!(
                    "the Redis secrets store cannot be reached: {:?}",
                    error.kind()
                )
            })
    }

    /// Whether the store can be reached, and its values opened with the key (one is read, when
    /// there is one).
    ///
    /// # Errors
    ///
    /// Why not.
    pub async fn check(&self) -> Result<(), String> {
        // A connection of its own, not the one kept: the check may run on a runtime of its own,
        // which a kept connection's task would not outlive.
        let mut connection =
            tokio::time::timeout(TIMEOUT, self.client.get_multiplexed_async_connection())
                .await
                .map_err(|_| "the Redis secrets store did not answer in time".to_owned())?
                .map_err(|error| {
                    format!(
                        "the Redis secrets store cannot be reached: {:?}",
                        error.kind()
                    )
                })?;
        let keys: Vec<String> = redis::cmd("SCAN")
            .arg(0)
            .arg("MATCH")
            .arg(format!("{}*", self.prefix))
            .arg("COUNT")
            .arg(100)
            .query_async::<(u64, Vec<String>)>(&mut connection)
            .await
            .map(|(_, keys)| keys)
            .map_err(|error| {
                format!("the Redis secrets store cannot be read: {:?}", error.kind())
            })?;
        if let Some(key) = keys.first() {
            self.read_key(&mut connection, key).await?;
        }
        Ok(())
    }

    async fn read_key(
        &self,
        connection: &mut impl redis::aio::ConnectionLike,
        key: &str,
    ) -> Result<Option<Entry>, String> {
        let sealed: Option<String> = redis::cmd("GET")
            .arg(key)
            .query_async(connection)
            .await
            .map_err(|error| {
                format!("the Redis secrets store cannot be read: {:?}", error.kind())
            })?;
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        let plain = self
            .key
            .open(&sealed, &Self::bound(key))
            .map_err(|problem| format!("the Redis secrets store's {key}: {problem}"))?;
        serde_json::from_slice(&plain)
            .map(Some)
            .map_err(|_| format!("the Redis secrets store's {key} holds no credential"))
    }

    /// The credential of `principal` (its id) for `source`.
    ///
    /// # Errors
    ///
    /// Redis cannot be reached, or the value does not open.
    pub async fn get(&self, principal: &str, source: &str) -> Result<Option<Entry>, String> {
        let key = self.key_of(principal, source);
        if let Some((entry, at)) = self
            .read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            && at.elapsed() < KEPT_FOR
        {
            return Ok(entry.clone());
        }
        let mut connection = self.connection().await?;
        let entry = self.read_key(&mut connection, &key).await?;
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        read.retain(|_, (_, at)| at.elapsed() < KEPT_FOR);
        read.insert(key, (entry.clone(), Instant::now()));
        Ok(entry)
    }

    /// Keeps `entry` as `principal`'s credential for `source` (`None`: removes it).
    ///
    /// # Errors
    ///
    /// Redis cannot be reached or written.
    pub async fn set(
        &self,
        principal: &str,
        source: &str,
        entry: Option<Entry>,
    ) -> Result<(), String> {
        let key = self.key_of(principal, source);
        let mut connection = self.connection().await?;
        let written = match &entry {
            Some(entry) => {
                let plain = serde_json::to_vec(entry).map_err(|error| error.to_string())?;
                let sealed = self.key.seal(&plain, &Self::bound(&key))?;
                redis::cmd("SET")
                    .arg(&key)
                    .arg(sealed)
                    .query_async::<()>(&mut connection)
                    .await
            }
            None => {
                redis::cmd("DEL")
                    .arg(&key)
                    .query_async::<()>(&mut connection)
                    .await
            }
        };
        written.map_err(|error| {
            format!(
                "the Redis secrets store cannot be written: {:?}",
                error.kind()
            )
        })?;
        self.read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        Ok(())
    }

    /// Every `(principal, source, names)` held (never a value).
    ///
    /// # Errors
    ///
    /// Redis cannot be reached, or a value does not open.
    pub async fn list(&self) -> Result<Vec<(String, String, Vec<String>)>, String> {
        let mut connection = self.connection().await?;
        let mut cursor = 0u64;
        let mut keys = Vec::new();
        loop {
            let (next, mut found): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{}*", self.prefix))
                .arg("COUNT")
                .arg(1_000)
                .query_async(&mut connection)
                .await
                .map_err(|error| {
                    format!("the Redis secrets store cannot be read: {:?}", error.kind())
                })?;
            keys.append(&mut found);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.sort();
        keys.dedup();
        let mut listed = Vec::new();
        for key in keys {
            let Some((source, principal)) = key
                .strip_prefix(&self.prefix)
                .and_then(|rest| rest.split_once('/'))
            else {
                continue;
            };
            if let Some(entry) = self.read_key(&mut connection, &key).await? {
                listed.push((
                    principal.to_owned(),
                    source.to_owned(),
                    entry.keys().cloned().collect(),
                ));
            }
        }
        Ok(listed)
    }
}
