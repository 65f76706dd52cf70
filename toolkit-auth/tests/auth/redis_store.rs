//! The Redis token store against a real `redis-server` (Debian's, installed by
//! `scripts/install-test-peers`) that each test starts on 127.0.0.1 on a free port: the file
//! store's concurrency tests again (many stores and tasks saving; clients with their own
//! connections refreshing one rotating grant), its lock timeout and time to live, a server that
//! is down or never answers, and no password in a failure or a `Debug`.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use toolkit_auth::{
    Change, ClientAuth, Grant, OAuthClient, RedisStore, RegisteredClient, Secret, TokenStore,
};
use toolkit_core::ToolSource;

use super::fixture::{Headless, Knobs, Never, start};
use super::{options, source};

/// A `redis-server` of the test's own, stopped when dropped.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    /// Starts one on a free port of 127.0.0.1 (nothing saved to disk) and waits until it answers.
    fn start() -> Self {
        Self::start_with(&[])
    }

    fn start_with(arguments: &[&str]) -> Self {
        let program = ["/usr/bin/redis-server", "/usr/sbin/redis-server"]
            .into_iter()
            .find(|path| std::path::Path::new(path).exists())
            .unwrap_or("redis-server");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(program)
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(arguments)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!("redis-server cannot start ({error}); run scripts/install-test-peers")
            });
        let redis = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// A store of its own connection, keys under `prefix`.
    fn store(&self, prefix: &str) -> RedisStore {
        RedisStore::new(&self.url()).unwrap().key_prefix(prefix)
    }

    /// Sends one command in RESP and reads the first line of the answer: another client (a
    /// replica the store does not know).
    async fn command(&self, parts: &[&str]) -> String {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .unwrap();
        let mut request = format!("*{}\r\n", parts.len());
        for part in parts {
            request.push_str(&format!("${}\r\n{part}\r\n", part.len()));
        }
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).await.unwrap();
        line.trim_end().to_owned()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auth_redis_many_stores_and_tasks_saving_lose_nothing() {
    const TASKS: usize = 8;
    const SAVES: usize = 40;
    let redis = Arc::new(Redis::start());
    let shared = Arc::new(redis.store("t:"));
    let tasks = (0..TASKS).map(|task| {
        let (redis, shared) = (redis.clone(), shared.clone());
        tokio::spawn(async move {
            // Every task writes its own server's grant and one grant all write.
            let key = format!("server-{task}");
            for save in 0..SAVES {
                // Half the tasks share one store; the others make one (a connection) per save,
                // as a gateway makes one per source and replicas each their own.
                let own;
                let store: &RedisStore = if task % 2 == 0 {
                    &shared
                } else {
                    own = redis.store("t:");
                    &own
                };
                if let Err(error) = store.save(&key, &grant(task, save)).await {
                    panic!("task {task}, save {save}: {error}");
                }
                if let Err(error) = store.save("everyone", &grant(task, save)).await {
                    panic!("task {task}, save {save} of the shared grant: {error}");
                }
                let read = redis
                    .store("t:")
                    .load(&key)
                    .await
                    .unwrap_or_else(|error| panic!("an invalid grant read: {error}"));
                assert_eq!(read, Some(grant(task, save)), "a lost or older value");
            }
        })
    });
    for task in join_all(tasks).await {
        task.unwrap();
    }
    let store = redis.store("t:");
    for task in 0..TASKS {
        let kept = store.load(&format!("server-{task}")).await.unwrap();
        assert_eq!(kept, Some(grant(task, SAVES - 1)), "task {task}");
    }
    let last = store
        .load("everyone")
        .await
        .unwrap()
        .expect("the shared grant");
    assert!((0..TASKS).any(|task| last == grant(task, SAVES - 1)));
    // Another prefix is another store; a removal removes; no lock is left behind.
    assert_eq!(redis.store("other:").load("server-0").await.unwrap(), None);
    store.remove("server-0").await.unwrap();
    assert_eq!(store.load("server-0").await.unwrap(), None);
    assert_eq!(redis.command(&["KEYS", "t:lock:*"]).await, "*0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_a_redis_store_waits_for_other_writers_until_its_lock_timeout() {
    let redis = Redis::start();
    let waiting = || redis.store("l:").lock_timeout(Duration::from_millis(100));
    // Another store (another connection: another replica) holds the grant through an update.
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let holder = redis.store("l:");
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
    let updated = updated.unwrap();
    assert_eq!(updated.grant, Some(grant(0, 1)));
    assert!(updated.unwritten.is_none());
    assert_eq!(waiting().load("server").await.unwrap(), Some(grant(0, 1)));
    waiting().save("server", &grant(1, 2)).await.unwrap();

    // A replica that died holding the lock: it is kept until its expiry, then let go.
    assert_eq!(
        redis
            .command(&["SET", "l:lock:server", "dead-replica", "PX", "400"])
            .await,
        "+OK"
    );
    let error = waiting().remove("server").await.unwrap_err();
    assert!(
        error.to_string().contains("locked by another writer"),
        "{error}"
    );
    redis
        .store("l:")
        .lock_timeout(Duration::from_secs(10))
        .remove("server")
        .await
        .unwrap();
    assert_eq!(waiting().load("server").await.unwrap(), None);

    // A value another client wrote that is not a grant is told, not trusted.
    assert_eq!(
        redis.command(&["SET", "l:grant:server", "{not json"]).await,
        "+OK"
    );
    let error = waiting().load("server").await.unwrap_err().to_string();
    assert!(error.contains("not one"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_a_redis_change_that_outlasts_its_lock_writes_nothing() {
    let redis = Redis::start();
    let slow = redis.store("x:").lock_ttl(Duration::from_millis(200));
    slow.save("server", &grant(0, 0)).await.unwrap();
    let update = slow.update(
        "server",
        Box::new(|_| {
            Box::pin(async {
                // Longer than the lock lives: another writer gets in meanwhile.
                tokio::time::sleep(Duration::from_millis(400)).await;
                Ok(Change::Save(grant(0, 1)))
            })
        }),
    );
    let other = async {
        tokio::time::sleep(Duration::from_millis(250)).await;
        redis
            .store("x:")
            .lock_timeout(Duration::from_millis(100))
            .save("server", &grant(1, 1))
            .await
            .unwrap();
    };
    let (updated, ()) = tokio::join!(update, other);
    let updated = updated.unwrap();
    assert_eq!(
        updated.grant,
        Some(grant(0, 1)),
        "the grant is kept in memory"
    );
    let unwritten = updated.unwritten.expect("the write is refused");
    assert!(
        unwritten
            .to_string()
            .contains("longer than the Redis token store's lock"),
        "{unwritten}"
    );
    assert_eq!(
        redis.store("x:").load("server").await.unwrap(),
        Some(grant(1, 1)),
        "the other writer's grant stays"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auth_clients_with_their_own_redis_connections_refresh_a_rotating_grant_without_losing_it()
{
    let redis = Redis::start();
    let servers = start(Knobs {
        refresh_tokens: true,
        rotation: true,
        ..Knobs::default()
    })
    .await;
    // Every token expires within the margin: each client refreshes before its first request.
    let sharing = options()
        .refresh_margin(Duration::from_secs(7200))
        .max_authorizations(0);
    let login = OAuthClient::builder(servers.url.clone(), Headless)
        .store(redis.store("r:"))
        .options(options())
        .build()
        .unwrap();
    login.login().await.unwrap();
    // Replicas: a store (a connection) each over the one server, a grant to refresh.
    let clients: Vec<OAuthClient> = (0..6)
        .map(|_| {
            OAuthClient::builder(servers.url.clone(), Never)
                .store(redis.store("r:"))
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
    assert_eq!(servers.seen("/authorize").len(), 1);
    let kept = redis
        .store("r:")
        .load(servers.url.as_str())
        .await
        .unwrap()
        .expect("the grant is kept");
    let refresh = kept.refresh_token.expect("a refresh token");
    assert!(
        servers.refresh_is_good(refresh.expose()),
        "the kept refresh token is spent"
    );
}

#[tokio::test]
async fn auth_a_redis_store_that_is_down_or_silent_fails_clearly_and_names_no_password() {
    // Down: a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = RedisStore::new(&format!("redis://:hunter2-pass@127.0.0.1:{port}/0")).unwrap();
    let debug = format!("{down:?}");
    assert!(!debug.contains("hunter2"), "{debug}");
    let error = down.load("server").await.unwrap_err().to_string();
    assert!(error.contains("Redis token store failed"), "{error}");
    assert!(!error.contains("hunter2"), "{error}");
    let error = down.save("server", &grant(0, 0)).await.unwrap_err();
    assert!(!error.to_string().contains("hunter2"), "{error}");

    // Silent: a listener that takes the connection and never answers; the timeout ends it.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = silent.local_addr().unwrap();
    let accepting = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            held.push(stream);
        }
    });
    let store = RedisStore::new(&format!("redis://{address}/0"))
        .unwrap()
        .timeout(Duration::from_millis(300));
    let error = store.load("server").await.unwrap_err().to_string();
    assert!(error.contains("did not answer in time"), "{error}");
    accepting.abort();

    // Not a Redis URL.
    let error = RedisStore::new("http://127.0.0.1:1/")
        .unwrap_err()
        .to_string();
    assert!(error.contains("not a Redis URL"), "{error}");
}

#[tokio::test]
async fn auth_a_redis_store_with_a_password_uses_it_and_a_wrong_one_is_told() {
    let redis = Redis::start_with(&["--requirepass", "s3cret-pass"]);
    let url = format!("redis://:s3cret-pass@127.0.0.1:{}/0", redis.port);
    let store = RedisStore::new(&url).unwrap();
    store.save("server", &grant(0, 0)).await.unwrap();
    assert_eq!(store.load("server").await.unwrap(), Some(grant(0, 0)));
    let wrong = RedisStore::new(&format!("redis://:wrong-pass@127.0.0.1:{}/0", redis.port))
        .unwrap()
        .load("server")
        .await
        .unwrap_err()
        .to_string();
    assert!(wrong.contains("Redis token store failed"), "{wrong}");
    assert!(!wrong.contains("wrong-pass"), "{wrong}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_a_redis_store_lists_the_keys_under_a_prefix_glob_characters_and_all() {
    let redis = Redis::start();
    let store = redis.store("k*[:");
    let other = redis.store("other:");
    for key in [
        "src#token:alice",
        "src#jwt:https://a.example#b*?",
        "srcx#bob",
        "src",
    ] {
        store.save(key, &grant(0, 0)).await.unwrap();
    }
    other.save("src#token:carol", &grant(0, 0)).await.unwrap();
    assert_eq!(
        store.keys("src#").await.unwrap(),
        ["src#jwt:https://a.example#b*?", "src#token:alice"]
    );
    assert_eq!(store.keys("").await.unwrap().len(), 4);
    assert_eq!(other.keys("src#").await.unwrap(), ["src#token:carol"]);
    store.remove("src#token:alice").await.unwrap();
    assert_eq!(
        store.keys("src#").await.unwrap(),
        ["src#jwt:https://a.example#b*?"]
    );
}
