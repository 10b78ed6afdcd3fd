//! Hostile clients for a bounded time against real processes (an engine
//! pool, a game shard, a matchmaker and a gateway that believes
//! `X-Forwarded-For` from loopback, as behind a proxy): draw-offer loops
//! against the computer, a flood of games against the computer, a lobby
//! flood from many addresses of one IPv6 /64, forged pongs, binary floods
//! and an HTTP flood, all at once. Meanwhile two honest players play a
//! game. The gateway's and the shard's resident memory stay bounded, the
//! honest moves are acknowledged without a stall (p99 under 250 ms; the
//! run prints the figure, 13 ms p50 and 57–59 ms p99 on the 2-core
//! development machine, where it runs beside the whole flood), and the
//! lobby holds no more of the flood than one address's share.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fogblast_client::tungstenite::Message;
use fogblast_client::{Connection, Http};
use fogblast_rules::{Variant, WinReason};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::hostile::masked_text;
use crate::support::{find_line, move_frame, start_game, t, Client, Cluster, Proc};

/// How long the hostile clients run.
const SOAK: Duration = Duration::from_secs(20);

/// Resident memory of a process, in KiB.
fn rss_kib(proc: &Proc) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", proc.pid())).expect("the process runs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

/// A socket that comes from `address` as the proxy says, with a player.
async fn hostile(url: &str, address: &str) -> Option<Connection> {
    let headers = [("x-forwarded-for", address)];
    let mut conn = Connection::connect_with_headers(url, Default::default(), &headers).await.ok()?;
    conn.send_text(json!({ "t": "hello" }).to_string()).await.ok()?;
    Some(conn)
}

/// A WebSocket from `address` (as the proxy says) whose handshake is read
/// and nothing after.
async fn raw_websocket(addr: std::net::SocketAddr, address: &str) -> Option<tokio::net::TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4().ok()?;
    socket.set_recv_buffer_size(4096).ok()?;
    let mut stream = socket.connect(addr).await.ok()?;
    let upgrade = format!(
        "GET /ws HTTP/1.1\r\nHost: {addr}\r\nX-Forwarded-For: {address}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(upgrade.as_bytes()).await.ok()?;
    read_head(&mut stream).await.filter(|head| head.starts_with("HTTP/1.1 101")).map(|_| stream)
}

/// The head of an HTTP answer, read byte by byte so the body stays.
async fn read_head(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut byte)).await.ok()?.ok()?;
        head.push(byte[0]);
    }
    String::from_utf8(head).ok()
}

/// An HTTP request from `address` (as the proxy says): the status, and
/// the connection with the body still to read.
async fn http_request(
    addr: std::net::SocketAddr,
    address: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> Option<(u16, tokio::net::TcpStream)> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nX-Forwarded-For: {address}\r\nConnection: close\r\n{auth}\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.ok()?;
    let head = read_head(&mut stream).await?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, stream))
}

/// Whether a refusal's body says it was for games (the address's budget of
/// new games or its cap of computer games), not the Bot API's request budget.
async fn refused_for_games(mut stream: tokio::net::TcpStream) -> bool {
    let mut body = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut body)).await;
    String::from_utf8_lossy(&body).contains("games")
}

async fn bot_token(addr: std::net::SocketAddr, address: &str) -> Option<String> {
    let (_, mut stream) = http_request(addr, address, "POST", "/api/token", None, "").await?;
    let mut body = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut body)).await;
    let text = String::from_utf8_lossy(&body);
    let json: Value = serde_json::from_str(&text[text.find('{')?..=text.rfind('}')?]).ok()?;
    json["token"].as_str().or(json["access_token"].as_str()).map(str::to_owned)
}

/// Run alone, after the rest of the suite (`tests/run` does): its latency
/// bound is about this test's clients, not the machine's other work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a timed soak: tests/run runs it alone"]
async fn hostile_clients_leave_memory_bounded_and_honest_games_fast() {
    let cluster = Cluster::start_with_engines("soak", 1, 1, 0);
    let matchmaker = cluster.spawn_matchmaker("matchmaker");
    let matchmaker_addr = format!("http://{}", matchmaker.grpc.expect("the matchmaker logs its gRPC address"));
    let gateway = cluster.spawn_gateway_with(
        "gateway",
        &[
            "--matchmaker-addr",
            &matchmaker_addr,
            "--trusted-proxies",
            "127.0.0.1",
            "--computer-games-per-ip",
            "4",
            "--write-timeout-ms",
            "2000",
            "--header-read-timeout-ms",
            "2000",
            "--socket-send-buffer-bytes",
            "16384",
        ],
    );
    let url = format!("ws://{}/ws", gateway.http);
    let shard = &cluster.shards[0];
    let start = (rss_kib(&gateway), rss_kib(shard));

    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let mut hostiles = Vec::new();

    // Draw offers against the computer, over and over, from a few addresses.
    let offers = Arc::new(AtomicU64::new(0));
    for i in 0..4 {
        let (url, stop, sent, offers) = (url.clone(), stop.clone(), sent.clone(), offers.clone());
        hostiles.push(tokio::spawn(async move {
            let Some(mut conn) = hostile(&url, &format!("198.51.100.{i}")).await else { return };
            let create = json!({ "t": "create", "variant": "atomic", "color": "black", "clock": null, "opponent": "computer", "level": "easy" });
            let _ = conn.send_text(create.to_string()).await;
            let mut game = None;
            while game.is_none() {
                let Ok(text) = conn.recv().await else { return };
                let frame: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                if t(&frame) == "created" {
                    game = frame["game"].as_str().map(str::to_owned);
                }
            }
            offers.fetch_add(1, Ordering::Relaxed);
            let offer = json!({ "t": "draw", "game": game, "action": "offer" }).to_string();
            while !stop.load(Ordering::Relaxed) {
                if conn.send_text(offer.clone()).await.is_err() {
                    return;
                }
                sent.fetch_add(1, Ordering::Relaxed);
                // Read what came back, so the socket is not closed as slow.
                while let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(1), conn.recv()).await {}
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }

    // Games against the computer, and boards for the lobby, from many
    // addresses of one /64.
    for i in 0..40 {
        let (url, stop, sent) = (url.clone(), stop.clone(), sent.clone());
        hostiles.push(tokio::spawn(async move {
            let Some(mut conn) = hostile(&url, &format!("2001:db8:5:6::{:x}", i + 1)).await else { return };
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let opponent = if n % 2 == 0 { "human" } else { "computer" };
                let create = json!({ "t": "create", "variant": "atomic", "color": "white", "clock": null, "opponent": opponent });
                if conn.send_text(create.to_string()).await.is_err() {
                    return;
                }
                n += 1;
                sent.fetch_add(1, Ordering::Relaxed);
                while let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(1), conn.recv()).await {}
                // Within the socket's credits, so it stays (and its boards
                // with it): what stops this flood is the per-address limits.
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }));
    }

    // Forged pongs and binary frames as fast as the socket takes them;
    // each flooder is closed, and comes back (after a moment: the flood
    // runs on the same two cores as the servers, and an attacker's own
    // CPU is not what is measured).
    for i in 0..4 {
        let (url, stop, sent) = (url.clone(), stop.clone(), sent.clone());
        hostiles.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let Some(mut conn) = hostile(&url, &format!("203.0.113.{i}")).await else {
                    continue;
                };
                for k in 0u64.. {
                    let message = if k % 2 == 0 {
                        Message::Pong(k.to_be_bytes().to_vec().into())
                    } else {
                        Message::Binary(vec![0u8; 512].into())
                    };
                    if stop.load(Ordering::Relaxed) || conn.send_message(message).await.is_err() {
                        break;
                    }
                    sent.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }

    // The HTTP API, a request every millisecond or so from each.
    for _ in 0..2 {
        let (addr, stop, sent) = (gateway.http, stop.clone(), sent.clone());
        hostiles.push(tokio::spawn(async move {
            let http = Http::for_addr(addr);
            while !stop.load(Ordering::Relaxed) {
                let _ = http.get("/api/leaderboard/atomic").await;
                let _ = http.game("aaaaaaaaaaaa").await;
                sent.fetch_add(2, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }));
    }

    // Slow readers: sockets that ask for the lobby, within their credits,
    // and never read a byte of the answers. Each is closed as too slow once
    // a write has waited the write timeout, and comes back.
    let slow_closed = Arc::new(AtomicU64::new(0));
    for i in 0..4 {
        let (addr, stop, sent, slow_closed) = (gateway.http, stop.clone(), sent.clone(), slow_closed.clone());
        hostiles.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Some(mut stream) = raw_websocket(addr, &format!("192.0.2.{i}")).await else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                let _ = stream.write_all(&masked_text(&json!({ "t": "hello" }).to_string())).await;
                let lobby = masked_text(&json!({ "t": "lobby" }).to_string());
                for _ in 0..60 {
                    let _ = stream.write_all(&lobby).await;
                    sent.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                // Then nothing is read; a small frame now and then finds
                // out when the gateway has given up on the socket.
                let ping = masked_text(&json!({ "t": "ping" }).to_string());
                while !stop.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    if let Ok(Err(_)) = tokio::time::timeout(Duration::from_millis(100), stream.write_all(&ping)).await
                    {
                        slow_closed.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                }
            }
        }));
    }

    // Slow headers: connections that send half a request line and one
    // header, then nothing, a few hundred at a time.
    let half_sent_closed = Arc::new(AtomicU64::new(0));
    for _ in 0..2 {
        let (addr, stop, sent, closed) = (gateway.http, stop.clone(), sent.clone(), half_sent_closed.clone());
        hostiles.push(tokio::spawn(async move {
            let mut open = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if open.len() < 100 {
                    if let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await {
                        let _ = stream.write_all(b"GET /ws HTTP/1.1\r\nHost: fogblast\r\n").await;
                        sent.fetch_add(1, Ordering::Relaxed);
                        open.push(stream);
                    }
                }
                // Forget the ones the gateway closed.
                let mut buf = [0u8; 256];
                let before = open.len();
                open.retain(|s| match s.try_read(&mut buf) {
                    Ok(0) => false,
                    Ok(_) => true,
                    Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
                });
                closed.fetch_add((before - open.len()) as u64, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }

    // A bot that repeats its seek, leaving every answer open, and bots
    // that start games against the computer over HTTP and never move.
    let (seeks_refused, computer_refused) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    {
        let (addr, stop, sent, refused) = (gateway.http, stop.clone(), sent.clone(), seeks_refused.clone());
        hostiles.push(tokio::spawn(async move {
            let Some(token) = bot_token(addr, "198.18.0.1").await else { return };
            let mut open = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if let Some((status, stream)) = http_request(
                    addr,
                    "198.18.0.1",
                    "POST",
                    "/api/board/seek",
                    Some(&token),
                    "variant=atomic&time=3&increment=2",
                )
                .await
                {
                    if status != 429 {
                        open.push(stream);
                    } else if refused_for_games(stream).await {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
                sent.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    for i in 0..4 {
        let (addr, stop, sent, refused) = (gateway.http, stop.clone(), sent.clone(), computer_refused.clone());
        hostiles.push(tokio::spawn(async move {
            let address = format!("198.18.1.{i}");
            let Some(token) = bot_token(addr, &address).await else { return };
            while !stop.load(Ordering::Relaxed) {
                let answer =
                    http_request(addr, &address, "POST", "/api/challenge/ai", Some(&token), "level=1&color=white")
                        .await;
                if let Some((429, stream)) = answer {
                    if refused_for_games(stream).await {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
                sent.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }

    // Meanwhile, an honest game: every move's acknowledgement timed.
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 20, 120);
    let mut white = Client::join("honest-white", gateway.http, None).await;
    let mut black = Client::join("honest-black", gateway.http, None).await;
    let mut latencies = Vec::new();
    let soak_started = Instant::now();
    let mut games = 0;
    while soak_started.elapsed() < SOAK {
        let game = start_game(&mut white, &mut black, "atomic").await;
        for (ply, uci) in line.moves.iter().enumerate() {
            let (mover, other) = if ply % 2 == 0 { (&mut white, &mut black) } else { (&mut black, &mut white) };
            let sent_at = Instant::now();
            mover.send(move_frame(&game, uci, ply)).await;
            mover.expect_move(ply).await;
            latencies.push(sent_at.elapsed());
            other.expect_move(ply).await;
            // A quick player's pace: each side moves about three times a
            // second, within its connection's credits (5 a second).
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        white.expect_where("the end", |f| t(f) == "end" && f["game"] == game.as_str()).await;
        black.expect_where("the end", |f| t(f) == "end" && f["game"] == game.as_str()).await;
        games += 1;
    }
    // While the flood goes on, the lobby holds only the /64's share of it
    // (its creators leaving would take their boards with them).
    let mut watcher = Client::join("lobby-watcher", gateway.http, None).await;
    watcher.send(json!({ "t": "lobby", "id": "l" })).await;
    let lobby = watcher.expect("lobby").await;
    let listed = lobby["open"].as_array().map_or(0, Vec::len);
    let end = (rss_kib(&gateway), rss_kib(shard));
    stop.store(true, Ordering::Relaxed);
    for task in hostiles {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }

    latencies.sort();
    let p99 = latencies[latencies.len() * 99 / 100];
    println!(
        "soak {SOAK:?}: {} hostile frames and requests ({} slow readers and {} half-sent requests closed); \
         honest: {games} games, {} moves, p50 {:?}, p99 {p99:?}, max {:?}; \
         resident memory gateway {} -> {} KiB, shard {} -> {} KiB; lobby {listed} boards",
        sent.load(Ordering::Relaxed),
        slow_closed.load(Ordering::Relaxed),
        half_sent_closed.load(Ordering::Relaxed),
        latencies.len(),
        latencies[latencies.len() / 2],
        latencies.last().unwrap(),
        start.0,
        end.0,
        start.1,
        end.1,
    );
    assert!(sent.load(Ordering::Relaxed) > 10_000, "the hostile clients did their part");
    let metrics = gateway.metrics.expect("the gateway serves metrics");
    let (_, text) = crate::support::http_get(metrics, "/metrics").expect("metrics");
    let too_slow = text
        .lines()
        .find_map(|l| l.strip_prefix("fogblast_gateway_closed_total{reason=\"too slow to read its messages\"} "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    let closes: Vec<&str> = text.lines().filter(|l| l.starts_with("fogblast_gateway_closed_total")).collect();
    assert!(
        too_slow >= 4.0 && slow_closed.load(Ordering::Relaxed) >= 4,
        "the slow readers were closed as too slow: {closes:?}"
    );
    assert!(half_sent_closed.load(Ordering::Relaxed) >= 100, "half-sent requests were closed");
    assert!(seeks_refused.load(Ordering::Relaxed) > 0, "the repeated seeks ran into the address's game budget");
    assert!(computer_refused.load(Ordering::Relaxed) > 0, "computer games over HTTP ran into the address's cap");
    assert!(games >= 1 && latencies.len() >= 60);
    assert_eq!(offers.load(Ordering::Relaxed), 4, "every draw-offer loop has its game against the computer");
    // A bound against stalls, not a speed figure: the flood shares the
    // machine's two cores with the servers.
    assert!(p99 < Duration::from_millis(250), "honest moves under attack: p99 {p99:?}");
    assert!(end.0 < start.0 + 64 * 1024, "the gateway grew from {} to {} KiB", start.0, end.0);
    assert!(end.1 < start.1 + 64 * 1024, "the shard grew from {} to {} KiB", start.1, end.1);
    assert!((1..=10).contains(&listed), "the lobby lists {listed} boards of one /64");
    cluster.assert_healthy();
    gateway.assert_healthy();
}
