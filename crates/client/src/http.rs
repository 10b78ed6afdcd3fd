//! The gateway's HTTP API: a game's state (`/api/games/{id}`), its PGN,
//! players and their games, leaderboards, and every service's `/healthz`,
//! `/readyz` and `/metrics`. One pooled client keeps connections alive
//! across requests, so a load test reads thousands of games over a few
//! sockets, and every request has its own deadline (a frozen peer costs
//! one timeout, not a stall).

use std::net::SocketAddr;
use std::time::Duration;

use serde::de::DeserializeOwned;

/// A request's deadline unless [`Http::with_timeout`] says otherwise.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("{method} {url}: {source}")]
    Request {
        method: &'static str,
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("GET {url}: the body is not the JSON expected: {source}")]
    Json {
        url: String,
        #[source]
        source: serde_json::Error,
    },
}

/// An answer: its status and body, whatever the status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
    /// `Retry-After`, in seconds, when the server sent one (with a 429).
    pub retry_after: Option<u64>,
}

impl Response {
    /// The body as text (lossy: the API answers UTF-8).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }
}

/// A client for one server's HTTP address (`http://host:port`).
#[derive(Clone, Debug)]
pub struct Http {
    client: reqwest::Client,
    base: String,
    timeout: Duration,
}

impl Http {
    /// A client for `base`, `http://host:port` (a trailing `/` is ignored).
    pub fn new(base: &str) -> Http {
        let client = reqwest::Client::builder()
            // Loopback and a cluster's own network: a proxy from the
            // environment would only be in the way.
            .no_proxy()
            .tcp_nodelay(true)
            .build()
            .expect("an HTTP client without TLS always builds");
        Http { client, base: base.trim_end_matches('/').to_owned(), timeout: REQUEST_TIMEOUT }
    }

    pub fn for_addr(addr: SocketAddr) -> Http {
        Http::new(&format!("http://{addr}"))
    }

    /// The same client with another per-request deadline.
    pub fn with_timeout(mut self, timeout: Duration) -> Http {
        self.timeout = timeout;
        self
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// GETs `path` (starting with `/`).
    pub async fn get(&self, path: &str) -> Result<Response, HttpError> {
        self.send(reqwest::Method::GET, path, None, None).await
    }

    /// Sends `method` to `path` (starting with `/`), with `bearer` as the
    /// `Authorization` and `body` as a JSON body when given.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        bearer: Option<&str>,
        body: Option<&serde_json::Value>,
    ) -> Result<Response, HttpError> {
        let url = format!("{}{path}", self.base);
        let method_name = match method {
            reqwest::Method::POST => "POST",
            reqwest::Method::DELETE => "DELETE",
            reqwest::Method::PUT => "PUT",
            _ => "GET",
        };
        let failed = |source| HttpError::Request { method: method_name, url: url.clone(), source };
        let mut request = self.client.request(method, &url).header("accept", "application/json").timeout(self.timeout);
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
        }
        let answer = request.send().await.map_err(failed)?;
        let status = answer.status().as_u16();
        let retry_after = answer
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        let body = answer.bytes().await.map_err(failed)?;
        Ok(Response { status, body: body.to_vec(), retry_after })
    }

    /// GETs `path` and reads its body as `T`, with the status.
    pub async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<(u16, T), HttpError> {
        let answer = self.get(path).await?;
        let value = answer.json().map_err(|source| HttpError::Json { url: format!("{}{path}", self.base), source })?;
        Ok((answer.status, value))
    }

    /// A game as a spectator sees it (`GET /api/games/{id}`).
    pub async fn game(&self, id: &str) -> Result<Response, HttpError> {
        self.get(&format!("/api/games/{id}")).await
    }

    /// A finished game's PGN from the archive.
    pub async fn pgn(&self, id: &str) -> Result<Response, HttpError> {
        self.get(&format!("/api/games/{id}/pgn")).await
    }

    /// A player's profile: ratings by variant.
    pub async fn player(&self, id: &str) -> Result<Response, HttpError> {
        self.get(&format!("/api/players/{id}")).await
    }

    /// A player's archived games.
    pub async fn player_games(&self, id: &str) -> Result<Response, HttpError> {
        self.get(&format!("/api/players/{id}/games")).await
    }

    pub async fn leaderboard(&self, variant: &str) -> Result<Response, HttpError> {
        self.get(&format!("/api/leaderboard/{variant}")).await
    }

    /// `ok` while the process lives.
    pub async fn healthz(&self) -> Result<Response, HttpError> {
        self.get("/healthz").await
    }

    /// 200 once the process serves.
    pub async fn readyz(&self) -> Result<Response, HttpError> {
        self.get("/readyz").await
    }

    /// The Prometheus text exposition.
    pub async fn metrics(&self) -> Result<Response, HttpError> {
        self.get("/metrics").await
    }
}

/// One GET from code that is not async, or that blocks inside a runtime
/// on purpose (a test starting processes): the request runs on a thread
/// of its own with a runtime of its own, so it works in either place.
pub fn get_blocking(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Response, HttpError> {
    let path = path.to_owned();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime builds");
                runtime.block_on(Http::for_addr(addr).with_timeout(timeout).get(&path))
            })
            .join()
            .expect("the request thread does not panic")
    })
}
