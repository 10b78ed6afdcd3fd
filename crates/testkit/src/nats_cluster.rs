//! A NATS JetStream cluster of this test's own: three (or more)
//! `nats-server` processes on loopback ports, routed to each other, each
//! with its JetStream store in a temporary directory; killed with their
//! files removed when dropped, also when the test fails. The configuration
//! file a server runs on is written by [`server_config`], which the
//! partition harness uses too for servers on addresses of its own.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the cluster may take to start and elect its JetStream leader.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// The server binary: `NATS_SERVER` or `nats-server` on the path.
fn server_binary() -> String {
    std::env::var("NATS_SERVER").unwrap_or_else(|_| "nats-server".to_owned())
}

/// One server of a cluster: its name, where clients connect and where the
/// other servers route to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    pub client: SocketAddr,
    pub route: SocketAddr,
}

/// The configuration of `server` in `cluster` (named `cluster_name`),
/// routed to every other server in it, with its JetStream store under
/// `store_dir`.
pub fn server_config(cluster_name: &str, server: &ServerSpec, cluster: &[ServerSpec], store_dir: &Path) -> String {
    let routes: Vec<String> = cluster
        .iter()
        .filter(|other| other.name != server.name)
        .map(|other| format!("nats-route://{}", other.route))
        .collect();
    format!(
        "server_name: {name}\nlisten: \"{client}\"\njetstream {{\n  store_dir: \"{store}\"\n}}\ncluster {{\n  \
         name: {cluster_name}\n  listen: \"{route}\"\n  routes: [{routes}]\n}}\n",
        name = server.name,
        client = server.client,
        store = store_dir.display(),
        route = server.route,
        routes = routes.join(", "),
    )
}

/// Starts `nats-server -c config` with its output in `log`.
pub fn spawn_server(command: &mut Command, config: &Path, log: &Path) -> std::io::Result<Child> {
    let log = std::fs::File::create(log)?;
    command.arg("-c").arg(config).stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log).spawn()
}

#[derive(Debug)]
pub struct NatsCluster {
    servers: Vec<ServerSpec>,
    processes: Vec<Option<Child>>,
    dir: PathBuf,
}

impl NatsCluster {
    /// Starts `size` servers and waits until JetStream answers on every one
    /// (the cluster has elected its meta leader).
    pub async fn start(size: usize) -> NatsCluster {
        let dir = std::env::temp_dir().join(format!(
            "fogblast-nats-cluster-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the cluster's files");
        let ports = free_ports(size * 2);
        let servers: Vec<ServerSpec> = (0..size)
            .map(|i| ServerSpec {
                name: format!("n{}", i + 1),
                client: SocketAddr::from(([127, 0, 0, 1], ports[2 * i])),
                route: SocketAddr::from(([127, 0, 0, 1], ports[2 * i + 1])),
            })
            .collect();
        let mut cluster = NatsCluster { servers: servers.clone(), processes: Vec::new(), dir };
        for server in &servers {
            let store = cluster.dir.join(&server.name);
            std::fs::create_dir_all(&store).expect("a store directory");
            let config = cluster.dir.join(format!("{}.conf", server.name));
            std::fs::write(&config, server_config("fogblast-test", server, &servers, &store))
                .expect("the server's configuration written");
            let log = cluster.dir.join(format!("{}.log", server.name));
            let child = spawn_server(&mut Command::new(server_binary()), &config, &log).unwrap_or_else(|e| {
                panic!("starting {} (NATS_SERVER or nats-server on the path): {e}", server_binary())
            });
            cluster.processes.push(Some(child));
        }
        for server in &servers {
            let url = format!("nats://{}", server.client);
            wait_until(&format!("JetStream to answer on {}", server.name), || {
                let url = url.clone();
                async move { jetstream_ready(&url).await }
            })
            .await;
        }
        cluster
    }

    /// Every server as a seed, comma separated, as Fogblast's NATS_URL reads it.
    pub fn url(&self) -> String {
        self.servers.iter().map(|server| format!("nats://{}", server.client)).collect::<Vec<_>>().join(",")
    }

    pub fn servers(&self) -> &[ServerSpec] {
        &self.servers
    }

    /// Kills the server named `name` with SIGKILL: it stops without a word.
    pub fn kill(&mut self, name: &str) {
        let index = self.servers.iter().position(|s| s.name == name).expect("a server of this cluster");
        if let Some(mut child) = self.processes[index].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The last lines a server logged, for a failing test's message.
    pub fn log_tail(&self, name: &str) -> String {
        let log = std::fs::read_to_string(self.dir.join(format!("{name}.log"))).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for child in self.processes.iter_mut().filter_map(Option::as_mut) {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether JetStream on `url` answers an account query without an error:
/// it does once the cluster has a meta leader. The reply is read as text,
/// since its shape differs across server versions.
async fn jetstream_ready(url: &str) -> bool {
    let Ok(Ok(client)) = tokio::time::timeout(Duration::from_secs(2), async_nats::connect(url)).await else {
        return false;
    };
    let request = client.request("$JS.API.INFO", Vec::new().into());
    let Ok(Ok(reply)) = tokio::time::timeout(Duration::from_secs(2), request).await else { return false };
    let reply = String::from_utf8_lossy(&reply.payload);
    reply.contains("account_info_response") && !reply.contains("\"error\"")
}

/// `n` distinct loopback ports free now.
fn free_ports(n: usize) -> Vec<u16> {
    use rand::Rng;
    let mut rng = rand::rng();
    let mut ports = Vec::new();
    while ports.len() < n {
        let port: u16 = rng.random_range(30_000..40_000);
        if !ports.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            ports.push(port);
        }
    }
    ports
}

async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + START_TIMEOUT;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_routes_to_every_other_server_but_itself() {
        let spec = |name: &str, port: u16| ServerSpec {
            name: name.into(),
            client: SocketAddr::from(([10, 0, 0, 1], port)),
            route: SocketAddr::from(([10, 0, 0, 1], port + 1)),
        };
        let cluster = [spec("n1", 4222), spec("n2", 5222), spec("n3", 6222)];
        let config = server_config("c", &cluster[1], &cluster, Path::new("/tmp/s"));
        assert!(config.contains("server_name: n2\n"), "{config}");
        assert!(config.contains("listen: \"10.0.0.1:5222\""), "{config}");
        assert!(config.contains("listen: \"10.0.0.1:5223\""), "{config}");
        assert!(config.contains("routes: [nats-route://10.0.0.1:4223, nats-route://10.0.0.1:6223]"), "{config}");
        assert!(config.contains("store_dir: \"/tmp/s\""), "{config}");
    }
}
