//! Where tokens are kept: the [`TokenStore`] trait a host implements to persist them,
//! [`MemoryStore`] and [`FileStore`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::{AuthError, Grant};
use crate::BoxFuture;

/// Where an [`OAuthClient`](super::OAuthClient) keeps what an authorization gave, one
/// [`Grant`] per MCP server (keyed by the server's URL as given). A host persists them (a file,
/// the OS keychain, a database) so that a user authorizes once; a refreshed or rotated token is
/// saved at once, over the old one.
pub trait TokenStore: Send + Sync + 'static {
    /// The grant kept for `server`, if any.
    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Option<Grant>, AuthError>>;
    /// Keeps `grant` for `server`, replacing any other.
    fn save<'a>(
        &'a self,
        server: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<(), AuthError>>;
    /// Forgets the grant of `server` (a refresh token refused, a logout).
    fn remove<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<(), AuthError>>;
}

/// Grants kept in memory for the life of the store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    grants: Mutex<BTreeMap<String, Grant>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryStore {
    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Option<Grant>, AuthError>> {
        let grant = self
            .grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(server)
            .cloned();
        Box::pin(async move { Ok(grant) })
    }

    fn save<'a>(
        &'a self,
        server: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        self.grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(server.to_owned(), grant.clone());
        Box::pin(async { Ok(()) })
    }

    fn remove<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        self.grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(server);
        Box::pin(async { Ok(()) })
    }
}

/// Grants kept in one JSON file that only its owner may read or write (mode 0600, in a folder
/// made 0700 if the store makes it): for a command line and a gateway.
///
/// Every save writes a new file beside it and renames it over the old one, so a crash never
/// leaves half a file. A file that others may read is refused, not read. The file is small and
/// read and written in place (blocking the thread briefly).
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    /// Serializes the read-modify-write of saves within the process.
    writing: Mutex<()>,
}

#[derive(Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    grants: BTreeMap<String, Grant>,
}

impl FileStore {
    /// The store in the file at `path` (made at the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            writing: Mutex::new(()),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<StoreFile, AuthError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(StoreFile::default());
            }
            Err(_) => return Err(AuthError::Store("the token file cannot be read".into())),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&self.path)
                .map_err(|_| AuthError::Store("the token file cannot be read".into()))?
                .permissions()
                .mode();
            if mode & 0o077 != 0 {
                return Err(AuthError::Store(
                    "the token file may be read by others than its owner; make it owner-only (chmod 600)"
                        .into(),
                ));
            }
        }
        serde_json::from_str(&text)
            .map_err(|_| AuthError::Store("the token file is not a token store".into()))
    }

    fn write(&self, file: &StoreFile) -> Result<(), AuthError> {
        let failed = |_| AuthError::Store("the token file cannot be written".into());
        let text = serde_json::to_vec_pretty(file)
            .map_err(|_| AuthError::Store("the grants cannot be written as JSON".into()))?;
        if let Some(folder) = self.path.parent().filter(|p| !p.as_os_str().is_empty())
            && !folder.exists()
        {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder.create(folder).map_err(failed)?;
        }
        let mut temporary = self.path.clone().into_os_string();
        temporary.push(format!(".{}.tmp", std::process::id()));
        let temporary = PathBuf::from(temporary);
        {
            use std::io::Write;
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            let mut out = options.open(&temporary).map_err(failed)?;
            out.write_all(&text).map_err(failed)?;
            out.sync_all().map_err(failed)?;
        }
        std::fs::rename(&temporary, &self.path).map_err(failed)
    }

    fn change(&self, change: impl FnOnce(&mut StoreFile)) -> Result<(), AuthError> {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let mut file = self.read()?;
        change(&mut file);
        self.write(&file)
    }
}

impl TokenStore for FileStore {
    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Option<Grant>, AuthError>> {
        let loaded = self.read().map(|mut file| file.grants.remove(server));
        Box::pin(async move { loaded })
    }

    fn save<'a>(
        &'a self,
        server: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        let saved = self.change(|file| {
            file.grants.insert(server.to_owned(), grant.clone());
        });
        Box::pin(async move { saved })
    }

    fn remove<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        let removed = self.change(|file| {
            file.grants.remove(server);
        });
        Box::pin(async move { removed })
    }
}
