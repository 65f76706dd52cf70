//! Where tokens are kept: the [`TokenStore`] trait a host implements to persist them,
//! [`MemoryStore`] and [`FileStore`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::file_lock;
use super::{AuthError, Grant};
use toolkit_core::BoxFuture;

/// Where an [`OAuthClient`](super::OAuthClient) keeps what an authorization gave, one
/// [`Grant`] per MCP server (keyed by the server's URL as given). A host persists them (a file,
/// the OS keychain, a database) so that a user authorizes once; a refreshed or rotated token is
/// saved at once, over the old one.
///
/// A store that several clients share (in one process or in several) implements
/// [`update`](Self::update) so that one change at a time is made to a grant: a refresh reads
/// the grant, refreshes it and saves it with every other writer kept out, so that a refresh
/// token an authorization server rotates is never used twice and never lost.
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

    /// The keys of the grants kept that start with `prefix`, in order (a gateway's grants of one
    /// source, one per person). By default the store cannot tell: [`AuthError::Store`].
    fn keys<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, AuthError>> {
        let _ = prefix;
        Box::pin(async {
            Err(AuthError::Store(
                "this token store cannot list its grants".into(),
            ))
        })
    }

    /// Reads the grant of `server`, runs `change` on it (a refresh: requests to an
    /// authorization server) and makes the [`Change`] it gives, with every other writer of the
    /// store kept out meanwhile. A failure of `change` is the answer, and nothing is changed;
    /// a change that cannot be written is told in [`Updated::unwritten`].
    ///
    /// By default: [`load`](Self::load), `change`, then [`save`](Self::save) or
    /// [`remove`](Self::remove), keeping out no one (enough for a store only one client uses).
    /// [`MemoryStore`] keeps out the other clients of the process, [`FileStore`] those of every
    /// process of the machine.
    ///
    /// # Errors
    ///
    /// [`AuthError::Store`] when the grant cannot be read (or the store held), and the failure
    /// of `change`.
    fn update<'a>(
        &'a self,
        server: &'a str,
        change: ChangeFn<'a>,
    ) -> BoxFuture<'a, Result<Updated, AuthError>> {
        Box::pin(async move {
            let stored = self.load(server).await?;
            let updated = match change(stored.clone()).await? {
                Change::Keep => Updated::written(stored),
                Change::Save(grant) => Updated {
                    unwritten: self.save(server, &grant).await.err(),
                    grant: Some(grant),
                },
                Change::Remove => Updated {
                    unwritten: self.remove(server).await.err(),
                    grant: None,
                },
            };
            Ok(updated)
        })
    }
}

/// What the change of a [`TokenStore::update`] does with the grant it was given.
#[derive(Debug)]
// One is made per refresh and moved once: boxing the grant would only cost its users a `Box::new`.
#[allow(clippy::large_enum_variant)]
pub enum Change {
    /// Leaves it.
    Keep,
    /// Keeps this grant in its place.
    Save(Grant),
    /// Forgets it.
    Remove,
}

/// The change a [`TokenStore::update`] makes: given the stored grant (read with other writers
/// kept out), what to do with it.
pub type ChangeFn<'a> =
    Box<dyn FnOnce(Option<Grant>) -> BoxFuture<'a, Result<Change, AuthError>> + Send + 'a>;

/// What a [`TokenStore::update`] left.
#[derive(Debug)]
pub struct Updated {
    /// The server's grant after the change: the stored one for [`Change::Keep`], the new one
    /// for [`Change::Save`] (also when it could not be written), none for [`Change::Remove`].
    pub grant: Option<Grant>,
    /// Why the change could not be written, if it could not: the store still holds what it held.
    pub unwritten: Option<AuthError>,
}

impl Updated {
    fn written(grant: Option<Grant>) -> Self {
        Self {
            grant,
            unwritten: None,
        }
    }
}

/// Grants kept in memory for the life of the store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    grants: Mutex<BTreeMap<String, Grant>>,
    /// Held through an [`update`](TokenStore::update): one at a time.
    updating: tokio::sync::Mutex<()>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn grants(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Grant>> {
        self.grants.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TokenStore for MemoryStore {
    fn keys<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, AuthError>> {
        let keys = self
            .grants()
            .keys()
            .filter(|key| key.starts_with(prefix))
            .cloned()
            .collect();
        Box::pin(async move { Ok(keys) })
    }

    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Option<Grant>, AuthError>> {
        let grant = self.grants().get(server).cloned();
        Box::pin(async move { Ok(grant) })
    }

    fn save<'a>(
        &'a self,
        server: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        self.grants().insert(server.to_owned(), grant.clone());
        Box::pin(async { Ok(()) })
    }

    fn remove<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        self.grants().remove(server);
        Box::pin(async { Ok(()) })
    }

    fn update<'a>(
        &'a self,
        server: &'a str,
        change: ChangeFn<'a>,
    ) -> BoxFuture<'a, Result<Updated, AuthError>> {
        Box::pin(async move {
            let _updating = self.updating.lock().await;
            let stored = self.grants().get(server).cloned();
            let grant = match change(stored.clone()).await? {
                Change::Keep => stored,
                Change::Save(grant) => {
                    self.grants().insert(server.to_owned(), grant.clone());
                    Some(grant)
                }
                Change::Remove => {
                    self.grants().remove(server);
                    None
                }
            };
            Ok(Updated::written(grant))
        })
    }
}

/// Grants kept in one JSON file that only its owner may read or write (mode 0600, in a folder
/// made 0700 if the store makes it): for a command line and a gateway, on one machine.
///
/// Every save writes a new file beside it (a name no other writer uses) and renames it over the
/// old one, so a crash never leaves half a file and a reader always reads a whole one. A file
/// that others may read is refused, not read. Every change is read, made and written with
/// other writers kept out: the stores of this process over the same file (however its path is
/// spelt) and those of other processes (an exclusive `flock` on `FILE.lock` beside it), so that
/// a gateway, the command line's `login` and other gateways on the machine may share one file.
/// Machines that share a file over a network file system are not kept apart (`flock` does not
/// reach across NFS everywhere): replicas on several machines need a store of their own
/// implementing [`TokenStore::update`] over a shared database.
///
/// The file is small and read and written in place (blocking the thread briefly).
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    /// How long a change waits for other writers before it fails.
    lock_timeout: Duration,
}

#[derive(Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    grants: BTreeMap<String, Grant>,
}

/// How long a change waits for other writers by default: longer than a refresh takes (its
/// requests time out after 10 seconds).
const LOCK_TIMEOUT: Duration = Duration::from_secs(30);

impl FileStore {
    /// The store in the file at `path` (made at the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            lock_timeout: LOCK_TIMEOUT,
        }
    }

    /// Waits at most `wait` for other writers before a change fails (30 seconds by default).
    #[must_use]
    pub fn lock_timeout(mut self, wait: Duration) -> Self {
        self.lock_timeout = wait;
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's canonical path (the file's, or its folder's joined with its name when it does
    /// not exist yet); `None` when its folder does not exist, unless `make` (then it is made,
    /// 0700).
    fn canonical(&self, make: bool) -> Result<Option<PathBuf>, AuthError> {
        if let Ok(path) = self.path.canonicalize() {
            return Ok(Some(path));
        }
        let Some(name) = self.path.file_name() else {
            return Err(AuthError::Store(
                "the token file's path names no file".into(),
            ));
        };
        let folder = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !folder.exists() {
            if !make {
                return Ok(None);
            }
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder
                .create(folder)
                .map_err(|_| AuthError::Store("the token file's folder cannot be made".into()))?;
        }
        let folder = folder
            .canonicalize()
            .map_err(|_| AuthError::Store("the token file's folder cannot be read".into()))?;
        Ok(Some(folder.join(name)))
    }

    fn read(path: &Path) -> Result<StoreFile, AuthError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(StoreFile::default());
            }
            Err(_) => return Err(AuthError::Store("the token file cannot be read".into())),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)
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

    fn write(path: &Path, file: &StoreFile) -> Result<(), AuthError> {
        use std::io::Write;
        let failed = |_| AuthError::Store("the token file cannot be written".into());
        let text = serde_json::to_vec_pretty(file)
            .map_err(|_| AuthError::Store("the grants cannot be written as JSON".into()))?;
        let folder = path.parent().unwrap_or(Path::new("."));
        // A unique name (tempfile makes it 0600 and never reuses one that exists).
        let mut temporary = tempfile::Builder::new()
            .prefix(".tokens-")
            .suffix(".tmp")
            .tempfile_in(folder)
            .map_err(failed)?;
        temporary.write_all(&text).map_err(failed)?;
        temporary.as_file().sync_all().map_err(failed)?;
        temporary
            .persist(path)
            .map_err(|error| failed(error.error))?;
        Ok(())
    }

    /// Reads the file, makes `change` and writes it back, other writers kept out.
    async fn change(&self, change: impl FnOnce(&mut StoreFile)) -> Result<(), AuthError> {
        let Some(path) = self.canonical(true)? else {
            return Err(AuthError::Store(
                "the token file's folder cannot be made".into(),
            ));
        };
        let _held = file_lock::lock(&path, self.lock_timeout).await?;
        let mut file = Self::read(&path)?;
        change(&mut file);
        Self::write(&path, &file)
    }
}

impl TokenStore for FileStore {
    fn keys<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, AuthError>> {
        let keys = self.canonical(false).and_then(|path| match path {
            Some(path) => Self::read(&path).map(|file| {
                file.grants
                    .into_keys()
                    .filter(|key| key.starts_with(prefix))
                    .collect()
            }),
            None => Ok(Vec::new()),
        });
        Box::pin(async move { keys })
    }

    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Option<Grant>, AuthError>> {
        let loaded = self.canonical(false).and_then(|path| match path {
            Some(path) => Self::read(&path).map(|mut file| file.grants.remove(server)),
            None => Ok(None),
        });
        Box::pin(async move { loaded })
    }

    fn save<'a>(
        &'a self,
        server: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(self.change(move |file| {
            file.grants.insert(server.to_owned(), grant.clone());
        }))
    }

    fn remove<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(self.change(move |file| {
            file.grants.remove(server);
        }))
    }

    fn update<'a>(
        &'a self,
        server: &'a str,
        change: ChangeFn<'a>,
    ) -> BoxFuture<'a, Result<Updated, AuthError>> {
        Box::pin(async move {
            let Some(path) = self.canonical(true)? else {
                return Err(AuthError::Store(
                    "the token file's folder cannot be made".into(),
                ));
            };
            let _held = file_lock::lock(&path, self.lock_timeout).await?;
            let mut file = Self::read(&path)?;
            let stored = file.grants.get(server).cloned();
            let updated = match change(stored.clone()).await? {
                Change::Keep => Updated::written(stored),
                Change::Save(grant) => {
                    file.grants.insert(server.to_owned(), grant.clone());
                    Updated {
                        unwritten: Self::write(&path, &file).err(),
                        grant: Some(grant),
                    }
                }
                Change::Remove => {
                    file.grants.remove(server);
                    Updated {
                        unwritten: Self::write(&path, &file).err(),
                        grant: None,
                    }
                }
            };
            Ok(updated)
        })
    }
}
