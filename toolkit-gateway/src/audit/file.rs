//! The audit file ([`RotatingFile`]): records appended as JSON lines, the file created with mode
//! 0600, and rotated by size (`FILE` → `FILE.1` → … → `FILE.N`, the oldest removed).

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::writer::Sink;

/// An append-only file of JSON lines, rotated past `max_bytes`.
#[derive(Debug)]
pub(crate) struct RotatingFile {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    /// The file open now; `None` after a failure, opened again at the next write.
    file: Option<File>,
    /// How many bytes of whole lines the file holds.
    size: u64,
}

impl RotatingFile {
    /// Opens (or creates, mode 0600) the file at `path`.
    ///
    /// # Errors
    ///
    /// It cannot be opened for appending.
    pub(crate) fn open(path: &Path, max_bytes: u64, keep: usize) -> io::Result<Self> {
        let mut file = Self {
            path: path.to_owned(),
            max_bytes,
            keep,
            file: None,
            size: 0,
        };
        file.reopen()?;
        Ok(file)
    }

    fn reopen(&mut self) -> io::Result<()> {
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&self.path)?;
        self.size = file.metadata()?.len();
        self.file = Some(file);
        Ok(())
    }

    /// `PATH.n`.
    fn numbered(&self, n: usize) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }

    /// Moves each rotated file one up (the oldest removed), the file to `PATH.1`, and opens a
    /// new one.
    fn rotate(&mut self) -> io::Result<()> {
        self.file = None;
        let gone = |result: io::Result<()>| match result {
            Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        };
        if self.keep == 0 {
            gone(std::fs::remove_file(&self.path))?;
        } else {
            gone(std::fs::remove_file(self.numbered(self.keep)))?;
            for n in (1..self.keep).rev() {
                gone(std::fs::rename(self.numbered(n), self.numbered(n + 1)))?;
            }
            gone(std::fs::rename(&self.path, self.numbered(1)))?;
        }
        self.reopen()
    }

    /// Appends `bytes` (whole lines) to the file open now; on a failure, what was written of
    /// them is cut off again, so that no half line is left.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.file.is_none() {
            self.reopen()?;
        }
        let Some(file) = self.file.as_mut() else {
            return Err(io::Error::other("the audit file is not open"));
        };
        match file.write_all(bytes).and_then(|()| file.flush()) {
            Ok(()) => {
                self.size += bytes.len() as u64;
                Ok(())
            }
            Err(error) => {
                let _ = file.set_len(self.size);
                self.file = None;
                Err(error)
            }
        }
    }
}

impl Sink for RotatingFile {
    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn write(&mut self, lines: &[Arc<str>]) -> (usize, Option<io::Error>) {
        let mut written = 0;
        let mut batch: Vec<u8> = Vec::new();
        let mut batched = 0;
        for line in lines {
            let length = line.len() as u64 + 1;
            let held = self.size + batch.len() as u64;
            if held > 0 && held + length > self.max_bytes {
                if let Err(error) = self.append(&batch) {
                    return (written, Some(error));
                }
                written += batched;
                batch.clear();
                batched = 0;
                if let Err(error) = self.rotate() {
                    self.file = None;
                    return (written, Some(error));
                }
            }
            batch.extend_from_slice(line.as_bytes());
            batch.push(b'\n');
            batched += 1;
        }
        match self.append(&batch) {
            Ok(()) => (written + batched, None),
            Err(error) => (written, Some(error)),
        }
    }

    fn sync(&mut self) {
        if let Some(file) = &self.file {
            let _ = file.sync_all();
        }
    }
}
