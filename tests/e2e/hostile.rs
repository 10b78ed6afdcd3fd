//! Hostile clients against `fogblast up`, one attack a test, each checked
//! from outside: a WebSocket client that stops reading, connections that
//! send half a request and then nothing, a bot that repeats its seek, and
//! a bot that starts games against the computer over HTTP past the cap
//! its address has on the WebSocket.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;

use crate::support::{http_get, Client, Proc};

/// How long a test waits for the server to do what it must.
const PATIENCE: Duration = Duration::from_secs(60);

/// The value of the counter `name` with `labels` (written as Prometheus
/// prints them) on the gateway's admin port; 0 before it is first counted.
fn counter(up: &Proc, name: &str, labels: &str) -> f64 {
    let metrics = up.metrics.expect("the gateway serves metrics");
    let (_, text) = http_get(metrics, "/metrics").expect("metrics answer");
    let series = format!("{name}{{{labels}}} ");
    text.lines().find_map(|l| l.strip_prefix(&series)).and_then(|v| v.trim().parse().ok()).unwrap_or(0.0)
}

fn gauge(up: &Proc, name: &str) -> f64 {
    let metrics = up.metrics.expect("the gateway serves metrics");
    let (_, text) = http_get(metrics, "/metrics").expect("metrics answer");
    let series = format!("{name} ");
    text.lines().find_map(|l| l.strip_prefix(&series)).and_then(|v| v.trim().parse().ok()).unwrap_or(0.0)
}

/// Waits until `done` holds, or fails with `what` after [`PATIENCE`].
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "not within {PATIENCE:?}: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Reads until the server closes the connection (end of stream or reset);
/// false if it is still open after `within`.
async fn closed_by_server(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// One HTTP/1.1 request on a fresh connection; the status and the head's
/// end is returned with the connection, so a streamed body can be read on.
pub async fn request(addr: SocketAddr, method: &str, path: &str, token: Option<&str>, body: &str) -> (u16, TcpStream) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{auth}\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write the request");
    let mut read = Vec::new();
    let mut buf = [0u8; 1];
    // The head, byte by byte: what follows it stays in the socket.
    while !read.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(PATIENCE, stream.read(&mut buf)).await.expect("an answer").expect("read");
        assert!(n == 1, "the connection closed in the head: {}", String::from_utf8_lossy(&read));
        read.push(buf[0]);
    }
    let text = String::from_utf8_lossy(&read);
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("a status line");
    (status, stream)
}

/// The body of an answer that is not streamed, as JSON.
async fn json_body(mut stream: TcpStream) -> Value {
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
    let text = String::from_utf8_lossy(&rest);
    let start = text.find('{').unwrap_or(0);
    let end = text.rfind('}').map_or(text.len(), |e| e + 1);
    serde_json::from_str(&text[start..end]).unwrap_or(Value::Null)
}

pub async fn bot_token(addr: SocketAddr) -> String {
    let (status, stream) = request(addr, "POST", "/api/token", None, "").await;
    assert_eq!(status, 200);
    let body = json_body(stream).await;
    body["token"].as_str().or(body["access_token"].as_str()).expect("a token").to_owned()
}

/// A client's WebSocket text frame (masked, as clients must send them).
pub fn masked_text(text: &str) -> Vec<u8> {
    let payload = text.as_bytes();
    let mask: [u8; 4] = rand::random();
    let mut frame = vec![0x81];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n <= usize::from(u16::MAX) => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    frame
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_that_stops_reading_is_closed_as_too_slow() {
    let up = Proc::up_with(
        "hostile-slow-reader",
        &["--metrics-listen", "127.0.0.1:0", "--write-timeout-ms", "1000", "--credits", "1000000"],
    );
    let too_slow = r#"reason="too slow to read its messages""#;
    let before = counter(&up, "fogblast_gateway_closed_total", too_slow);

    // A socket with the smallest receive buffer, never read from past the
    // handshake: the gateway's writes stall once the buffers between fill.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(up.http).await.expect("connect");
    let upgrade = format!(
        "GET /ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        up.http
    );
    stream.write_all(upgrade.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).await.expect("the upgrade answer");
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&head));
    stream.write_all(&masked_text(&json!({ "t": "hello" }).to_string())).await.unwrap();
    let writer = tokio::spawn(async move {
        // Every ping is answered; nothing is read. Until the gateway stops
        // reading (its write is stuck) and then closes the socket.
        for i in 0..2_000_000 {
            let ping = masked_text(&json!({ "t": "ping", "id": format!("slow-reader-{i:0>40}") }).to_string());
            if !matches!(tokio::time::timeout(Duration::from_secs(5), stream.write_all(&ping)).await, Ok(Ok(()))) {
                break;
            }
        }
        stream
    });
    eventually("the gateway closes the client that does not read", || {
        counter(&up, "fogblast_gateway_closed_total", too_slow) > before
    })
    .await;
    eventually("its connection is gone", || gauge(&up, "fogblast_gateway_connections") == 0.0).await;
    drop(writer.await);

    // An honest client still plays.
    let mut honest = Client::join("honest", up.http, None).await;
    honest.send(json!({ "t": "ping", "id": "p" })).await;
    honest.expect("pong").await;
    up.assert_healthy();
    up.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_are_capped_per_address_and_closed_after_the_header_timeout() {
    let up = Proc::up_with(
        "hostile-slowloris",
        &[
            "--metrics-listen",
            "127.0.0.1:0",
            "--header-read-timeout-ms",
            "2000",
            "--max-connections-per-ip",
            "1",
            "--max-sockets-per-ip",
            "20",
        ],
    );
    // At most 33 sockets an address: the WebSocket cap and 32.
    let mut slow = Vec::new();
    for _ in 0..40 {
        let mut stream = TcpStream::connect(up.http).await.expect("connect");
        let _ = stream.write_all(b"GET /ws HTTP/1.1\r\nHost: fogblast\r\n").await;
        slow.push(stream);
    }
    // Past the cap, connections are closed at once, before any HTTP.
    let mut refused = 0;
    for stream in slow.iter_mut() {
        if closed_by_server(stream, Duration::from_millis(300)).await {
            refused += 1;
        }
    }
    assert!(refused >= 7, "{refused} of 40 half-sent requests closed at once; at most 33 may stay");
    let cap = r#"reason="too many sockets from one address""#;
    assert!(counter(&up, "fogblast_gateway_closed_total", cap) >= 7.0);
    // The rest are closed once the headers are late.
    for (i, stream) in slow.iter_mut().enumerate() {
        assert!(closed_by_server(stream, PATIENCE).await, "half-sent request {i} still open");
    }
    // A keep-alive connection idle after one answer is closed the same way.
    let mut idle = TcpStream::connect(up.http).await.expect("connect");
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: fogblast\r\n\r\n").await.unwrap();
    let mut answer = [0u8; 512];
    let n = idle.read(&mut answer).await.unwrap();
    assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 200"), "the first answer");
    assert!(closed_by_server(&mut idle, PATIENCE).await, "an idle keep-alive connection stays open");
    // The address has its slots back.
    assert_eq!(http_get(up.http, "/healthz").map(|(s, _)| s), Some(200));
    up.assert_healthy();
    up.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_seek_ends_the_earlier_answer_and_seeks_spend_the_game_budget() {
    let up = Proc::up_with("hostile-seeks", &["--games-per-ip-minute", "6", "--max-connections-per-ip", "3"]);
    // Each seek in a pool of its own (its minutes), so none is paired.
    let seek = |minutes: u32| format!("variant=atomic&time={minutes}&increment=2");
    let token = bot_token(up.http).await;
    let (status, mut first) = request(up.http, "POST", "/api/board/seek", Some(&token), &seek(1)).await;
    assert_eq!(status, 200);
    let (status, second) = request(up.http, "POST", "/api/board/seek", Some(&token), &seek(2)).await;
    assert_eq!(status, 200);
    assert!(closed_by_server(&mut first, PATIENCE).await, "the replaced seek's answer ends");
    // Open seek answers are connections of their address.
    let mut open = vec![second];
    for minutes in [3, 4] {
        let other = bot_token(up.http).await;
        let (status, stream) = request(up.http, "POST", "/api/board/seek", Some(&other), &seek(minutes)).await;
        assert_eq!(status, 200);
        open.push(stream);
    }
    let other = bot_token(up.http).await;
    let (status, _) = request(up.http, "POST", "/api/board/seek", Some(&other), &seek(5)).await;
    assert_eq!(status, 429, "a fourth open seek from the address");
    // Four seeks so far, each a game to be, out of a budget of six a
    // minute: a few more go through (and what refilled since), then the
    // budget refuses.
    let started = Instant::now();
    let mut second = open.remove(0);
    drop(open);
    let mut accepted = 4;
    let mut refusal = None;
    for minutes in 6..40 {
        let other = bot_token(up.http).await;
        let (status, stream) = request(up.http, "POST", "/api/board/seek", Some(&other), &seek(minutes)).await;
        if status == 200 {
            accepted += 1;
            // Its answer closed, its connection goes with it.
            drop(stream);
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let body = json_body(stream).await;
        if body.to_string().contains("connections") {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        refusal = Some((status, body));
        break;
    }
    let (status, body) = refusal.expect("seeks are refused once the address's game budget is spent");
    assert_eq!(status, 429, "{body}");
    assert!(body.to_string().contains("games"), "refused for the game budget: {body}");
    let refilled = started.elapsed().as_secs() / 10 + 1;
    assert!(accepted <= 6 + refilled, "{accepted} seeks went through a budget of six a minute");
    assert!(!closed_by_server(&mut second, Duration::from_millis(200)).await, "the current seek stays open");
    up.assert_healthy();
    up.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn computer_games_over_http_count_with_the_websocket_against_one_cap() {
    let up = Proc::up_with("hostile-computer-games", &["--computer-games-per-ip", "2", "--games-per-ip-minute", "100"]);
    let token = bot_token(up.http).await;
    // The bot takes white and never moves: nothing follows these games.
    let challenge = "level=1&variant=atomic&color=white";
    let mut games = Vec::new();
    for _ in 0..2 {
        let (status, stream) = request(up.http, "POST", "/api/challenge/ai", Some(&token), challenge).await;
        assert_eq!(status, 201);
        games.push(json_body(stream).await["id"].as_str().expect("a game id").to_owned());
    }
    let (status, _) = request(up.http, "POST", "/api/challenge/ai", Some(&token), challenge).await;
    assert_eq!(status, 429, "a third game against the computer over HTTP");
    // The same address over the WebSocket is at the cap too.
    let mut player = Client::join("ws-player", up.http, None).await;
    let create = json!({ "t": "create", "variant": "atomic", "color": "white", "opponent": "computer", "level": "easy", "id": "c" });
    player.send(create.clone()).await;
    let refused = player.expect("error").await;
    assert_eq!(refused["code"], "rate_limited", "{refused}");
    // One ends (resigned over HTTP, seen by no socket): room again.
    let (status, _) = request(up.http, "POST", &format!("/api/bot/game/{}/resign", games[0]), Some(&token), "").await;
    assert_eq!(status, 200);
    player.send(create).await;
    let created = player.expect("created").await;
    assert!(created["game"].is_string(), "{created}");
    up.assert_healthy();
    up.terminate();
}
