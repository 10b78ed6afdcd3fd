//! A test's scratch names are removed when it ends, also when it fails: a
//! key under the prefix and the stream are gone after a panic unwinds past
//! the `Scratch`, and [`fogblast_testkit::leftovers`] no longer lists them.

use fogblast_testkit::{leftovers, nats_url, redis_url, Scratch};

fn key_count(pattern: &str) -> usize {
    let mut connection = redis::Client::open(redis_url()).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query(&mut connection).unwrap();
    keys.len()
}

#[test]
fn a_failing_test_leaves_nothing_behind() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let scratch = Scratch::new("testkit-unwind");
    let (prefix, stream) = (scratch.redis_prefix.clone(), scratch.stream.clone());
    let mut connection = redis::Client::open(redis_url()).unwrap().get_connection().unwrap();
    let _: () = redis::cmd("SET").arg(format!("{prefix}game:{{g1}}")).arg("x").query(&mut connection).unwrap();
    runtime.block_on(async {
        let jetstream = async_nats::jetstream::new(async_nats::connect(nats_url()).await.unwrap());
        let config = async_nats::jetstream::stream::Config {
            name: stream.clone(),
            subjects: vec![format!("{}games.>", scratch.subject_prefix)],
            ..Default::default()
        };
        jetstream.create_stream(config).await.unwrap();
    });
    let listed = runtime.block_on(leftovers());
    assert!(listed.iter().any(|l| l.contains(&prefix)) && listed.iter().any(|l| l.contains(&stream)), "{listed:?}");

    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _owned = scratch;
        panic!("the test fails");
    }));
    assert!(failed.is_err());
    assert_eq!(key_count(&format!("{prefix}*")), 0, "the keys are gone");
    let listed = runtime.block_on(leftovers());
    assert!(!listed.iter().any(|l| l.contains(&prefix) || l.contains(&stream)), "{listed:?}");
}
