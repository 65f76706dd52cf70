//! `oauth.token_store` of a source: where its grant is kept, a file (one machine) or Redis
//! (replicas on several machines). `sources.rs` opens it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Where a source's grant is kept, written one of three ways:
///
/// - `token_store = "tokens.json"`: a `FileStore` (owner-only), relative to the
///   configuration's directory. Every process of the machine may share it (a lock file);
///   machines may not.
/// - `token_store = "redis://10.0.0.5:6379/0"` (`rediss://` for TLS): a `RedisStore` that
///   replicas on several machines share. A URL written here may not hold a password.
/// - `token_store = { redis_url_env = "TOKENS_REDIS_URL", key_prefix = "team-a:" }`: the URL
///   (with its password) from an environment variable, and the prefix of the store's keys
///   (`toolkit:tokens:` unless given); `redis_url = "…"` in place of `redis_url_env` for a URL
///   with no password.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "Written")]
pub enum TokenStoreConfig {
    /// A token file.
    File(PathBuf),
    /// A Redis server.
    Redis {
        /// Its URL, or the variable that holds it.
        url: RedisUrl,
        /// The prefix of its keys.
        key_prefix: Option<String>,
    },
}

/// Where a Redis store's URL is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisUrl {
    /// Written in the configuration (no password).
    Written(String),
    /// In this environment variable.
    Env(String),
}

/// `token_store` as written.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Text(String),
    Table(Table),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    redis_url: Option<String>,
    redis_url_env: Option<String>,
    key_prefix: Option<String>,
}

impl TryFrom<Written> for TokenStoreConfig {
    type Error = String;

    fn try_from(written: Written) -> Result<Self, Self::Error> {
        match written {
            Written::Text(text) if is_redis(&text) => Ok(Self::Redis {
                url: RedisUrl::Written(written_url(text)?),
                key_prefix: None,
            }),
            Written::Text(text) => Ok(Self::File(PathBuf::from(text))),
            Written::Table(table) => {
                let url = match (table.redis_url, table.redis_url_env) {
                    (Some(url), None) if is_redis(&url) => RedisUrl::Written(written_url(url)?),
                    (Some(_), None) => {
                        return Err("`token_store.redis_url` is a redis:// or rediss:// URL".into());
                    }
                    (None, Some(variable)) => RedisUrl::Env(variable),
                    _ => {
                        return Err(
                            "a `token_store` table takes one of `redis_url` and `redis_url_env`"
                                .into(),
                        );
                    }
                };
                Ok(Self::Redis {
                    url,
                    key_prefix: table.key_prefix,
                })
            }
        }
    }
}

fn is_redis(text: &str) -> bool {
    text.starts_with("redis://") || text.starts_with("rediss://")
}

/// A URL written in the configuration, refused when it holds a password (the message does not
/// repeat it).
fn written_url(url: String) -> Result<String, String> {
    let password = url::Url::parse(&url).map_err(|_| {
        "`token_store` is not a Redis URL (redis://HOST:PORT/DB or rediss://…)".to_owned()
    })?;
    if password.password().is_some() {
        return Err(
            "`token_store` holds a password: put the URL in an environment variable, \
             `token_store = { redis_url_env = \"VAR\" }`"
                .into(),
        );
    }
    Ok(url)
}

impl TokenStoreConfig {
    /// A file's path made relative to `base` (the configuration's directory); a URL stays.
    pub(crate) fn relative_to(&mut self, base: &Path) {
        if let Self::File(path) = self {
            *path = base.join(&*path);
        }
    }
}

impl fmt::Display for TokenStoreConfig {
    /// The file's path, the written URL (it holds no password) or the variable's name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Redis {
                url: RedisUrl::Written(url),
                ..
            } => f.write_str(url),
            Self::Redis {
                url: RedisUrl::Env(variable),
                ..
            } => write!(f, "${variable}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Holder {
        #[allow(dead_code)]
        token_store: TokenStoreConfig,
    }

    fn read(text: &str) -> Result<TokenStoreConfig, String> {
        toml::from_str::<Holder>(&format!("token_store = {text}"))
            .map(|holder| holder.token_store)
            .map_err(|error| error.message().to_owned())
    }

    #[test]
    fn a_token_store_is_a_file_a_redis_url_or_a_table() {
        let mut file = read("\"tokens.json\"").unwrap();
        file.relative_to(Path::new("/etc/toolkit"));
        assert_eq!(file.to_string(), "/etc/toolkit/tokens.json");
        let mut written = read("\"rediss://10.0.0.5:6380/2\"").unwrap();
        written.relative_to(Path::new("/etc/toolkit"));
        assert!(
            matches!(&written, TokenStoreConfig::Redis { url: RedisUrl::Written(url), key_prefix: None } if url == "rediss://10.0.0.5:6380/2"),
            "{written:?}"
        );
        let table = read("{ redis_url_env = \"TOKENS\", key_prefix = \"team:\" }").unwrap();
        assert!(
            matches!(&table, TokenStoreConfig::Redis { url: RedisUrl::Env(variable), key_prefix: Some(prefix) } if variable == "TOKENS" && prefix == "team:"),
            "{table:?}"
        );
        assert_eq!(table.to_string(), "$TOKENS");
        assert!(read("{ redis_url = \"redis://127.0.0.1/0\" }").is_ok());
    }

    #[test]
    fn a_written_password_and_a_confused_table_are_refused() {
        for text in [
            "\"redis://:hunter2@10.0.0.5:6379/0\"",
            "{ redis_url = \"redis://user:hunter2@10.0.0.5/0\" }",
        ] {
            let error = read(text).unwrap_err();
            assert!(error.contains("redis_url_env"), "{error}");
            assert!(!error.contains("hunter2"), "{error}");
        }
        let error = read("{ redis_url = \"http://10.0.0.5/\" }").unwrap_err();
        assert!(error.contains("redis:// or rediss://"), "{error}");
        let error = read("{ redis_url = \"redis://a/0\", redis_url_env = \"T\" }").unwrap_err();
        assert!(error.contains("one of"), "{error}");
        assert!(
            read("{ key_prefix = \"p:\" }")
                .unwrap_err()
                .contains("one of")
        );
        assert!(read("{ redis_url_env = \"T\", prefix = \"p:\" }").is_err());
    }
}
