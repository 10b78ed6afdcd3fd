//! Limits that keep one client from taking more than its share: message
//! credits per connection, connections per address, games created, HTTP
//! API requests, and loads of the web client's page and of its files per
//! address, and the Bot API's requests per player and per address. Each is
//! a token bucket: a burst up to its size, then a steady refill.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use fogblast_proto::ids::PlayerId;
use tokio::time::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Bucket {
    capacity: f64,
    tokens: f64,
    per_second: f64,
    last: Instant,
}

impl Bucket {
    pub fn new(capacity: u32, window: Duration) -> Bucket {
        let capacity = f64::from(capacity.max(1));
        Bucket {
            capacity,
            tokens: capacity,
            per_second: capacity / window.as_secs_f64().max(0.001),
            last: Instant::now(),
        }
    }

    /// Takes one token if there is one.
    pub fn take(&mut self) -> bool {
        self.take_or_wait().is_ok()
    }

    /// Takes one token, or says how long until there is one.
    pub fn take_or_wait(&mut self) -> Result<(), Duration> {
        let now = Instant::now();
        self.tokens = (self.tokens + (now - self.last).as_secs_f64() * self.per_second).min(self.capacity);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / self.per_second))
        }
    }

    fn is_full(&self) -> bool {
        self.tokens + (Instant::now() - self.last).as_secs_f64() * self.per_second >= self.capacity
    }
}

/// Which per-address budget an HTTP request comes out of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpBudget {
    /// The API (`/api/...`).
    Api,
    /// The web client's page: `/` and invite links.
    Page,
    /// The page's files and the service worker.
    File,
}

/// Buckets kept per address before full ones (addresses quiet for a
/// whole window) are forgotten.
const BUCKETS_KEPT: usize = 10_000;

/// Buckets of one kind, one per address (or per player).
#[derive(Debug)]
struct Buckets<K = IpAddr> {
    capacity: u32,
    window: Duration,
    buckets: Mutex<HashMap<K, Bucket>>,
}

impl<K: std::hash::Hash + Eq + Clone> Buckets<K> {
    fn new(capacity: u32, window: Duration) -> Buckets<K> {
        Buckets { capacity, window, buckets: Mutex::default() }
    }

    fn take(&self, key: &K) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().expect("buckets lock");
        if buckets.len() > BUCKETS_KEPT {
            buckets.retain(|_, bucket| !bucket.is_full());
        }
        if let Some(bucket) = buckets.get_mut(key) {
            return bucket.take_or_wait();
        }
        buckets.entry(key.clone()).or_insert_with(|| Bucket::new(self.capacity, self.window)).take_or_wait()
    }
}

/// Per-address counts and buckets. Addresses come keyed by
/// [`AddressPolicy::limit_key`](crate::address::AddressPolicy::limit_key).
#[derive(Debug)]
pub struct IpLimits {
    max_connections: u32,
    connections: Mutex<HashMap<IpAddr, u32>>,
    creations: Buckets,
    http_requests: Buckets,
    web_pages: Buckets,
    web_files: Buckets,
    bot_requests_per_player: Buckets<PlayerId>,
    bot_requests_per_ip: Buckets,
    chat_lines: Buckets<PlayerId>,
    recovery_tries: Buckets,
}

/// Recovery codes an address may try: a burst of this many, then one
/// every `RECOVERY_WINDOW / RECOVERY_TRIES`.
const RECOVERY_TRIES: u32 = 10;
const RECOVERY_WINDOW: Duration = Duration::from_secs(600);

/// Chat lines a player may write, over the WebSocket and the Bot API
/// together: a burst of this many, then one every
/// `CHAT_WINDOW / CHAT_LINES` seconds.
const CHAT_LINES: u32 = 10;
const CHAT_WINDOW: Duration = Duration::from_secs(30);

/// The web client's budgets per address: page loads, and requests for the
/// page's files.
#[derive(Clone, Copy, Debug)]
pub struct WebBudget {
    pub pages_per_minute: u32,
    pub files_per_minute: u32,
}

/// The Bot API's budgets: a player's requests per minute, and an address's
/// (its bots together).
#[derive(Clone, Copy, Debug)]
pub struct BotBudget {
    pub per_player_minute: u32,
    pub per_ip_minute: u32,
}

impl IpLimits {
    pub fn new(
        max_connections: u32,
        games_per_minute: u32,
        http_requests_per_minute: u32,
        web: WebBudget,
        bots: BotBudget,
    ) -> IpLimits {
        let minute = Duration::from_secs(60);
        IpLimits {
            max_connections,
            connections: Mutex::default(),
            creations: Buckets::new(games_per_minute, minute),
            http_requests: Buckets::new(http_requests_per_minute, minute),
            web_pages: Buckets::new(web.pages_per_minute, minute),
            web_files: Buckets::new(web.files_per_minute, minute),
            bot_requests_per_player: Buckets::new(bots.per_player_minute, minute),
            bot_requests_per_ip: Buckets::new(bots.per_ip_minute, minute),
            chat_lines: Buckets::new(CHAT_LINES, CHAT_WINDOW),
            recovery_tries: Buckets::new(RECOVERY_TRIES, RECOVERY_WINDOW),
        }
    }

    /// Counts a new connection from `ip`, unless it already has the most allowed.
    pub fn connect(&self, ip: IpAddr) -> bool {
        let mut connections = self.connections.lock().expect("connections lock");
        let count = connections.entry(ip).or_insert(0);
        if *count >= self.max_connections {
            return false;
        }
        *count += 1;
        true
    }

    pub fn disconnect(&self, ip: IpAddr) {
        let mut connections = self.connections.lock().expect("connections lock");
        if let Some(count) = connections.get_mut(&ip) {
            *count -= 1;
            if *count == 0 {
                connections.remove(&ip);
            }
        }
    }

    /// Whether `ip` may create another game now.
    pub fn create_game(&self, ip: IpAddr) -> bool {
        self.creations.take(&ip).is_ok()
    }

    /// Whether `ip` may make another HTTP request of `budget` now, or how
    /// long it must wait.
    pub fn http_request(&self, budget: HttpBudget, ip: IpAddr) -> Result<(), Duration> {
        match budget {
            HttpBudget::Api => self.http_requests.take(&ip),
            HttpBudget::Page => self.web_pages.take(&ip),
            HttpBudget::File => self.web_files.take(&ip),
        }
    }

    /// Whether `player` may write another chat line now, or how long it
    /// must wait.
    pub fn chat_line(&self, player: &PlayerId) -> Result<(), Duration> {
        self.chat_lines.take(player)
    }

    /// Whether `ip` may try another recovery code now, or how long it must wait.
    pub fn recovery_try(&self, ip: IpAddr) -> Result<(), Duration> {
        self.recovery_tries.take(&ip)
    }

    /// Whether `player`, from `ip`, may make another Bot API request now,
    /// or how long it must wait. Bots play through requests, one a move, so
    /// their budget is their own rather than the address's API budget.
    pub fn bot_request(&self, ip: IpAddr, player: &PlayerId) -> Result<(), Duration> {
        self.bot_requests_per_player.take(player)?;
        self.bot_requests_per_ip.take(&ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_bucket_allows_its_burst_then_its_rate() {
        let mut bucket = Bucket::new(100, Duration::from_secs(20));
        assert_eq!((0..150).filter(|_| bucket.take()).count(), 100);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!((0..50).filter(|_| bucket.take()).count(), 10, "5 per second refill");
    }

    #[test]
    fn connections_per_ip_are_capped_and_released() {
        let web = WebBudget { pages_per_minute: 1, files_per_minute: 2 };
        let limits = IpLimits::new(2, 1, 2, web, BotBudget { per_player_minute: 1, per_ip_minute: 1 });
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(limits.connect(ip) && limits.connect(ip));
        assert!(!limits.connect(ip));
        assert!(limits.connect(other));
        limits.disconnect(ip);
        assert!(limits.connect(ip));
        assert!(limits.create_game(ip));
        assert!(!limits.create_game(ip));
        assert!(limits.create_game(other));
        let api = |ip| limits.http_request(HttpBudget::Api, ip);
        assert!(api(ip).is_ok() && api(ip).is_ok());
        let wait = api(ip).unwrap_err();
        assert!(wait > Duration::from_secs(25) && wait <= Duration::from_secs(30), "{wait:?}");
        assert!(api(other).is_ok());
        let page = |ip| limits.http_request(HttpBudget::Page, ip);
        assert!(page(ip).is_ok() && page(ip).is_err(), "a bucket of its own");
        let file = |ip| limits.http_request(HttpBudget::File, ip);
        assert!(file(ip).is_ok() && file(ip).is_ok() && file(ip).is_err(), "and the files another");
    }

    #[test]
    fn bot_requests_are_counted_per_player_and_per_address() {
        let bots = BotBudget { per_player_minute: 3, per_ip_minute: 5 };
        let limits = IpLimits::new(2, 1, 1, WebBudget { pages_per_minute: 1, files_per_minute: 1 }, bots);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let alice = PlayerId::parse("aaaaaaaaaaaaaaaa").unwrap();
        let bob = PlayerId::parse("bbbbbbbbbbbbbbbb").unwrap();
        assert_eq!((0..10).filter(|_| limits.bot_request(ip, &alice).is_ok()).count(), 3, "alice's own budget");
        assert_eq!((0..10).filter(|_| limits.bot_request(ip, &bob).is_ok()).count(), 2, "what the address has left");
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(limits.bot_request(other, &alice).is_err(), "a player's budget follows it to any address");
        assert!(limits.http_request(HttpBudget::Api, ip).is_ok(), "the API budget is apart");
    }
}
