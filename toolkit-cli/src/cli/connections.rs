//! `toolkit-gen connections`: the accounts people connected to a gateway's source through the
//! gateway (`oauth = { per_person = true, … }` in `toolkit.toml`), each a grant kept in the
//! source's token store under `SOURCE#PRINCIPAL`.
//!
//! `list` shows who is connected, at which authorization server, with which scopes, never a
//! token; `revoke` forgets a person's grant, so that their next call asks them to connect again
//! (the authorization server still holds what it issued until it expires or is revoked there).

use std::path::PathBuf;
use std::process::ExitCode;

use toolkit_gateway::config::Config;
use toolkit_gateway::oauth_connect::token_store;

/// `toolkit-gen connections`.
#[derive(Debug, clap::Args)]
pub struct ConnectionsArgs {
    /// What to do.
    #[command(subcommand)]
    action: Action,
}

/// What `connections` does.
#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Lists the people connected to the source (or one of them), never a token.
    List {
        #[command(flatten)]
        at: At,
        /// Only this principal, as the gateway names it: `jwt:ISSUER#SUB`, `token:NAME`.
        #[arg(long)]
        principal: Option<String>,
    },
    /// Forgets a person's connection to the source: their next call asks them to connect again.
    Revoke {
        #[command(flatten)]
        at: At,
        /// The principal, as the gateway names it.
        #[arg(long)]
        principal: String,
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

/// Runs `connections`.
pub fn run(arguments: ConnectionsArgs) -> ExitCode {
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("no async runtime: {error}"))
        .and_then(|runtime| runtime.block_on(answer(arguments.action)));
    match outcome {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("toolkit-gen connections: {problem}");
            ExitCode::FAILURE
        }
    }
}

async fn answer(action: Action) -> Result<Vec<String>, String> {
    let (Action::List { at, .. } | Action::Revoke { at, .. }) = &action;
    let config = Config::load(&at.config).map_err(|error| error.to_string())?;
    let source = config
        .sources
        .iter()
        .find(|source| source.name == at.source)
        .ok_or_else(|| format!("{} has no source {:?}", at.config.display(), at.source))?;
    if !source.oauth.as_ref().is_some_and(|oauth| oauth.per_person) {
        return Err(format!(
            "source {:?} has no `oauth.per_person`: people do not connect their own accounts to it",
            at.source
        ));
    }
    let store = token_store(source).map_err(|error| error.to_string())?;
    let prefix = format!("{}#", at.source);
    match &action {
        Action::List { principal, .. } => {
            let mut lines = Vec::new();
            for key in store
                .keys(&prefix)
                .await
                .map_err(|error| error.to_string())?
            {
                let Some(who) = key.strip_prefix(&prefix) else {
                    continue;
                };
                if principal.as_deref().is_some_and(|wanted| wanted != who) {
                    continue;
                }
                let Some(grant) = store.load(&key).await.map_err(|error| error.to_string())? else {
                    continue;
                };
                let scopes = grant.granted.as_ref().unwrap_or(&grant.scopes).join(" ");
                lines.push(format!("{who}\t{}\t{scopes}", grant.issuer));
            }
            Ok(lines)
        }
        Action::Revoke { principal, .. } => {
            let key = format!("{prefix}{principal}");
            if store
                .load(&key)
                .await
                .map_err(|error| error.to_string())?
                .is_none()
            {
                return Err(format!("{principal} has no connection to {}", at.source));
            }
            store
                .remove(&key)
                .await
                .map_err(|error| error.to_string())?;
            Ok(vec![format!(
                "revoked {principal}'s connection to {}",
                at.source
            )])
        }
    }
}
