//! A caller that gives up on many calls at once (each timed out, so each
//! stream reset before the server took it up) must not end the connection
//! its other calls share: the server from `grpc_server` answers the next
//! call on the same connection.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use fogblast_runtime::{grpc_server, PENDING_RESETS_PER_CONNECTION};
use tokio::net::{TcpListener, TcpStream};

/// A gRPC service that answers every call `unimplemented`.
#[derive(Clone)]
struct Unimplemented;

impl tonic::server::NamedService for Unimplemented {
    const NAME: &'static str = "test.Unimplemented";
}

impl tower::Service<http::Request<tonic::body::Body>> for Unimplemented {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Request<tonic::body::Body>) -> Self::Future {
        ready(Ok(tonic::Status::unimplemented("nothing here").into_http()))
    }
}

fn call(authority: &str) -> http::Request<()> {
    http::Request::post(format!("http://{authority}/test.Unimplemented/Call"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_given_up_in_a_burst_leave_the_connection_serving() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tokio::spawn(grpc_server().add_service(Unimplemented).serve_with_incoming(incoming));

    let socket = TcpStream::connect(addr).await.unwrap();
    let (mut client, connection) = h2::client::handshake(socket).await.unwrap();
    let connection = tokio::spawn(connection);
    let authority = addr.to_string();
    // Far more than h2's default of 20 pending resets, each sent with its
    // request in one burst, as a caller's timeouts firing together do.
    let given_up = 500;
    assert!(given_up < PENDING_RESETS_PER_CONNECTION);
    for _ in 0..given_up {
        client = client.ready().await.unwrap();
        let (_, mut stream) = client.send_request(call(&authority), false).unwrap();
        stream.send_reset(h2::Reason::CANCEL);
    }
    client = client.ready().await.expect("the connection still takes calls");
    let (answer, mut body) = client.send_request(call(&authority), false).unwrap();
    body.send_data(Bytes::from_static(&[0, 0, 0, 0, 0]), true).unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(30), answer)
        .await
        .expect("an answer in time")
        .expect("the call is answered, not refused with the connection");
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers().get("grpc-status").map(|v| v.as_bytes()), Some(&b"12"[..]), "unimplemented");
    assert!(!connection.is_finished(), "the connection is still open");
}
