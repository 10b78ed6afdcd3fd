//! Just enough HTTP/1.1 for the load test's own reads: readiness probes and
//! the spectator view of each game (`GET /api/games/{id}`) at the end. It
//! keeps its connection alive between requests, so thousands of games are
//! read over a few sockets; the workspace has no HTTP client otherwise.

use std::time::Duration;

use anyhow::{bail, Context};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Larger answers are refused: a game's state is a few kilobytes.
const MAX_BODY: usize = 4 << 20;

/// One kept-alive connection to `host:port`.
#[derive(Debug)]
pub struct HttpConn {
    addr: String,
    stream: Option<BufReader<TcpStream>>,
}

/// `host:port` of an `http://host:port[/...]` URL.
pub fn authority(base: &str) -> anyhow::Result<&str> {
    let rest = base.strip_prefix("http://").with_context(|| format!("{base:?} is not an http:// URL"))?;
    Ok(rest.split('/').next().unwrap_or(rest))
}

impl HttpConn {
    pub fn new(addr: &str) -> HttpConn {
        HttpConn { addr: addr.to_owned(), stream: None }
    }

    /// GETs `path`; returns the status and the body.
    pub async fn get(&mut self, path: &str) -> anyhow::Result<(u16, Vec<u8>)> {
        // A kept-alive connection the server has since closed fails at
        // once: try again on a new one.
        let reused = self.stream.is_some();
        match tokio::time::timeout(REQUEST_TIMEOUT, self.exchange(path)).await {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(_)) if reused => {}
            Ok(Err(error)) => {
                self.stream = None;
                return Err(error);
            }
            Err(_) => {
                self.stream = None;
                bail!("GET {path} on {}: no answer within {REQUEST_TIMEOUT:?}", self.addr)
            }
        }
        self.stream = None;
        match tokio::time::timeout(REQUEST_TIMEOUT, self.exchange(path)).await {
            Ok(result) => result.inspect_err(|_| self.stream = None),
            Err(_) => {
                self.stream = None;
                bail!("GET {path} on {}: no answer within {REQUEST_TIMEOUT:?}", self.addr)
            }
        }
    }

    async fn exchange(&mut self, path: &str) -> anyhow::Result<(u16, Vec<u8>)> {
        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => {
                let tcp =
                    TcpStream::connect(&self.addr).await.with_context(|| format!("connecting to {}", self.addr))?;
                tcp.set_nodelay(true)?;
                self.stream.insert(BufReader::new(tcp))
            }
        };
        let request = format!("GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\r\n", self.addr);
        stream.get_mut().write_all(request.as_bytes()).await?;
        let mut line = String::new();
        if stream.read_line(&mut line).await? == 0 {
            bail!("{} closed the connection", self.addr);
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .with_context(|| format!("not an HTTP status line: {line:?}"))?;
        let mut length = None;
        let mut close = false;
        loop {
            line.clear();
            if stream.read_line(&mut line).await? == 0 {
                bail!("{} closed the connection in the headers", self.addr);
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else { continue };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse::<usize>().context("content-length")?);
            } else if name.eq_ignore_ascii_case("connection") && value.eq_ignore_ascii_case("close") {
                close = true;
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                bail!("{} answered with transfer-encoding {value}, which this client does not read", self.addr);
            }
        }
        let mut body = Vec::new();
        match length {
            Some(length) if length > MAX_BODY => bail!("an answer of {length} bytes is too large"),
            Some(length) => {
                body.resize(length, 0);
                stream.read_exact(&mut body).await?;
            }
            None => {
                stream.take(MAX_BODY as u64).read_to_end(&mut body).await?;
                close = true;
            }
        }
        if close {
            self.stream = None;
        }
        Ok((status, body))
    }
}
