//! The dependencies a chaos run can fail on purpose: a NATS server of the
//! run's own (JetStream on a directory of the run's), which the run stops
//! with `SIGKILL` and starts again on the same directory, and a proxy in
//! front of Redis that loses the replies to game commits, cutting the
//! connection of whichever process sent them.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use fogblast_testkit::proxy::{contains, AnswerDropper};
use fogblast_testkit::RedisCluster;
use tokio::time::Instant;

use super::procs::free_port;

/// A `nats-server` with JetStream, killed when dropped.
#[derive(Debug)]
pub struct NatsServer {
    bin: PathBuf,
    port: u16,
    store_dir: PathBuf,
    log: PathBuf,
    child: Option<Child>,
    starts: usize,
}

impl NatsServer {
    /// Starts it on a fresh loopback port, its store and logs under `dir`.
    pub async fn start(bin: &Path, dir: &Path) -> anyhow::Result<NatsServer> {
        let port = free_port(&mut HashSet::new())?.port();
        let mut server = NatsServer {
            bin: bin.to_owned(),
            port,
            store_dir: dir.join("nats"),
            log: dir.to_owned(),
            child: None,
            starts: 0,
        };
        server.restart().await?;
        Ok(server)
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// `SIGKILL`: JetStream must recover its store on the next start.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it (again) on the same port and store, and waits until it answers.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        let log = self.log.join(format!("nats.{}.log", self.starts));
        self.starts += 1;
        let out = File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = Command::new(&self.bin)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string(), "-js", "-sd"])
            .arg(&self.store_dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("starting {} (--nats-server-bin)", self.bin.display()))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            // The server says it is ready only once JetStream has recovered its store.
            let connected = tokio::time::timeout(Duration::from_secs(2), async_nats::connect(self.url())).await;
            if let Ok(Ok(client)) = connected {
                if tokio::time::timeout(Duration::from_secs(2), client.flush()).await.is_ok_and(|f| f.is_ok()) {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                bail!("nats-server on port {} did not come up (log {})", self.port, log.display());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Where the run's processes reach Redis.
#[derive(Debug)]
pub enum RedisDeps {
    /// One Redis, through a proxy that can lose replies.
    Proxy(AnswerDropper),
    /// A Redis Cluster of the run's own, whose primaries can be killed.
    Cluster(RedisCluster),
}

impl RedisDeps {
    /// The URL the processes are given.
    pub fn url(&self) -> String {
        match self {
            RedisDeps::Proxy(proxy) => proxy.redis_url(),
            RedisDeps::Cluster(cluster) => cluster.url(),
        }
    }
}

/// The run's NATS server and its Redis.
#[derive(Debug)]
pub struct Deps {
    pub nats: NatsServer,
    pub redis: RedisDeps,
}

impl Deps {
    /// Loses the reply to the next game commit any process sends; false on
    /// a cluster, which has no proxy.
    pub fn drop_next_commit_answer(&self) -> bool {
        let RedisDeps::Proxy(proxy) = &self.redis else { return false };
        // The commit script is the one call that names both kinds of bucket set.
        proxy.drop_answer_to(|request| contains(request, b"deadlines") && contains(request, b"outbox"));
        true
    }

    /// Replies the proxy has lost so far.
    pub fn dropped_answers(&self) -> usize {
        match &self.redis {
            RedisDeps::Proxy(proxy) => proxy.dropped(),
            RedisDeps::Cluster(_) => 0,
        }
    }
}
