//! The command that starts an MCP server which speaks over its stdin and stdout.

use std::ffi::OsString;
use std::path::PathBuf;

/// How to start a stdio MCP server: a program, its arguments, its environment and working
/// directory.
///
/// The environment is the host's own plus what [`StdioCommand::env`] adds, or, after
/// [`StdioCommand::env_clear`], only what it adds; a credential the server needs is the host's to
/// put there.
///
/// ```
/// use toolkit_mcp::StdioCommand;
///
/// let command = StdioCommand::new("npx")
///     .arg("@modelcontextprotocol/server-everything")
///     .arg("stdio")
///     .env("LOG_LEVEL", "warn");
/// assert_eq!(command.program(), "npx");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StdioCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    env_clear: bool,
    cwd: Option<PathBuf>,
}

impl StdioCommand {
    /// A command that runs `program` (looked up on `PATH` when it has no slash).
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_clear: false,
            cwd: None,
        }
    }

    /// Adds an argument; calls accumulate.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments; calls accumulate.
    #[must_use]
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable of the server; calls accumulate.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Starts the server with no variable of the host's environment: only those set with
    /// [`StdioCommand::env`] (a host passes `PATH` and the like on itself). So a server gets the
    /// credentials meant for it and no other.
    #[must_use]
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self
    }

    /// Runs the server in `dir`.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The program.
    pub fn program(&self) -> &std::ffi::OsStr {
        &self.program
    }

    /// The command as tokio runs it: pipes for stdin, stdout and stderr, killed if dropped, and
    /// (on Unix) in a process group of its own, so that stopping it reaches every process it
    /// started (`npx -y`, `uvx`, `sh -c` and `docker run -i` run the server as their child).
    pub(crate) fn to_tokio(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        if self.env_clear {
            command.env_clear();
        }
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(key, value)| (key, value)))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        command
    }
}
