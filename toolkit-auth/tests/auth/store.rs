//! Token stores that hold: many stores and threads saving one file, clients sharing one file
//! refreshing a grant whose refresh token rotates, a refreshed grant the store cannot keep, and
//! no secret kept that is not needed. (Two processes sharing a file: toolkit-cli's
//! `tests/cli/token_store.rs`.)

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::future::join_all;
use toolkit_auth::{
    AuthError, Change, ClientAuth, FileStore, Grant, MachineCredentials, MemoryStore, OAuthClient,
    RegisteredClient, Secret, TokenStore,
};
use toolkit_core::BoxFuture;
use toolkit_core::ToolSource;

use super::fixture::{Headless, Knobs, Never, start};
use super::{options, source};

/// A folder of its own for test `name`.
fn folder(name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("toolkit-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

fn grant(thread: usize, save: usize) -> Grant {
    Grant {
        issuer: "https://auth.example.com".into(),
        token_endpoint: "https://auth.example.com/token".into(),
        resource: None,
        client: RegisteredClient::new("client", None),
        client_auth: ClientAuth::None,
        access_token: Secret::new(format!("access-{thread}-{save}")),
        refresh_token: Some(Secret::new(format!("refresh-{thread}-{save}"))),
        expires_at: Some(save as u64),
        scopes: vec!["tools".into()],
        granted: None,
    }
}

/// The same file, spelt three ways.
fn spelling(folder: &Path, index: usize) -> PathBuf {
    let name = folder.file_name().unwrap();
    match index % 3 {
        0 => folder.join("tokens.json"),
        1 => folder.join(".").join("tokens.json"),
        _ => folder.join("..").join(name).join("tokens.json"),
    }
}

#[test]
fn auth_many_stores_and_threads_saving_one_file_lose_nothing() {
    const THREADS: usize = 8;
    const SAVES: usize = 40;
    let folder = folder("threads");
    let shared = Arc::new(FileStore::new(folder.join("tokens.json")));
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (folder, shared) = (&folder, shared.clone());
            scope.spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    let key = format!("server-{thread}");
                    for save in 0..SAVES {
                        // Half the threads share one store; the others make one per save, as
                        // the gateway makes one per source.
                        let own;
                        let store: &FileStore = if thread % 2 == 0 {
                            &shared
                        } else {
                            own = FileStore::new(spelling(folder, thread + save));
                            &own
                        };
                        if let Err(error) = store.save(&key, &grant(thread, save)).await {
                            panic!("thread {thread}, save {save}: {error}");
                        }
                        let read = FileStore::new(folder.join("tokens.json"))
                            .load(&key)
                            .await
                            .unwrap_or_else(|error| panic!("an invalid store read: {error}"));
                        assert_eq!(read, Some(grant(thread, save)), "a lost or older value");
                    }
                });
            });
        }
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store = FileStore::new(folder.join("tokens.json"));
    for thread in 0..THREADS {
        let kept = runtime.block_on(store.load(&format!("server-{thread}")));
        assert_eq!(
            kept.unwrap(),
            Some(grant(thread, SAVES - 1)),
            "thread {thread}"
        );
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(folder.join("tokens.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let mut left: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["tokens.json", "tokens.json.lock"],
        "temporary files left"
    );
    let _ = std::fs::remove_dir_all(&folder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_a_file_store_waits_for_other_writers_until_its_lock_timeout() {
    let folder = folder("lock");
    let path = folder.join("tokens.json");
    let waiting = || FileStore::new(spelling(&folder, 1)).lock_timeout(Duration::from_millis(100));
    // Another store of the process holds the file through an update (a refresh under way).
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let holder = FileStore::new(&path);
    let (held, hold) = tokio::sync::oneshot::channel::<()>();
    let update = holder.update(
        "server",
        Box::new(move |_| {
            Box::pin(async move {
                let _ = held.send(());
                let _ = released.await;
                Ok(Change::Save(grant(0, 1)))
            })
        }),
    );
    let waiter = async {
        hold.await.unwrap();
        let error = waiting().save("server", &grant(1, 1)).await.unwrap_err();
        assert!(
            error.to_string().contains("locked by another writer"),
            "{error}"
        );
        release.send(()).unwrap();
    };
    let (updated, ()) = tokio::join!(update, waiter);
    assert_eq!(updated.unwrap().grant, Some(grant(0, 1)));
    waiting().save("server", &grant(1, 2)).await.unwrap();

    // Another process holds it (another open file's flock stands in for another process's).
    let other = std::fs::File::options()
        .read(true)
        .write(true)
        .open(folder.join("tokens.json.lock"))
        .unwrap();
    other.lock().unwrap();
    let error = waiting().remove("server").await.unwrap_err();
    assert!(
        error.to_string().contains("locked by another writer"),
        "{error}"
    );
    other.unlock().unwrap();
    waiting().remove("server").await.unwrap();
    assert_eq!(waiting().load("server").await.unwrap(), None);
    let _ = std::fs::remove_dir_all(&folder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auth_clients_sharing_a_token_file_refresh_a_rotating_grant_without_losing_it() {
    let servers = start(Knobs {
        refresh_tokens: true,
        rotation: true,
        ..Knobs::default()
    })
    .await;
    let folder = folder("rotation");
    // Every token expires within the margin: each client refreshes before its first request.
    let sharing = options()
        .refresh_margin(Duration::from_secs(7200))
        .max_authorizations(0);
    let login = OAuthClient::builder(servers.url.clone(), Headless)
        .store(FileStore::new(folder.join("tokens.json")))
        .options(options())
        .build()
        .unwrap();
    login.login().await.unwrap();
    // Gateway sources and command lines: a store each over the one file, a grant to refresh.
    let clients: Vec<OAuthClient> = (0..6)
        .map(|index| {
            OAuthClient::builder(servers.url.clone(), Never)
                .store(FileStore::new(spelling(&folder, index)))
                .options(sharing.clone())
                .build()
                .unwrap()
        })
        .collect();
    let sources: Vec<_> = clients
        .iter()
        .map(|client| source(&servers, client.clone()))
        .collect();
    let listed = join_all(sources.iter().map(|source| source.discover())).await;
    for result in listed {
        if let Err(error) = result {
            panic!("a client lost its grant: {error}");
        }
    }
    assert_eq!(
        servers.reused(),
        0,
        "a rotated refresh token was sent again"
    );
    assert!(servers.seen("/authorize").len() == 1);
    let kept = FileStore::new(folder.join("tokens.json"))
        .load(servers.url.as_str())
        .await
        .unwrap()
        .expect("the grant is kept");
    let refresh = kept.refresh_token.expect("a refresh token");
    assert!(
        servers.refresh_is_good(refresh.expose()),
        "the kept refresh token is spent"
    );
    let _ = std::fs::remove_dir_all(&folder);
}

/// A store whose saves fail once `failing` is set.
#[derive(Default)]
struct FailingSaves {
    inner: MemoryStore,
    failing: AtomicBool,
}

impl TokenStore for FailingSaves {
    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Option<Grant>, AuthError>> {
        self.inner.load(server)
    }

    fn save<'a>(
        &'a self,
        server: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        if self.failing.load(Ordering::Relaxed) {
            return Box::pin(async { Err(AuthError::Store("the disk is full".into())) });
        }
        self.inner.save(server, grant)
    }

    fn remove<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        self.inner.remove(server)
    }
}

#[tokio::test]
async fn auth_a_refreshed_grant_the_store_cannot_keep_is_used_from_memory() {
    let servers = start(Knobs {
        refresh_tokens: true,
        rotation: true,
        ..Knobs::default()
    })
    .await;
    let store = Arc::new(FailingSaves::default());
    let oauth = OAuthClient::builder(servers.url.clone(), Headless)
        .shared_store(store.clone())
        .options(options().refresh_margin(Duration::from_secs(7200)))
        .build()
        .unwrap();
    oauth.login().await.unwrap();
    store.failing.store(true, Ordering::Relaxed);
    let mcp = source(&servers, oauth.clone());
    // Each request refreshes (the margin is longer than the tokens live): from the grant in
    // memory, the last refreshed, never from the one the store still holds.
    for _ in 0..3 {
        mcp.discover().await.unwrap();
    }
    assert_eq!(servers.reused(), 0);
    assert_eq!(servers.seen("/authorize").len(), 1);
    let held = oauth.grant().unwrap();
    assert!(servers.refresh_is_good(held.refresh_token.unwrap().expose()));
}

#[tokio::test]
async fn auth_a_machine_grant_keeps_no_client_secret_in_the_token_file() {
    let servers = start(Knobs::default()).await;
    let folder = folder("machine");
    let path = folder.join("tokens.json");
    let oauth = OAuthClient::machine(
        servers.url.clone(),
        MachineCredentials::secret("agent-7", "machine-secret-value"),
    )
    .store(FileStore::new(&path))
    .options(options())
    .build()
    .unwrap();
    source(&servers, oauth).discover().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("access-token-"), "{text}");
    assert!(!text.contains("machine-secret-value"), "{text}");
    let _ = std::fs::remove_dir_all(&folder);
}

#[tokio::test]
async fn auth_file_and_memory_stores_list_the_keys_under_a_prefix() {
    let dir = folder("keys");
    let file = FileStore::new(dir.join("tokens.json"));
    assert!(file.keys("src#").await.unwrap().is_empty());
    let memory = MemoryStore::new();
    let stores: [&dyn TokenStore; 2] = [&file, &memory];
    for store in stores {
        for key in [
            "src#token:bob",
            "src#token:alice",
            "srcx#carol",
            "https://a.example/mcp",
        ] {
            store.save(key, &grant(0, 0)).await.unwrap();
        }
        assert_eq!(
            store.keys("src#").await.unwrap(),
            ["src#token:alice", "src#token:bob"]
        );
        assert_eq!(store.keys("").await.unwrap().len(), 4);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
