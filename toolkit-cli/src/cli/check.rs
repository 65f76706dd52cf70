//! `toolkit-gen check (--openapi DOC | --mcp SNAPSHOT)... --name NAME DIR`: whether the crate
//! committed in `DIR` is what `toolkit-gen crate` writes from the same inputs today.
//!
//! Exit 0 when it is; 1 with a summary of each stale, missing or extra file (and the first line
//! that differs) when it is not; 2 when an input cannot be read.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::krate::CrateArgs;

/// The exit code of inputs that cannot be read.
const USAGE: u8 = 2;

/// How one file of the committed crate differs from what would be generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stale {
    /// The file is not there.
    Missing(PathBuf),
    /// The file differs: its path, the first line that differs (from 1), and how many lines
    /// each side has.
    Differs {
        /// The file, relative to the crate.
        path: PathBuf,
        /// The first line that differs, from 1.
        line: usize,
        /// The committed file's lines.
        committed: usize,
        /// The generated file's lines.
        generated: usize,
    },
    /// A Rust file under `src/` that the generator would not write (a module whose input is
    /// gone).
    Extra(PathBuf),
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing(path) => write!(f, "missing  {}", path.display()),
            Self::Differs {
                path,
                line,
                committed,
                generated,
            } => write!(
                f,
                "stale    {} (first difference at line {line}; {committed} lines committed, {generated} generated)",
                path.display()
            ),
            Self::Extra(path) => write!(f, "extra    {}", path.display()),
        }
    }
}

/// What differs between the crate in `dir` and `files`.
pub fn compare(dir: &Path, files: &[(PathBuf, String)]) -> Vec<Stale> {
    let mut stale = Vec::new();
    for (path, generated) in files {
        match std::fs::read_to_string(dir.join(path)) {
            Err(_) => stale.push(Stale::Missing(path.clone())),
            Ok(committed) if committed != *generated => {
                let line = committed
                    .lines()
                    .zip(generated.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()))
                    + 1;
                stale.push(Stale::Differs {
                    path: path.clone(),
                    line,
                    committed: committed.lines().count(),
                    generated: generated.lines().count(),
                });
            }
            Ok(_) => {}
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir.join("src")) {
        let mut extra: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| PathBuf::from("src").join(entry.file_name()))
            .filter(|path| {
                path.extension().is_some_and(|e| e == "rs")
                    || path.to_string_lossy().ends_with(".tools.json")
            })
            .filter(|path| !files.iter().any(|(p, _)| p == path))
            .collect();
        extra.sort();
        stale.extend(extra.into_iter().map(Stale::Extra));
    }
    stale
}

/// `toolkit-gen check [...] DIR`: with no arguments, those the crate records.
pub fn check(
    args: Option<&CrateArgs>,
    dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let recorded;
    let args = match args {
        Some(args) => args,
        None => match CrateArgs::recorded(dir) {
            Ok(args) => {
                recorded = args;
                &recorded
            }
            Err(problem) => {
                let _ = writeln!(err, "toolkit-gen: {problem}");
                return ExitCode::from(USAGE);
            }
        },
    };
    let files = match args.files(dir) {
        Ok(files) => files,
        Err(error) => {
            let _ = writeln!(err, "{error}");
            return ExitCode::from(USAGE);
        }
    };
    let stale = compare(dir, &files);
    if stale.is_empty() {
        let _ = writeln!(
            out,
            "toolkit-gen: {} is fresh ({} files)",
            dir.display(),
            files.len()
        );
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(
        err,
        "toolkit-gen: {} is stale: {} of its files differ from what `toolkit-gen crate` writes",
        dir.display(),
        stale.len()
    );
    for file in &stale {
        let _ = writeln!(err, "  {file}");
    }
    // The checkout is read from the dependencies, not from the recorded arguments.
    let checkout = args
        .toolkit_path
        .as_ref()
        .map(|path| format!(", `--toolkit-path {path}`"))
        .unwrap_or_default();
    let _ = writeln!(
        err,
        "Regenerate it with `toolkit-gen crate` and the arguments its Cargo.toml records{checkout}, `-o {}`.",
        dir.display()
    );
    ExitCode::FAILURE
}
