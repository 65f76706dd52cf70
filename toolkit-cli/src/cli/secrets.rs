//! `toolkit-gen secrets`: each person's own credential for a gateway's source, kept in the
//! source's secrets file (`per_person` in `toolkit.toml`), sealed with the key its `key_env`
//! names.
//!
//! A value is read from standard input (one line), never from the command line, so that it is in
//! no shell history or process list; `list` shows who has which names for which source, never a
//! value.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use toolkit_gateway::config::Config;
use toolkit_gateway::person_secrets::{PersonSecrets, SealingKey};

/// `toolkit-gen secrets`.
#[derive(Debug, clap::Args)]
pub struct SecretsArgs {
    /// What to do.
    #[command(subcommand)]
    action: Action,
}

/// What `secrets` does.
#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Keeps a person's credential for a source: the value of `--name` (a security scheme of an
    /// OpenAPI source, a header of an MCP server), read from standard input.
    Set {
        #[command(flatten)]
        at: At,
        /// The principal, as the gateway names it: `jwt:ISSUER#SUB`, `token:NAME`.
        #[arg(long)]
        principal: String,
        /// The scheme or header the value is for.
        #[arg(long)]
        name: String,
    },
    /// Forgets a person's credential for a source (every name of it).
    Remove {
        #[command(flatten)]
        at: At,
        /// The principal, as the gateway names it.
        #[arg(long)]
        principal: String,
    },
    /// Lists who has a credential for the source, and its names (never a value).
    List {
        #[command(flatten)]
        at: At,
    },
}

/// Which source of which configuration.
#[derive(Debug, clap::Args)]
struct At {
    /// The gateway's configuration file (`toolkit.toml`).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The source, by its name in the configuration.
    #[arg(long)]
    source: String,
}

/// Runs `secrets`.
pub fn run(arguments: SecretsArgs) -> ExitCode {
    let answered = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start a runtime: {error}"))
        .and_then(|runtime| runtime.block_on(answer(arguments.action)));
    match answered {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("toolkit-gen secrets: {problem}");
            ExitCode::FAILURE
        }
    }
}

async fn answer(action: Action) -> Result<Vec<String>, String> {
    let at = match &action {
        Action::Set { at, .. } | Action::Remove { at, .. } | Action::List { at } => at,
    };
    let secrets = open(at)?;
    let source = at.source.as_str();
    match &action {
        Action::Set {
            principal, name, ..
        } => {
            let mut value = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut value)
                .map_err(|error| format!("cannot read the value from standard input: {error}"))?;
            let value = value.trim_end_matches(['\n', '\r']);
            if value.is_empty() {
                return Err("no value on standard input".to_owned());
            }
            let mut entry = secrets.get(principal, source).await?.unwrap_or_default();
            entry.insert(name.clone(), value.to_owned());
            secrets.set(principal, source, Some(entry)).await?;
            Ok(vec![format!("kept {name} of {principal} for {source}")])
        }
        Action::Remove { principal, .. } => {
            if secrets.get(principal, source).await?.is_none() {
                return Err(format!("{principal} has no credential for {source}"));
            }
            secrets.set(principal, source, None).await?;
            Ok(vec![format!(
                "forgot {principal}'s credential for {source}"
            )])
        }
        Action::List { .. } => Ok(secrets
            .list()
            .await?
            .into_iter()
            .filter(|(_, kept_for, _)| kept_for == source)
            .map(|(principal, _, names)| format!("{principal}\t{}", names.join(",")))
            .collect()),
    }
}

/// The secrets file of the source `at` names, with its key from the environment.
fn open(at: &At) -> Result<PersonSecrets, String> {
    let config = Config::load(&at.config).map_err(|error| error.to_string())?;
    let source = config
        .sources
        .iter()
        .find(|source| source.name == at.source)
        .ok_or_else(|| format!("{} has no source {:?}", at.config.display(), at.source))?;
    let per_person = source.per_person.as_ref().ok_or_else(|| {
        format!(
            "source {:?} keeps no credential per person (it has no `per_person`)",
            at.source
        )
    })?;
    let key = std::env::var(&per_person.key_env)
        .map_err(|_| format!("the key's variable {} is not set", per_person.key_env))?;
    let key = SealingKey::from_base64(&key)
        .map_err(|problem| format!("the key in {}: {problem}", per_person.key_env))?;
    PersonSecrets::open(&per_person.secrets, key)
}
