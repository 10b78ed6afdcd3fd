//! The bus on a NATS JetStream cluster of three servers of the test's own:
//! the streams are kept at three replicas, and with the leader of the
//! finished-games stream killed (SIGKILL) a finished game stored before
//! and one published after are both delivered, none lost.

use std::time::{Duration, Instant};

use bytes::Bytes;
use fogblast_bus::{ConsumerConfig, EventBus, NatsBus, NatsConfig};
use fogblast_testkit::NatsCluster;
use futures::StreamExt;

/// The most a step may take on a shared machine; reached only on failure.
const DEADLINE: Duration = Duration::from_secs(60);

fn config(cluster: &NatsCluster) -> NatsConfig {
    NatsConfig {
        url: cluster.url(),
        replicas: 3,
        stream: "TEST_CLUSTER".into(),
        subject_prefix: "test_cluster.".into(),
        // A bound of the test's own: each of the three servers must be able
        // to reserve it on a disk the other servers and tests share.
        max_bytes: 64 * 1024 * 1024,
        public_max_bytes: Some(64 * 1024 * 1024),
        ..NatsConfig::default()
    }
}

/// Publishes until the stream acknowledges: while a new leader is elected
/// the publish fails, and a retry under the same message id is harmless.
async fn publish_until_stored(bus: &NatsBus, subject: &str, id: &str, payload: &str) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let attempt = bus.publish_durable(subject, id, Vec::new(), Bytes::from(payload.to_owned()));
        match tokio::time::timeout(Duration::from_secs(5), attempt).await {
            Ok(Ok(_)) => return,
            Ok(Err(e)) => assert!(Instant::now() < deadline, "{id} never stored: {e}"),
            Err(_) => assert!(Instant::now() < deadline, "{id} never stored: publish timed out"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The stream's leader and replica count, as the cluster reports them.
async fn stream_placement(url: &str, stream: &str) -> (String, usize) {
    let client = async_nats::connect(fogblast_bus::nats_servers(url).expect("urls")).await.expect("connect");
    let mut stream = async_nats::jetstream::new(client).get_stream(stream).await.expect("the stream exists");
    let info = stream.info().await.expect("stream info");
    let leader = info.cluster.as_ref().and_then(|c| c.leader.clone()).expect("the stream has a leader");
    (leader, info.config.num_replicas)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_survives_the_stream_leader_killed() {
    let mut cluster = NatsCluster::start(3).await;
    let bus = tokio::time::timeout(DEADLINE, NatsBus::connect(config(&cluster)))
        .await
        .expect("connecting in time")
        .expect("the bus connects to the cluster and creates its streams");
    let (leader, replicas) = stream_placement(&cluster.url(), "TEST_CLUSTER").await;
    assert_eq!(replicas, 3, "the site's stream is kept at three copies");
    let (_, public_replicas) = stream_placement(&cluster.url(), "TEST_CLUSTER_PUBLIC").await;
    assert_eq!(public_replicas, 3, "the public stream is kept at three copies");

    publish_until_stored(&bus, "games.finished.atomic", "game-before", "finished before").await;
    cluster.kill(&leader);
    publish_until_stored(&bus, "games.finished.fog", "game-after", "finished after").await;

    let consumer =
        ConsumerConfig { name: "archive".into(), filter: "games.finished.>".into(), ack_wait: Duration::from_secs(5) };
    let mut deliveries = tokio::time::timeout(DEADLINE, async {
        loop {
            match bus.consume_durable(consumer.clone()).await {
                Ok(deliveries) => return deliveries,
                Err(e) => eprintln!("consumer not created yet: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
    .await
    .expect("a consumer created on the surviving servers");
    let mut received = Vec::new();
    let deadline = Instant::now() + DEADLINE;
    while received.len() < 2 {
        assert!(Instant::now() < deadline, "only {received:?} delivered in time");
        let delivery = tokio::time::timeout(DEADLINE, deliveries.next())
            .await
            .unwrap_or_else(|_| panic!("only {received:?} delivered; survivor's log:\n{}", cluster.log_tail("n1")))
            .expect("the delivery stream goes on");
        let Ok(delivery) = delivery else { continue };
        received.push(delivery.message_id().expect("a message id").to_owned());
        delivery.ack().await.expect("acknowledged");
    }
    assert_eq!(received, ["game-before", "game-after"], "both finished games, in order, once each");
}
