//! Debian's Prometheus and Alertmanager as processes of a test, on
//! loopback ports and a scratch directory of their own, both killed and the
//! directory removed when the stack drops: Prometheus scrapes the
//! cluster's processes every second, evaluates the shipped alert rules
//! every second with their durations compressed (see [`compressed_rules`]),
//! and sends to the Alertmanager, whose API the test reads.

use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::http_get;

/// The binaries a monitoring test needs, found on `PATH`.
#[derive(Debug)]
pub struct Tools {
    pub promtool: PathBuf,
    pub prometheus: PathBuf,
    pub alertmanager: PathBuf,
}

impl Tools {
    /// Debian's `prometheus` and `prometheus-alertmanager` packages; the
    /// upstream name `alertmanager` too. `None` names what is missing.
    pub fn find() -> Result<Tools, String> {
        let promtool = on_path(&["promtool"]);
        let prometheus = on_path(&["prometheus"]);
        let alertmanager = on_path(&["prometheus-alertmanager", "alertmanager"]);
        match (promtool, prometheus, alertmanager) {
            (Some(promtool), Some(prometheus), Some(alertmanager)) => Ok(Tools { promtool, prometheus, alertmanager }),
            _ => Err("promtool, prometheus and alertmanager are not all installed \
                      (Debian: apt-get install prometheus prometheus-alertmanager; tests/run installs them)"
                .to_owned()),
        }
    }
}

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The rules with every duration (each `for:` and each range selector's
/// `[…]`) divided by `divisor`: with 60, the shipped rules' minutes become
/// seconds, so a test sees in seconds what production sees in minutes,
/// from the same expressions and thresholds.
pub fn compressed_rules(rules: &str, divisor: u64) -> String {
    rules
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            if let Some(value) = trimmed.strip_prefix("for: ") {
                let indent = &line[..line.len() - trimmed.len()];
                format!("{indent}for: {}", compress(value.trim(), divisor))
            } else if trimmed.starts_with("expr: ") {
                compress_ranges(line, divisor)
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn compress_ranges(expr: &str, divisor: u64) -> String {
    let mut out = String::new();
    let mut rest = expr;
    while let Some(open) = rest.find('[') {
        let close = rest[open..].find(']').expect("a range selector is closed") + open;
        out.push_str(&rest[..=open]);
        out.push_str(&compress(&rest[open + 1..close], divisor));
        out.push(']');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// `5m` / 60 = `5000ms`.
fn compress(duration: &str, divisor: u64) -> String {
    let split = duration.find(|c: char| !c.is_ascii_digit()).expect("a duration has a unit");
    let (number, unit) = duration.split_at(split);
    let unit_ms = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => panic!("a duration the rules use: {duration}"),
    };
    let ms = number.parse::<u64>().expect("a whole number") * unit_ms / divisor;
    format!("{ms}ms")
}

/// Prometheus and Alertmanager, running.
pub struct Stack {
    dir: PathBuf,
    children: Vec<Child>,
    pub prometheus: SocketAddr,
    pub alertmanager: SocketAddr,
}

impl Stack {
    /// Starts both with `rules` and `jobs` (a job name and its targets'
    /// `/metrics` addresses), and waits until both answer.
    pub fn start(tools: &Tools, rules: &str, jobs: &[(&str, Vec<SocketAddr>)]) -> Stack {
        let dir = std::env::temp_dir().join(format!("fogblast-monitoring-{:016x}", rand::random::<u64>()));
        std::fs::create_dir_all(&dir).unwrap();
        let prometheus = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let alertmanager = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut stack = Stack { dir, children: Vec::new(), prometheus, alertmanager };

        std::fs::write(stack.dir.join("rules.yaml"), rules).unwrap();
        std::fs::write(stack.dir.join("prometheus.yml"), prometheus_config(jobs, alertmanager)).unwrap();
        std::fs::write(stack.dir.join("alertmanager.yml"), ALERTMANAGER_CONFIG).unwrap();
        let am = Command::new(&tools.alertmanager)
            .arg(format!("--config.file={}", stack.dir.join("alertmanager.yml").display()))
            .arg(format!("--storage.path={}", stack.dir.join("alertmanager").display()))
            .arg(format!("--web.listen-address={alertmanager}"))
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(log_file(&stack.dir, "alertmanager.log"))
            .spawn()
            .expect("alertmanager starts");
        stack.children.push(am);
        let prom = Command::new(&tools.prometheus)
            .arg(format!("--config.file={}", stack.dir.join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", stack.dir.join("data").display()))
            .arg(format!("--web.listen-address={prometheus}"))
            // Firing alerts are sent again every second, not every minute.
            .arg("--rules.alert.resend-delay=1s")
            .stdout(Stdio::null())
            .stderr(log_file(&stack.dir, "prometheus.log"))
            .spawn()
            .expect("prometheus starts");
        stack.children.push(prom);
        stack.wait_ready(prometheus, "/-/ready");
        stack.wait_ready(alertmanager, "/-/ready");
        stack
    }

    fn wait_ready(&self, addr: SocketAddr, path: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if matches!(http_get(addr, path), Some((200, _))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("{addr}{path} never answered 200\n{}", self.logs());
    }

    /// Both processes' logs, for a failure's message.
    pub fn logs(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        let tail = |text: String| {
            text.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
        };
        format!(
            "--- prometheus\n{}\n--- alertmanager\n{}",
            tail(read("prometheus.log")),
            tail(read("alertmanager.log"))
        )
    }

    /// An instant query's result vector, or Prometheus's error.
    pub fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let (status, body) = http_get(self.prometheus, &format!("/api/v1/query?query={}", percent_encode(expr)))
            .ok_or("prometheus does not answer")?;
        let answer: Value = serde_json::from_str(&body).map_err(|e| format!("{status}: {e}: {body}"))?;
        if answer["status"] != "success" {
            return Err(format!("{status}: {}", answer["error"]));
        }
        Ok(answer["data"]["result"].as_array().cloned().unwrap_or_default())
    }

    /// Every metric name Prometheus holds samples of.
    pub fn metric_names(&self) -> BTreeSet<String> {
        let Some((200, body)) = http_get(self.prometheus, "/api/v1/label/__name__/values") else {
            return BTreeSet::new();
        };
        let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        answer["data"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect()
    }

    /// The alerts Alertmanager holds now (resolved ones leave its list).
    pub fn alerts(&self) -> Vec<Value> {
        let Some((200, body)) = http_get(self.alertmanager, "/api/v2/alerts") else {
            return Vec::new();
        };
        serde_json::from_str(&body).unwrap_or_default()
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn prometheus_config(jobs: &[(&str, Vec<SocketAddr>)], alertmanager: SocketAddr) -> String {
    let mut config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n\
         rule_files: [rules.yaml]\n\
         alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['{alertmanager}']\n\
         scrape_configs:\n"
    );
    for (job, targets) in jobs {
        let targets: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        config.push_str(&format!(
            "  - job_name: {job}\n    static_configs:\n      - targets: [{}]\n",
            targets.join(", ")
        ));
    }
    config
}

/// Every alert to one receiver that sends nothing: the test reads the API.
const ALERTMANAGER_CONFIG: &str =
    "route:\n  receiver: test\n  group_wait: 1s\n  group_interval: 1s\nreceivers:\n  - name: test\n";

fn log_file(dir: &Path, name: &str) -> Stdio {
    Stdio::from(std::fs::File::create(dir.join(name)).unwrap())
}

/// A port nothing listens on now (the OS's next ephemeral one).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn compressing_divides_every_duration_of_the_rules() {
    let rules =
        "      - alert: A\n        expr: sum(rate(x[5m])) > 0 unless on() sum(increase(y[10m])) > 0\n        for: 1m\n";
    assert_eq!(
        compressed_rules(rules, 60),
        "      - alert: A\n        expr: sum(rate(x[5000ms])) > 0 unless on() sum(increase(y[10000ms])) > 0\n        for: 1000ms"
    );
}
