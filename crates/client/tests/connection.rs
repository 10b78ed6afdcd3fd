//! The client against a small stand-in for a gateway, started on port 0:
//! `hello` is answered with `welcome`, `ping` with `pong` (after an event
//! of a kind newer than the client's types, and an `error`), and the HTTP
//! API answers a game's state in chunks. The real gateway is exercised by
//! the end-to-end tests, which all run on this crate.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::Path;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use fogblast_client::protocol::{ClientFrame, Hello, Request, ServerFrame};
use fogblast_client::{get_blocking, Client, Closed, Connection, Error, Http};

const LIMIT: Duration = Duration::from_secs(5);

async fn gateway(mut socket: WebSocket) {
    while let Some(Ok(message)) = socket.recv().await {
        let Message::Text(text) = message else { continue };
        let Ok(request) = serde_json::from_str::<Request>(text.as_str()) else {
            let error = r#"{"t":"error","code":"bad_request","message":"the frame is not JSON"}"#;
            let _ = socket.send(Message::text(error)).await;
            continue;
        };
        let answers: Vec<String> = match request.frame {
            ClientFrame::Hello(hello) if hello.token.as_deref() == Some("forged") => {
                vec![r#"{"t":"error","code":"unauthorized","message":"a forged token"}"#.into()]
            }
            ClientFrame::Hello(_) => vec![r#"{"t":"welcome","player":"p1","token":"v1.p1.sig"}"#.into()],
            ClientFrame::Ping => vec![
                r#"{"t":"sparkle","game":"g1","colour":"gold"}"#.into(),
                r#"{"t":"opponent_back","game":"g1","v":4,"extra":true}"#.into(),
                serde_json::to_string(&ServerFrame::Pong { id: request.id }).unwrap(),
            ],
            ClientFrame::Abort(_) => {
                let _ = socket.send(Message::Close(None)).await;
                return;
            }
            _ => vec![],
        };
        for answer in answers {
            if socket.send(Message::text(answer)).await.is_err() {
                return;
            }
        }
    }
}

/// A game's state in three chunks, so the body comes chunked.
async fn game(Path(id): Path<String>) -> Response {
    let parts = [format!(r#"{{"game":"{id}","#), r#""moves":["e2e4","#.to_owned(), r#""e7e5"]}"#.to_owned()];
    let stream = futures::stream::iter(parts.map(Ok::<_, std::io::Error>));
    Response::builder().header("content-type", "application/json").body(Body::from_stream(stream)).unwrap()
}

async fn start() -> SocketAddr {
    let app = Router::new()
        .route("/ws", get(|upgrade: WebSocketUpgrade| async move { upgrade.on_upgrade(gateway) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/api/games/{id}", get(game));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_is_welcomed_and_a_refusal_is_an_error() {
    let addr = start().await;
    let url = format!("ws://{addr}/ws");
    let mut connection = Connection::connect(&url).await.unwrap();
    let welcome = connection.hello(Hello { token: None, name: Some("alice".into()) }).await.unwrap();
    assert_eq!((welcome.player.as_str(), welcome.token.as_str()), ("p1", "v1.p1.sig"));

    let mut forger = Client::connect(&url).await.unwrap();
    let refused = forger.hello(Hello { token: Some("forged".into()), name: None }, LIMIT).await;
    assert!(matches!(&refused, Err(Error::Refused { code, .. }) if code == "unauthorized"), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_takes_the_match_and_keeps_the_rest_raw_and_typed() {
    let addr = start().await;
    let mut client = Client::connect(&format!("ws://{addr}/ws")).await.unwrap();
    client.hello(Hello { token: None, name: None }, LIMIT).await.unwrap();
    client.send_with_id(ClientFrame::Ping, "sync-1").await.unwrap();
    let pong = client
        .wait_typed("pong", LIMIT, |f| match f {
            ServerFrame::Pong { id } => id,
            _ => None,
        })
        .await
        .unwrap();
    assert_eq!(pong, fogblast_client::protocol::Id::from("sync-1"));

    // The two events before the pong stay queued, in order, each with its
    // text as sent: the unknown kind has no type, the known one keeps the
    // field its type does not have.
    let queued = client.take_pending();
    assert_eq!(queued.iter().map(|f| f.kind()).collect::<Vec<_>>(), ["sparkle", "opponent_back"]);
    assert!(queued[0].frame().is_err(), "a kind newer than the types reads as an error");
    assert_eq!(queued[0].json()["colour"], "gold");
    assert!(matches!(queued[1].frame(), Ok(ServerFrame::OpponentBack { v: 4, .. })));
    assert!(queued[1].text().contains(r#""extra":true"#));
    assert_eq!(client.log().len(), 4, "welcome, both events and the pong are logged");

    // Malformed on purpose: the server's error answers it.
    client.send_text("{not json").await.unwrap();
    let error = client.wait_for("error", LIMIT, |f| f.kind() == "error").await.unwrap();
    assert_eq!(error.json()["code"], "bad_request");

    let nothing = client.wait_for("a move", Duration::from_millis(200), |f| f.kind() == "move").await;
    assert!(matches!(nothing, Err(Error::Timeout { .. })), "{nothing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_from_the_server_ends_the_wait_with_its_reason() {
    let addr = start().await;
    let mut client = Client::connect(&format!("ws://{addr}/ws")).await.unwrap();
    client.send(ClientFrame::Abort(fogblast_client::protocol::GameRef { game: "g1".into() })).await.unwrap();
    let closed = client.wait_closed(LIMIT).await.unwrap();
    assert_eq!(closed, Some(Closed::Frame { code: 1005, reason: String::new() }));
    let after = client.wait_for("anything", LIMIT, |_| true).await;
    assert!(matches!(after, Err(Error::Closed(_))), "{after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_reads_chunked_bodies_and_works_from_blocking_code() {
    let addr = start().await;
    let http = Http::for_addr(addr);
    let (status, state): (u16, serde_json::Value) = http.get_json("/api/games/g7").await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(state, serde_json::json!({"game": "g7", "moves": ["e2e4", "e7e5"]}));
    assert_eq!(http.healthz().await.unwrap().text(), "ok");
    assert_eq!(http.get("/nowhere").await.unwrap().status, 404);

    // Inside a runtime, as a test starting processes blocks.
    let health = get_blocking(addr, "/healthz", LIMIT).unwrap();
    assert_eq!((health.status, health.text().as_str()), (200, "ok"));
    let nobody = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    assert!(get_blocking(nobody, "/healthz", LIMIT).is_err(), "nothing listens there");
}
