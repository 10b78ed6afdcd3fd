//! Limits that keep one client from taking more than its share: message
//! credits per connection, connections per IP address, games created per IP
//! address. Each is a token bucket: a burst up to its size, then a steady
//! refill.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

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
        let now = Instant::now();
        self.tokens = (self.tokens + (now - self.last).as_secs_f64() * self.per_second).min(self.capacity);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn is_full(&self) -> bool {
        self.tokens + (Instant::now() - self.last).as_secs_f64() * self.per_second >= self.capacity
    }
}

/// Per-IP counts and buckets.
#[derive(Debug)]
pub struct IpLimits {
    max_connections: u32,
    games_per_minute: u32,
    connections: Mutex<HashMap<IpAddr, u32>>,
    creations: Mutex<HashMap<IpAddr, Bucket>>,
}

impl IpLimits {
    pub fn new(max_connections: u32, games_per_minute: u32) -> IpLimits {
        IpLimits { max_connections, games_per_minute, connections: Mutex::default(), creations: Mutex::default() }
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
        let mut creations = self.creations.lock().expect("creations lock");
        if creations.len() > 10_000 {
            creations.retain(|_, bucket| !bucket.is_full());
        }
        let limit = self.games_per_minute;
        creations.entry(ip).or_insert_with(|| Bucket::new(limit, Duration::from_secs(60))).take()
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
        let limits = IpLimits::new(2, 1);
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
    }
}
