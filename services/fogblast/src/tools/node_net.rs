//! Separate network nodes on one machine, for runs that cut the network
//! rather than kill processes: each node a network namespace of its own
//! (`fbp-<pid>-<node>`), joined to a bridge of the run's (`fbp<pid>br`) by
//! a veth pair, with an address in 10.213.X.0/24 (X picked free on this
//! machine); the root namespace (the bots, and whatever runs there) reaches
//! the nodes through the bridge's address.
//!
//! Faults are one-way cuts between two endpoints (a node, or the root
//! namespace as [`Endpoint::Host`]): every cut is an nftables rule in a
//! table of the run's own inside a node's namespace, so the machine's own
//! rules, addresses and namespaces are never touched. A cut drops packets
//! where they arrive (the sender sees silence, as in a real partition, not
//! an error); only a cut towards the root namespace is made at the sender.
//! The whole rule set of a node is written again on every change, so cuts
//! overlap and heal independently.
//!
//! Dropping the net kills every process left in its namespaces and removes
//! the namespaces and the bridge. [`NodeNet::create`] first removes what a
//! run that crashed left: namespaces and bridges under the same prefix
//! whose pid is no longer running.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::net::Ipv4Addr;
use std::process::{Command, Stdio};

use anyhow::{bail, Context};

/// Every namespace and link of these runs starts so.
const PREFIX: &str = "fbp";
/// The nftables table of the run's cuts inside a node's namespace.
const TABLE: &str = "fogblast_partition";
/// The private range the nodes' /24 is taken from: 10.213.X.0/24.
const RANGE: [u8; 2] = [10, 213];

/// One side of a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    /// The root namespace, through the bridge's address.
    Host,
    /// The node at this index.
    Node(usize),
}

#[derive(Debug)]
pub struct Node {
    /// As the run calls it: `n1`, `redis-a`.
    pub name: String,
    pub namespace: String,
    pub address: Ipv4Addr,
}

#[derive(Debug)]
pub struct NodeNet {
    bridge: String,
    subnet: [u8; 3],
    nodes: Vec<Node>,
    /// One-way cuts in force: packets from the first to the second are dropped.
    cuts: BTreeSet<(Endpoint, Endpoint)>,
}

/// Why namespaces cannot be made here, or `None` when they can.
pub fn cannot_make_namespaces() -> Option<String> {
    let uid = run_output(Command::new("id").arg("-u")).unwrap_or_default();
    if uid.trim() != "0" {
        return Some(format!("network namespaces need root (running as uid {})", uid.trim()));
    }
    if let Err(e) = run_output(Command::new("ip").args(["netns", "list"])) {
        return Some(format!("`ip netns` is not available: {e:#}"));
    }
    if let Err(e) = run_output(Command::new("nft").arg("--version")) {
        return Some(format!("nftables (`nft`) is not installed: {e:#}"));
    }
    None
}

impl NodeNet {
    /// Makes one namespace per name, joined by the run's bridge, after
    /// removing what crashed runs left. Refuses with the reason when this
    /// machine cannot make namespaces, and refuses a bad name.
    pub fn create(names: &[&str]) -> anyhow::Result<NodeNet> {
        if let Some(reason) = cannot_make_namespaces() {
            bail!("cannot lay out network nodes: {reason}");
        }
        for name in names {
            let valid = !name.is_empty() && name.len() <= 12 && name.chars().all(|c| c.is_ascii_alphanumeric());
            if !valid {
                bail!("node name {name:?}: 1 to 12 letters or digits");
            }
        }
        if names.len() > 200 {
            bail!("{} nodes: at most 200 fit in the run's /24", names.len());
        }
        remove_stale()?;
        let pid = std::process::id();
        let subnet = free_subnet(pid)?;
        let bridge = format!("{PREFIX}{pid}br");
        let mut net = NodeNet { bridge: bridge.clone(), subnet, nodes: Vec::new(), cuts: BTreeSet::new() };
        // From here on a failure drops `net`, which removes what was made.
        ip(&["link", "add", &bridge, "type", "bridge"])?;
        ip(&["addr", "add", &format!("{}/24", net.host_address()), "dev", &bridge])?;
        ip(&["link", "set", &bridge, "up"])?;
        for (index, name) in names.iter().enumerate() {
            net.add_node(index, name, pid)?;
        }
        Ok(net)
    }

    fn add_node(&mut self, index: usize, name: &str, pid: u32) -> anyhow::Result<()> {
        let namespace = format!("{PREFIX}-{pid}-{name}");
        let veth = format!("{PREFIX}{pid}v{index}");
        let address = Ipv4Addr::new(self.subnet[0], self.subnet[1], self.subnet[2], 10 + index as u8);
        ip(&["netns", "add", &namespace])?;
        self.nodes.push(Node { name: name.to_owned(), namespace: namespace.clone(), address });
        ip(&["link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &namespace])?;
        ip(&["link", "set", &veth, "master", &self.bridge, "up"])?;
        ip(&["-n", &namespace, "addr", "add", &format!("{address}/24"), "dev", "eth0"])?;
        ip(&["-n", &namespace, "link", "set", "eth0", "up"])?;
        ip(&["-n", &namespace, "link", "set", "lo", "up"])?;
        Ok(())
    }

    /// The bridge's address: where the nodes reach the root namespace.
    pub fn host_address(&self) -> Ipv4Addr {
        Ipv4Addr::new(self.subnet[0], self.subnet[1], self.subnet[2], 1)
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn address(&self, endpoint: Endpoint) -> Ipv4Addr {
        match endpoint {
            Endpoint::Host => self.host_address(),
            Endpoint::Node(index) => self.nodes[index].address,
        }
    }

    /// `program` to be run inside the node's namespace.
    pub fn command(&self, node: usize, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.nodes[node].namespace]).arg(program);
        command
    }

    /// [`NodeNet::command`] with the program's wall clock `skew_ms` ahead
    /// (behind when negative), through libfaketime; its monotonic clock is
    /// left alone.
    pub fn skewed_command(&self, node: usize, skew_ms: i64, program: impl AsRef<OsStr>) -> Command {
        let mut command = self.command(node, "faketime");
        command.env("FAKETIME_DONT_FAKE_MONOTONIC", "1").arg("-f").arg(faketime_offset(skew_ms)).arg(program);
        command
    }

    /// Drops packets from `from` to `to` (the reverse still flows).
    pub fn cut_one_way(&mut self, from: Endpoint, to: Endpoint) -> anyhow::Result<()> {
        self.check(from)?;
        self.check(to)?;
        if from == to {
            bail!("a cut needs two different endpoints");
        }
        self.cuts.insert((from, to));
        self.apply()
    }

    /// Cuts `a` and `b` off from each other, both ways.
    pub fn cut_between(&mut self, a: Endpoint, b: Endpoint) -> anyhow::Result<()> {
        self.cut_one_way(a, b)?;
        self.cut_one_way(b, a)
    }

    /// Cuts the node off from every other node and from the root namespace.
    pub fn isolate(&mut self, node: usize) -> anyhow::Result<()> {
        self.check(Endpoint::Node(node))?;
        for other in self.endpoints().filter(|other| *other != Endpoint::Node(node)) {
            self.cuts.insert((Endpoint::Node(node), other));
            self.cuts.insert((other, Endpoint::Node(node)));
        }
        self.apply()
    }

    /// Splits the network in two: the nodes of `side` reach one another
    /// and nothing else, and the rest (the root namespace included) reach
    /// one another and not them.
    pub fn split_off(&mut self, side: &[usize]) -> anyhow::Result<()> {
        for &node in side {
            self.check(Endpoint::Node(node))?;
        }
        let inside = |endpoint: Endpoint| matches!(endpoint, Endpoint::Node(i) if side.contains(&i));
        let across: Vec<(Endpoint, Endpoint)> = self
            .endpoints()
            .filter(|a| inside(*a))
            .flat_map(|a| self.endpoints().filter(move |b| !inside(*b)).map(move |b| (a, b)))
            .collect();
        for (a, b) in across {
            self.cuts.insert((a, b));
            self.cuts.insert((b, a));
        }
        self.apply()
    }

    /// Lifts every cut to and from `endpoint`.
    pub fn heal(&mut self, endpoint: Endpoint) -> anyhow::Result<()> {
        self.cuts.retain(|(from, to)| *from != endpoint && *to != endpoint);
        self.apply()
    }

    /// Lifts every cut.
    pub fn heal_all(&mut self) -> anyhow::Result<()> {
        self.cuts.clear();
        self.apply()
    }

    fn endpoints(&self) -> impl Iterator<Item = Endpoint> {
        std::iter::once(Endpoint::Host).chain((0..self.nodes.len()).map(Endpoint::Node))
    }

    fn check(&self, endpoint: Endpoint) -> anyhow::Result<()> {
        match endpoint {
            Endpoint::Node(index) if index >= self.nodes.len() => bail!("no node {index} in this run"),
            _ => Ok(()),
        }
    }

    /// Writes every node's rule set from the cuts in force.
    fn apply(&self) -> anyhow::Result<()> {
        for index in 0..self.nodes.len() {
            let rules = self.ruleset(index);
            let mut nft = self.command(index, "nft");
            nft.args(["-f", "-"]);
            run_with_input(&mut nft, &rules).with_context(|| format!("cuts on node {}", self.nodes[index].name))?;
        }
        Ok(())
    }

    /// Node `index`'s table: the addresses it drops arriving packets from,
    /// and (for cuts towards the root namespace) those it drops leaving to.
    fn ruleset(&self, index: usize) -> String {
        let node = Endpoint::Node(index);
        let mut incoming = Vec::new();
        let mut outgoing = Vec::new();
        for &(from, to) in &self.cuts {
            if to == node {
                incoming.push(self.address(from));
            } else if from == node && to == Endpoint::Host && !self.cuts.contains(&(Endpoint::Host, node)) {
                // Cut both ways, the incoming drop alone silences every
                // conversation; one way only, the sender drops it.
                outgoing.push(self.address(to));
            }
        }
        render_table(&incoming, &outgoing)
    }
}

impl Drop for NodeNet {
    fn drop(&mut self) {
        for node in &self.nodes {
            remove_namespace(&node.namespace);
        }
        let _ = ip(&["link", "del", &self.bridge]);
    }
}

/// The nftables script that replaces the run's table with one dropping
/// packets from `incoming` and to `outgoing`.
fn render_table(incoming: &[Ipv4Addr], outgoing: &[Ipv4Addr]) -> String {
    let set = |addresses: &[Ipv4Addr]| addresses.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    let mut script = format!("table inet {TABLE}\ndelete table inet {TABLE}\ntable inet {TABLE} {{\n");
    script.push_str("  chain incoming {\n    type filter hook input priority 0; policy accept;\n");
    if !incoming.is_empty() {
        script.push_str(&format!("    ip saddr {{ {} }} drop\n", set(incoming)));
    }
    script.push_str("  }\n  chain outgoing {\n    type filter hook output priority 0; policy accept;\n");
    if !outgoing.is_empty() {
        script.push_str(&format!("    ip daddr {{ {} }} drop\n", set(outgoing)));
    }
    script.push_str("  }\n}\n");
    script
}

/// libfaketime's relative offset in seconds: `+2.000`, `-0.500`.
fn faketime_offset(skew_ms: i64) -> String {
    let sign = if skew_ms < 0 { '-' } else { '+' };
    let ms = skew_ms.unsigned_abs();
    format!("{sign}{}.{:03}", ms / 1000, ms % 1000)
}

/// A /24 of 10.213.0.0/16 that no address or route of this machine uses,
/// starting from one picked by the pid so that runs side by side differ.
fn free_subnet(pid: u32) -> anyhow::Result<[u8; 3]> {
    let addresses = run_output(Command::new("ip").args(["-4", "-o", "addr", "show"]))?;
    let routes = run_output(Command::new("ip").args(["-4", "route", "show", "table", "all"]))?;
    for step in 0..250u32 {
        let third = u8::try_from((pid + step) % 250 + 3).unwrap_or(3);
        let net = format!("{}.{}.{third}.", RANGE[0], RANGE[1]);
        if !addresses.contains(&net) && !routes.contains(&net) {
            return Ok([RANGE[0], RANGE[1], third]);
        }
    }
    bail!("no free /24 left in {}.{}.0.0/16 on this machine", RANGE[0], RANGE[1])
}

/// The pid in a name of these runs (`fbp-<pid>-...` or `fbp<pid>...`).
fn run_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = &rest[digits.len()..];
    // Only names made here: the pid is followed by `-`, `br` or `v<index>`.
    let shaped =
        after.starts_with('-') || after == "br" || after.strip_prefix('v').is_some_and(|i| i.parse::<u16>().is_ok());
    if digits.is_empty() || !shaped {
        return None;
    }
    digits.parse().ok()
}

fn pid_running(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes the namespaces and bridges of runs whose process is gone; returns their names.
pub fn remove_stale() -> anyhow::Result<Vec<String>> {
    let mut removed = Vec::new();
    let namespaces = run_output(Command::new("ip").args(["netns", "list"]))?;
    for namespace in namespaces.lines().filter_map(|line| line.split_whitespace().next()) {
        if run_pid(namespace).is_some_and(|pid| !pid_running(pid)) {
            remove_namespace(namespace);
            removed.push(namespace.to_owned());
        }
    }
    let links = run_output(Command::new("ip").args(["-o", "link", "show"]))?;
    for link in
        links.lines().filter_map(|line| line.split(": ").nth(1)).map(|name| name.split('@').next().unwrap_or(name))
    {
        if link.ends_with("br") && run_pid(link).is_some_and(|pid| !pid_running(pid)) {
            let _ = ip(&["link", "del", link]);
            removed.push(link.to_owned());
        }
    }
    Ok(removed)
}

/// Kills whatever runs in the namespace, then removes it.
fn remove_namespace(namespace: &str) {
    if let Ok(pids) = run_output(Command::new("ip").args(["netns", "pids", namespace])) {
        for pid in pids.split_whitespace() {
            let _ = Command::new("kill").args(["-9", pid]).stderr(Stdio::null()).status();
        }
    }
    let _ = ip(&["netns", "del", namespace]);
}

fn ip(args: &[&str]) -> anyhow::Result<()> {
    run_output(Command::new("ip").args(args)).map(drop)
}

/// Runs `command` to its end; its standard output, or an error with its standard error.
fn run_output(command: &mut Command) -> anyhow::Result<String> {
    let output = command.stdin(Stdio::null()).output().with_context(|| format!("running {command:?}"))?;
    if !output.status.success() {
        bail!("{command:?} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn run_with_input(command: &mut Command, input: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("running {command:?}"))?;
    child.stdin.take().context("stdin")?.write_all(input.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!("{command:?} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{SocketAddr, TcpStream};
    use std::time::{Duration, Instant};

    #[test]
    fn only_names_of_these_runs_carry_a_pid() {
        assert_eq!(run_pid("fbp-1234-n1"), Some(1234));
        assert_eq!(run_pid("fbp1234br"), Some(1234));
        assert_eq!(run_pid("fbp1234v3"), Some(1234));
        for foreign in ["fbp-n1", "fbpx12br", "fbp12eth0", "docker0", "fbp", "cni-1234-x", "fbp12brx"] {
            assert_eq!(run_pid(foreign), None, "{foreign}");
        }
    }

    #[test]
    fn a_node_drops_what_arrives_from_cut_senders_and_only_one_way_cuts_to_the_host_at_the_sender() {
        let a = Ipv4Addr::new(10, 213, 9, 10);
        let host = Ipv4Addr::new(10, 213, 9, 1);
        let script = render_table(&[a, host], &[]);
        assert!(script.contains("ip saddr { 10.213.9.10, 10.213.9.1 } drop"), "{script}");
        assert!(!script.contains("daddr"), "{script}");
        assert!(script.starts_with("table inet fogblast_partition\ndelete table inet fogblast_partition\n"));
        let net = NodeNet {
            bridge: "unused".into(),
            subnet: [10, 213, 9],
            nodes: ["n1", "n2"]
                .iter()
                .enumerate()
                .map(|(i, name)| Node {
                    name: (*name).into(),
                    namespace: String::new(),
                    address: Ipv4Addr::new(10, 213, 9, 10 + i as u8),
                })
                .collect(),
            cuts: [(Endpoint::Node(0), Endpoint::Host), (Endpoint::Node(1), Endpoint::Node(0))].into(),
        };
        assert!(net.ruleset(0).contains("ip daddr { 10.213.9.1 } drop"), "{}", net.ruleset(0));
        assert!(net.ruleset(0).contains("ip saddr { 10.213.9.11 } drop"), "{}", net.ruleset(0));
        assert!(!net.ruleset(1).contains("drop"), "{}", net.ruleset(1));
        std::mem::forget(net);
    }

    #[test]
    fn a_split_cuts_every_link_across_and_none_within() {
        let mut net = NodeNet {
            bridge: "unused".into(),
            subnet: [10, 213, 9],
            nodes: (0..4)
                .map(|i| Node {
                    name: format!("n{i}"),
                    namespace: String::new(),
                    address: Ipv4Addr::new(10, 213, 9, 10 + i as u8),
                })
                .collect(),
            cuts: BTreeSet::new(),
        };
        // Only the cut set, not the namespaces' rules: there are none here.
        let inside = |endpoint: Endpoint| matches!(endpoint, Endpoint::Node(0 | 2));
        let all: Vec<Endpoint> = net.endpoints().collect();
        let _ = net.split_off(&[0, 2]);
        for &a in &all {
            for &b in all.iter().filter(|b| **b != a) {
                assert_eq!(net.cuts.contains(&(a, b)), inside(a) != inside(b), "{a:?} -> {b:?}");
            }
        }
        assert!(net.split_off(&[9]).is_err(), "an unknown node is refused");
        std::mem::forget(net);
    }

    #[test]
    fn clock_offsets_are_written_in_seconds_with_a_sign() {
        assert_eq!(faketime_offset(2000), "+2.000");
        assert_eq!(faketime_offset(-2000), "-2.000");
        assert_eq!(faketime_offset(-500), "-0.500");
    }

    /// Whether a TCP connection from the root namespace to `addr` opens.
    fn reachable_from_host(addr: SocketAddr) -> bool {
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
    }

    /// Whether a TCP connection from node `from` to `addr` opens (bash's /dev/tcp).
    fn reachable_from(net: &NodeNet, from: usize, addr: SocketAddr) -> bool {
        let probe = format!("exec 3<>/dev/tcp/{}/{}", addr.ip(), addr.port());
        let mut command = net.command(from, "timeout");
        command.args(["2", "bash", "-c", &probe]).stdout(Stdio::null()).stderr(Stdio::null());
        command.status().is_ok_and(|status| status.success())
    }

    fn eventually(what: &str, check: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !check() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    #[test]
    fn nodes_are_cut_healed_and_removed() {
        if let Some(reason) = cannot_make_namespaces() {
            eprintln!("skipped: {reason}");
            return;
        }
        // What a crashed run left: a namespace named for a pid no longer running.
        let mut finished = Command::new("true").spawn().expect("true runs");
        let dead = finished.id();
        finished.wait().expect("true ended");
        let stale = format!("{PREFIX}-{dead}-n1");
        ip(&["netns", "add", &stale]).expect("a stale namespace");

        let mut net = NodeNet::create(&["n1", "n2", "n3"]).expect("three nodes");
        let namespaces = run_output(Command::new("ip").args(["netns", "list"])).expect("ip netns list");
        assert!(!namespaces.contains(&stale), "the crashed run's namespace was removed: {namespaces}");
        let server = SocketAddr::from((net.nodes()[0].address, 4222));
        let mut listener = net.command(0, "nats-server");
        listener.args(["-a", &server.ip().to_string(), "-p", "4222"]).stdout(Stdio::null()).stderr(Stdio::null());
        let mut listener = listener.spawn().expect("nats-server runs in n1");

        eventually("n1 reachable from the root namespace", || reachable_from_host(server));
        eventually("n2 reaching n1", || reachable_from(&net, 1, server));

        net.isolate(0).expect("isolate n1");
        assert!(!reachable_from_host(server), "the root namespace no longer reaches n1");
        assert!(!reachable_from(&net, 1, server), "n2 no longer reaches n1");
        net.heal_all().expect("heal");
        eventually("the root namespace reaching n1 once healed", || reachable_from_host(server));

        net.cut_one_way(Endpoint::Node(2), Endpoint::Node(0)).expect("n3 -> n1 cut");
        assert!(!reachable_from(&net, 2, server), "n3 no longer reaches n1");
        eventually("n2 still reaching n1", || reachable_from(&net, 1, server));
        net.cut_between(Endpoint::Node(1), Endpoint::Node(0)).expect("n2 <-> n1 cut");
        assert!(!reachable_from(&net, 1, server), "n2 no longer reaches n1");
        eventually("the root namespace still reaching n1", || reachable_from_host(server));
        net.heal(Endpoint::Node(1)).expect("n2 healed");
        eventually("n2 reaching n1 again", || reachable_from(&net, 1, server));
        assert!(!reachable_from(&net, 2, server), "n3's cut outlived n2's heal");

        assert!(net.cut_one_way(Endpoint::Node(7), Endpoint::Host).is_err(), "an unknown node is refused");
        let names: Vec<String> = net.nodes().iter().map(|node| node.namespace.clone()).collect();
        drop(net);
        assert!(listener.wait().is_ok(), "the namespace's process was killed with it");
        let namespaces = run_output(Command::new("ip").args(["netns", "list"])).expect("ip netns list");
        for name in names {
            assert!(!namespaces.contains(&name), "{name} removed: {namespaces}");
        }
        let links = run_output(Command::new("ip").args(["-o", "link", "show"])).expect("ip link");
        assert!(!links.contains(&format!("{PREFIX}{}br", std::process::id())), "the bridge removed");
    }
}
