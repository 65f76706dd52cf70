//! [`FileLock`]: one writer at a time of a [`FileStore`](super::FileStore)'s file, among the
//! stores of this process and those of other processes on the machine.
//!
//! Within the process, one asynchronous mutex per canonical path (a process-wide registry), so
//! that every store over a file waits its turn without blocking a thread. Across processes, an
//! exclusive `flock` on a lock file beside the store (`tokens.json.lock`, never renamed or
//! removed, so that every process locks the same file while the store itself is replaced by
//! renames). The lock is the standard library's `File::lock` (stable since Rust 1.89: `flock(2)`
//! on Linux and the BSDs, `LockFileEx` on Windows), which is what `fs4` and `fd-lock` wrap: no
//! dependency is needed for it. The kernel lets it go when the file is closed, also when a
//! process dies holding it.

use std::collections::HashMap;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;

use super::AuthError;

/// The in-process lock of each canonical path some store is holding or waiting for.
static HOLDERS: LazyLock<Mutex<HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(Mutex::default);

/// The hold on a store's file: released when dropped.
#[derive(Debug)]
pub(crate) struct FileLock {
    _in_process: OwnedMutexGuard<()>,
    /// Locked with `flock`; closing it unlocks.
    _across_processes: File,
}

/// The process-wide lock of `canonical`.
fn in_process(canonical: &Path) -> Arc<tokio::sync::Mutex<()>> {
    let mut holders = HOLDERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(lock) = holders.get(canonical).and_then(Weak::upgrade) {
        return lock;
    }
    holders.retain(|_, lock| lock.strong_count() > 0);
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    holders.insert(canonical.to_owned(), Arc::downgrade(&lock));
    lock
}

/// Holds the store at `canonical` (a canonical path, its folder made) against every other
/// holder, waiting at most `wait`.
///
/// # Errors
///
/// [`AuthError::Store`] when the lock file cannot be opened, or another holder keeps it longer
/// than `wait`.
pub(crate) async fn lock(canonical: &Path, wait: Duration) -> Result<FileLock, AuthError> {
    let held = async {
        let in_process = in_process(canonical).lock_owned().await;
        let mut name = canonical.as_os_str().to_owned();
        name.push(".lock");
        let file = open_lock_file(Path::new(&name))?;
        let file = match file.try_lock() {
            Ok(()) => file,
            Err(TryLockError::WouldBlock) => {
                // Another process holds it: wait on a blocking thread. Should this wait be given
                // up, the thread's lock is let go as soon as it has it (the file is dropped).
                tokio::task::spawn_blocking(move || file.lock().map(|()| file))
                    .await
                    .map_err(|_| locking_failed())?
                    .map_err(|_| locking_failed())?
            }
            Err(TryLockError::Error(_)) => return Err(locking_failed()),
        };
        Ok(FileLock {
            _in_process: in_process,
            _across_processes: file,
        })
    };
    tokio::time::timeout(wait, held).await.map_err(|_| {
        AuthError::Store(format!(
            "the token file was kept locked by another writer for over {} s",
            wait.as_secs_f64()
        ))
    })?
}

fn locking_failed() -> AuthError {
    AuthError::Store("the token file's lock cannot be taken".into())
}

fn open_lock_file(path: &Path) -> Result<File, AuthError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map_err(|_| locking_failed())
}
