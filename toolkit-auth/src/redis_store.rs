//! [`RedisStore`]: grants kept in Redis, for gateway replicas on several machines.

use std::fmt;
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::store::{Change, ChangeFn, TokenStore, Updated};
use super::{AuthError, Grant};
use toolkit_core::BoxFuture;

/// Grants kept in a Redis server that several processes on several machines share: gateway
/// replicas behind a load balancer, and the command line's `login` that gives them their grant.
/// (On one machine, a [`FileStore`](super::FileStore) needs nothing running.)
///
/// Each server's grant is one key, `PREFIX grant: SERVER` (JSON, as a token file holds it), so a
/// read is always a whole grant. Every change — a save, a removal, a refresh through
/// [`update`](TokenStore::update) — holds the server's lock key (`PREFIX lock: SERVER`, set with
/// `NX` and an expiry) from its read to its write, so one change at a time is made to a grant
/// across every replica; the write is made by a script that checks the lock is still this
/// writer's, so a writer whose lock expired (it took longer than [`lock_ttl`](Self::lock_ttl))
/// writes nothing. A lock whose holder died expires by itself.
///
/// One Redis server (or the primary its clients are given) is assumed; the URL is
/// `redis://[USER:PASSWORD@]HOST[:PORT][/DB]`, or `rediss://…` for TLS (the system's roots).
/// Anyone who can read the server's keys reads the tokens: give the store a server (or an ACL
/// user and key prefix) of its own. The connection is made at the first use, on the tokio
/// runtime of that use, and made again when it breaks; a store is used from one runtime.
pub struct RedisStore {
    client: redis::Client,
    connection: tokio::sync::OnceCell<ConnectionManager>,
    prefix: String,
    lock_timeout: Duration,
    lock_ttl: Duration,
    timeout: Duration,
}

/// The key prefix unless one is given.
const PREFIX: &str = "toolkit:tokens:";
/// How long a change waits for other writers by default: longer than a refresh takes (its
/// requests time out after 10 seconds).
const LOCK_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a lock is held at most by default, should its holder never let it go.
const LOCK_TTL: Duration = Duration::from_secs(60);
/// How long connecting, and each command, may take by default.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The longest pause between two tries of a held lock.
const MAX_PAUSE: Duration = Duration::from_millis(100);

/// Writes `ARGV[2]` into `KEYS[2]` (removes it when `ARGV[2]` is empty) if `KEYS[1]`, the lock,
/// still holds this writer's `ARGV[1]`; 1 when written, 0 when the lock was lost.
const WRITE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2]) end
return 1
";

/// Lets the lock `KEYS[1]` go if it still holds this writer's `ARGV[1]`.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

impl RedisStore {
    /// The store at the Redis server of `url` (`redis://` or `rediss://`); nothing is
    /// connected until the first use.
    ///
    /// # Errors
    ///
    /// [`AuthError::Store`] when `url` is not a Redis URL (the failure does not repeat it).
    pub fn new(url: &str) -> Result<Self, AuthError> {
        let client = redis::Client::open(url).map_err(|_| {
            AuthError::Store(
                "the token store's URL is not a Redis URL (redis://HOST:PORT/DB or rediss://…)"
                    .into(),
            )
        })?;
        Ok(Self {
            client,
            connection: tokio::sync::OnceCell::new(),
            prefix: PREFIX.to_owned(),
            lock_timeout: LOCK_TIMEOUT,
            lock_ttl: LOCK_TTL,
            timeout: TIMEOUT,
        })
    }

    /// Puts `prefix` before every key of the store (`toolkit:tokens:` by default): stores of
    /// several teams, or of a test, apart in one server.
    #[must_use]
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Waits at most `wait` for other writers before a change fails (30 seconds by default).
    #[must_use]
    pub fn lock_timeout(mut self, wait: Duration) -> Self {
        self.lock_timeout = wait;
        self
    }

    /// Holds a lock at most `ttl` (60 seconds by default): a holder that dies lets it go after
    /// that, and a change that takes longer writes nothing. Longer than a refresh takes.
    #[must_use]
    pub fn lock_ttl(mut self, ttl: Duration) -> Self {
        self.lock_ttl = ttl;
        self
    }

    /// Connecting, and each command, fail after `timeout` (5 seconds by default).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn grant_key(&self, server: &str) -> String {
        format!("{}grant:{server}", self.prefix)
    }

    fn lock_key(&self, server: &str) -> String {
        format!("{}lock:{server}", self.prefix)
    }

    /// The connection, made at the first use (again after a failed first try).
    async fn connection(&self) -> Result<ConnectionManager, AuthError> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            // A broken connection is made again once, at once, then the failure is the answer:
            // a refresh waits for the store no longer than for its authorization server.
            .set_number_of_retries(1);
        let connection = self
            .connection
            .get_or_try_init(|| {
                let client = self.client.clone();
                async move { ConnectionManager::new_with_config(client, config).await }
            })
            .await
            .map_err(unreachable)?;
        Ok(connection.clone())
    }

    async fn read(
        &self,
        connection: &mut ConnectionManager,
        server: &str,
    ) -> Result<Option<Grant>, AuthError> {
        let text: Option<String> = redis::cmd("GET")
            .arg(self.grant_key(server))
            .query_async(connection)
            .await
            .map_err(unreachable)?;
        text.map(|text| {
            serde_json::from_str(&text).map_err(|_| {
                AuthError::Store("the Redis token store holds a grant that is not one".into())
            })
        })
        .transpose()
    }

    /// Takes the lock of `server`'s grant, waiting for other writers at most the lock timeout;
    /// the lock's value, this writer's own.
    async fn lock(
        &self,
        connection: &mut ConnectionManager,
        server: &str,
    ) -> Result<String, AuthError> {
        // A value no other writer holds: 128 random bits (oauth2's `state` generator, already
        // a dependency of `auth`).
        let mine = oauth2::CsrfToken::new_random().secret().clone();
        let key = self.lock_key(server);
        let ttl = u64::try_from(self.lock_ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let deadline = Instant::now() + self.lock_timeout;
        let mut pause = Duration::from_millis(5);
        loop {
            let taken: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(&mine)
                .arg("NX")
                .arg("PX")
                .arg(ttl)
                .query_async(connection)
                .await
                .map_err(unreachable)?;
            if taken.is_some() {
                return Ok(mine);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(AuthError::Store(format!(
                    "the Redis token store's grant was kept locked by another writer for over {} s",
                    self.lock_timeout.as_secs_f64()
                )));
            }
            tokio::time::sleep(pause.min(left)).await;
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }

    /// Writes `grant` (removes the grant when `None`) if the lock `mine` is still held.
    async fn write(
        &self,
        connection: &mut ConnectionManager,
        server: &str,
        mine: &str,
        grant: Option<&Grant>,
    ) -> Result<(), AuthError> {
        let text = match grant {
            Some(grant) => serde_json::to_string(grant)
                .map_err(|_| AuthError::Store("the grant cannot be written as JSON".into()))?,
            None => String::new(),
        };
        let written: i64 = redis::Script::new(WRITE)
            .key(self.lock_key(server))
            .key(self.grant_key(server))
            .arg(mine)
            .arg(text)
            .invoke_async(connection)
            .await
            .map_err(unreachable)?;
        if written == 1 {
            Ok(())
        } else {
            Err(AuthError::Store(format!(
                "the change took longer than the Redis token store's lock lasts ({} s): another \
                 writer may have changed the grant since, so nothing was written",
                self.lock_ttl.as_secs_f64()
            )))
        }
    }

    /// Lets the lock `mine` go (if it expired meanwhile, the next holder's stays).
    async fn release(&self, connection: &mut ConnectionManager, server: &str, mine: &str) {
        let released: Result<i64, _> = redis::Script::new(RELEASE)
            .key(self.lock_key(server))
            .arg(mine)
            .invoke_async(connection)
            .await;
        if let Err(error) = released {
            // It expires by itself after the lock's time to live.
            tracing::warn!(
                problem = %unreachable(error),
                "the Redis token store's lock could not be let go; it expires by itself"
            );
        }
    }

    /// Makes `change` of `server`'s grant under its lock.
    async fn change(&self, server: &str, grant: Option<&Grant>) -> Result<(), AuthError> {
        let mut connection = self.connection().await?;
        let mine = self.lock(&mut connection, server).await?;
        let written = self.write(&mut connection, server, &mine, grant).await;
        self.release(&mut connection, server, &mine).await;
        written
    }
}

/// A failure of Redis told without the URL (which may hold a password) or any value.
fn unreachable(error: redis::RedisError) -> AuthError {
    let what = if error.is_timeout() {
        "it did not answer in time".to_owned()
    } else if error.is_connection_refusal() {
        "the connection was refused".to_owned()
    } else if let Some(code) = error.code() {
        format!("it answered {code}")
    } else {
        error.category().to_owned()
    };
    AuthError::Store(format!("the Redis token store failed: {what}"))
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The address, never the password.
        f.debug_struct("RedisStore")
            .field(
                "address",
                &self.client.get_connection_info().addr().to_string(),
            )
            .field("prefix", &self.prefix)
            .field("lock_timeout", &self.lock_timeout)
            .field("lock_ttl", &self.lock_ttl)
            .finish_non_exhaustive()
    }
}

impl TokenStore for RedisStore {
    fn keys<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, AuthError>> {
        Box::pin(async move {
            let mut connection = self.connection().await?;
            let start = self.grant_key("");
            // SCAN's pattern is a glob: its special characters in the prefix are escaped.
            let mut pattern = String::new();
            for character in start.chars().chain(prefix.chars()) {
                if matches!(character, '*' | '?' | '[' | ']' | '\\') {
                    pattern.push('\\');
                }
                pattern.push(character);
            }
            pattern.push('*');
            let mut cursor = 0u64;
            let mut keys = Vec::new();
            loop {
                let (next, found): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1_000)
                    .query_async(&mut connection)
                    .await
                    .map_err(unreachable)?;
                keys.extend(
                    found
                        .into_iter()
                        .filter_map(|key| key.strip_prefix(&start).map(str::to_owned))
                        .filter(|key| key.starts_with(prefix)),
                );
                if next == 0 {
                    break;
                }
                cursor = next;
            }
            keys.sort();
            keys.dedup();
            Ok(keys)
        })
    }

    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Option<Grant>, AuthError>> {
        Box::pin(async move {
            let mut connection = self.connection().await?;
            self.read(&mut connection, server).await
        })
    }

    fn save<'a>(
        &'a self,
        server: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(self.change(server, Some(grant)))
    }

    fn remove<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(self.change(server, None))
    }

    fn update<'a>(
        &'a self,
        server: &'a str,
        change: ChangeFn<'a>,
    ) -> BoxFuture<'a, Result<Updated, AuthError>> {
        Box::pin(async move {
            let mut connection = self.connection().await?;
            let mine = self.lock(&mut connection, server).await?;
            let result = async {
                let stored = self.read(&mut connection, server).await?;
                Ok::<_, AuthError>(match change(stored.clone()).await? {
                    Change::Keep => Updated {
                        grant: stored,
                        unwritten: None,
                    },
                    Change::Save(grant) => Updated {
                        unwritten: self
                            .write(&mut connection, server, &mine, Some(&grant))
                            .await
                            .err(),
                        grant: Some(grant),
                    },
                    Change::Remove => Updated {
                        unwritten: self.write(&mut connection, server, &mine, None).await.err(),
                        grant: None,
                    },
                })
            }
            .await;
            self.release(&mut connection, server, &mine).await;
            result
        })
    }
}
