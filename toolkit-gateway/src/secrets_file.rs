//! People's upstream credentials in a file: [`SecretsFile`], sealed with a key from the
//! environment, holding for each principal and source the values that person's calls of that
//! source carry (an API key, a bearer token, a user and password).
//!
//! The file is written by `toolkit-gen secrets` and read by the gateway, which reads it again
//! when it changes (its length or time of change), so a person connected while the gateway runs
//! is served at their next call. It is owner-only (`0600`): a file others may read is refused,
//! naming it. Its content is sealed with AES-256-GCM (aws-lc-rs, the crate rustls is built on)
//! under a 32-byte key the gateway reads from an environment variable, so a copy of the file, a
//! backup or a disk image holds no credential without the key.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::sealing_key::{Entry, SealingKey};

/// Everyone's credentials: by principal id (`jwt:ISS#SUB`, `token:NAME`), then by source.
type Entries = BTreeMap<String, BTreeMap<String, Entry>>;

/// What binds the sealed content to its use: a sealed file of another kind does not open.
const AAD: &[u8] = b"toolkit person secrets v1";

/// The form of the file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sealed {
    /// The form's version: 1.
    v: u32,
    /// The nonce, then the sealed JSON of the entries and its tag, in base64.
    sealed: String,
}

/// A secrets file, read again when it changes.
#[derive(Clone, Debug)]
pub struct SecretsFile {
    path: PathBuf,
    key: SealingKey,
    read: Arc<Mutex<Read>>,
}

/// What was last read, and from which state of the file.
#[derive(Debug, Default)]
struct Read {
    stamp: Option<Stamp>,
    entries: Entries,
}

impl SecretsFile {
    /// The secrets file at `path`, sealed with `key`, read now. A file that does not exist yet
    /// holds no one's credentials.
    ///
    /// # Errors
    ///
    /// A message naming the file: others may read it, it cannot be read, or it does not open with
    /// `key`.
    pub fn open(path: &Path, key: SealingKey) -> Result<Self, String> {
        let secrets = Self {
            path: path.to_owned(),
            key,
            read: Arc::default(),
        };
        secrets.read_again()?;
        Ok(secrets)
    }

    /// The credential of `principal` (its id) for `source`, as the file holds it now.
    ///
    /// # Errors
    ///
    /// The file changed and cannot be read now (the message names it); what was read before is
    /// not used then, so that a credential removed is never used again.
    pub fn get(&self, principal: &str, source: &str) -> Result<Option<Entry>, String> {
        self.read_again()?;
        let read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(read
            .entries
            .get(principal)
            .and_then(|sources| sources.get(source))
            .cloned())
    }

    /// Every `(principal, source, names)` held, for people (never a value).
    ///
    /// # Errors
    ///
    /// As [`SecretsFile::get`].
    pub fn list(&self) -> Result<Vec<(String, String, Vec<String>)>, String> {
        self.read_again()?;
        let read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(read
            .entries
            .iter()
            .flat_map(|(principal, sources)| {
                sources.iter().map(move |(source, entry)| {
                    (
                        principal.clone(),
                        source.clone(),
                        entry.keys().cloned().collect(),
                    )
                })
            })
            .collect())
    }

    /// Keeps `entry` as `principal`'s credential for `source` (`None`: removes it), in the file,
    /// one writer at a time (a lock file beside it), replaced whole by a rename.
    ///
    /// # Errors
    ///
    /// A message naming the file: it cannot be read, locked or written.
    pub fn set(&self, principal: &str, source: &str, entry: Option<Entry>) -> Result<(), String> {
        let located = |problem: String| format!("{}: {problem}", self.path.display());
        let lock_path = with_suffix(&self.path, ".lock");
        let lock = owner_only(OpenOptions::new().create(true).append(true))
            .open(&lock_path)
            .map_err(|error| format!("{}: cannot be opened: {error}", lock_path.display()))?;
        lock.lock()
            .map_err(|error| format!("{}: cannot be locked: {error}", lock_path.display()))?;
        let mut entries = self.load()?.map(|(_, entries)| entries).unwrap_or_default();
        match entry {
            Some(entry) => {
                entries
                    .entry(principal.to_owned())
                    .or_default()
                    .insert(source.to_owned(), entry);
            }
            None => {
                if let Some(sources) = entries.get_mut(principal) {
                    sources.remove(source);
                    if sources.is_empty() {
                        entries.remove(principal);
                    }
                }
            }
        }
        let plain = serde_json::to_vec(&entries).map_err(|error| located(error.to_string()))?;
        let sealed = Sealed {
            v: 1,
            sealed: self.key.seal(&plain, AAD).map_err(located)?,
        };
        let text = serde_json::to_vec(&sealed).map_err(|error| located(error.to_string()))?;
        let written = with_suffix(&self.path, ".new");
        let mut file = owner_only(OpenOptions::new().create(true).write(true).truncate(true))
            .open(&written)
            .map_err(|error| format!("{}: cannot be written: {error}", written.display()))?;
        file.write_all(&text)
            .and_then(|()| file.sync_all())
            .map_err(|error| format!("{}: cannot be written: {error}", written.display()))?;
        std::fs::rename(&written, &self.path)
            .map_err(|error| located(format!("cannot be replaced: {error}")))?;
        drop(lock);
        self.read_again()
    }

    /// Reads the file again when it changed since it was last read.
    fn read_again(&self) -> Result<(), String> {
        let stamp = stamp(&self.path);
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        if read.stamp.is_some() && read.stamp == stamp {
            return Ok(());
        }
        match self.load() {
            Ok(loaded) => {
                let (stamp, entries) = loaded.unwrap_or_default();
                read.stamp = stamp;
                read.entries = entries;
                Ok(())
            }
            Err(problem) => {
                read.stamp = None;
                read.entries.clear();
                Err(problem)
            }
        }
    }

    /// The file's entries and its state when read; `None` when it does not exist.
    fn load(&self) -> Result<Option<(Option<Stamp>, Entries)>, String> {
        let located = |problem: String| format!("{}: {problem}", self.path.display());
        let file = match File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(located(format!("cannot be read: {error}"))),
        };
        let metadata = file
            .metadata()
            .map_err(|error| located(format!("cannot be read: {error}")))?;
        refuse_shared(&metadata).map_err(located)?;
        let sealed: Sealed = serde_json::from_reader(std::io::BufReader::new(file))
            .map_err(|error| located(format!("is no secrets file: {error}")))?;
        if sealed.v != 1 {
            return Err(located(format!(
                "is a secrets file of version {}, and this gateway reads version 1",
                sealed.v
            )));
        }
        let plain = self.key.open(&sealed.sealed, AAD).map_err(located)?;
        let entries = serde_json::from_slice(&plain)
            .map_err(|error| located(format!("holds no secrets: {error}")))?;
        Ok(Some((Some(stamp_of(&metadata)), entries)))
    }
}

/// What tells one state of the file from another: its length, time of change and (on Unix) its
/// inode, new at each replacement, and the time its mode last changed.
type Stamp = (u64, SystemTime, u64, i64);

fn stamp(path: &Path) -> Option<Stamp> {
    std::fs::metadata(path)
        .ok()
        .map(|metadata| stamp_of(&metadata))
}

fn stamp_of(metadata: &std::fs::Metadata) -> Stamp {
    #[cfg(unix)]
    let (inode, changed) = {
        use std::os::unix::fs::MetadataExt;
        (
            metadata.ino(),
            metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
        )
    };
    #[cfg(not(unix))]
    let (inode, changed) = (0, 0);
    (
        metadata.len(),
        metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        inode,
        changed,
    )
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `options`, creating a file only its owner may read and write.
fn owner_only(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600)
    }
    #[cfg(not(unix))]
    options
}

/// Refuses a file its group or others may read or write.
fn refuse_shared(metadata: &std::fs::Metadata) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "is readable or writable by others (mode {mode:o}); make it 600 (`chmod 600`)"
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = metadata;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;

    fn key() -> SealingKey {
        SealingKey::from_base64(&STANDARD.encode([7u8; 32])).unwrap()
    }

    fn dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("toolkit-secrets-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entry(value: &str) -> Entry {
        [("api_key".to_owned(), value.to_owned())].into()
    }

    #[test]
    fn a_credential_kept_is_read_back_by_its_person_and_source_only() {
        let path = dir("kept").join("people.secrets");
        let secrets = SecretsFile::open(&path, key()).unwrap();
        assert_eq!(secrets.get("token:alice", "pets").unwrap(), None);
        secrets
            .set("token:alice", "pets", Some(entry("alice-key")))
            .unwrap();
        secrets
            .set("token:bob", "pets", Some(entry("bob-key")))
            .unwrap();
        let reader = SecretsFile::open(&path, key()).unwrap();
        assert_eq!(
            reader.get("token:alice", "pets").unwrap(),
            Some(entry("alice-key"))
        );
        assert_eq!(
            reader.get("token:bob", "pets").unwrap(),
            Some(entry("bob-key"))
        );
        assert_eq!(reader.get("token:alice", "other").unwrap(), None);
        assert_eq!(reader.get("token:carol", "pets").unwrap(), None);
        // Sealed: no value nor name is in the file.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("alice") && !text.contains("api_key"),
            "{text}"
        );
        // Removed: the reader sees it at its next look.
        secrets.set("token:alice", "pets", None).unwrap();
        assert_eq!(reader.get("token:alice", "pets").unwrap(), None);
        assert_eq!(
            reader.list().unwrap(),
            [(
                "token:bob".to_owned(),
                "pets".to_owned(),
                vec!["api_key".to_owned()]
            )]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_read_is_refused_naming_it() {
        use std::os::unix::fs::PermissionsExt;
        let path = dir("shared").join("people.secrets");
        let secrets = SecretsFile::open(&path, key()).unwrap();
        secrets
            .set("token:alice", "pets", Some(entry("k")))
            .unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = SecretsFile::open(&path, key()).unwrap_err();
        assert!(
            error.contains("people.secrets") && error.contains("644"),
            "{error}"
        );
        // A reader that was open uses nothing it read before.
        assert!(secrets.get("token:alice", "pets").is_err());
    }

    #[test]
    fn another_key_or_a_changed_file_does_not_open() {
        let path = dir("keys").join("people.secrets");
        SecretsFile::open(&path, key())
            .unwrap()
            .set("token:alice", "pets", Some(entry("k")))
            .unwrap();
        let other = SealingKey::from_base64(&STANDARD.encode([8u8; 32])).unwrap();
        let error = SecretsFile::open(&path, other).unwrap_err();
        assert!(error.contains("does not open with this key"), "{error}");
        let mut sealed: Sealed = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut bytes = STANDARD.decode(&sealed.sealed).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        sealed.sealed = STANDARD.encode(bytes);
        std::fs::write(&path, serde_json::to_vec(&sealed).unwrap()).unwrap();
        assert!(SecretsFile::open(&path, key()).is_err());
        assert!(
            SealingKey::from_base64("c2hvcnQ=")
                .unwrap_err()
                .contains("5 bytes")
        );
        assert!(SealingKey::from_base64("not base64!").is_err());
    }

    #[test]
    fn writers_at_once_lose_no_one() {
        let path = dir("race").join("people.secrets");
        let threads: Vec<_> = (0..8)
            .map(|person| {
                let secrets = SecretsFile::open(&path, key()).unwrap();
                std::thread::spawn(move || {
                    for source in 0..5 {
                        secrets
                            .set(
                                &format!("token:p{person}"),
                                &format!("s{source}"),
                                Some(entry(&format!("{person}-{source}"))),
                            )
                            .unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let secrets = SecretsFile::open(&path, key()).unwrap();
        assert_eq!(secrets.list().unwrap().len(), 40);
        assert_eq!(secrets.get("token:p3", "s4").unwrap(), Some(entry("3-4")));
    }
}
