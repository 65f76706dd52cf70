//! Where a source's OAuth grants are kept: the token store its `oauth.token_store` names
//! ([`TokenStoreConfig`]), opened: a file, or Redis (its URL written, or in a variable).

use std::sync::Arc;

use toolkit_auth::{FileStore, RedisStore, TokenStore};

use super::config::{ConfigError, SourceConfig, read_env};
use super::token_store::{RedisUrl, TokenStoreConfig};

/// The token store of a source's `oauth`, where people's grants are kept too (for
/// `toolkit-gen connections`).
///
/// # Errors
///
/// The source has no `oauth.token_store`, or a variable it names is unset.
pub fn token_store(config: &SourceConfig) -> Result<Arc<dyn TokenStore>, ConfigError> {
    match config
        .oauth
        .as_ref()
        .and_then(|oauth| oauth.token_store.as_ref())
    {
        Some(store) => open_store(&config.name, store),
        None => Err(ConfigError(format!(
            "source {:?} has no `oauth.token_store`",
            config.name
        ))),
    }
}

/// The token store of source `name`, nothing connected yet.
pub(crate) fn open_store(
    name: &str,
    store: &TokenStoreConfig,
) -> Result<Arc<dyn TokenStore>, ConfigError> {
    match store {
        TokenStoreConfig::File(path) => Ok(Arc::new(FileStore::new(path))),
        TokenStoreConfig::Redis { url, key_prefix } => {
            let url = match url {
                RedisUrl::Written(url) => url.clone(),
                RedisUrl::Env(variable) => read_env(name, variable)?,
            };
            let mut store = RedisStore::new(&url)
                .map_err(|error| ConfigError(format!("source {name:?}: {error}")))?;
            if let Some(prefix) = key_prefix {
                store = store.key_prefix(prefix.clone());
            }
            Ok(Arc::new(store))
        }
    }
}
