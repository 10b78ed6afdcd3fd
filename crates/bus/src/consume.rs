//! A durable consumer kept consuming until told to stop: subscribed again
//! (with a growing pause, up to 5 s) whenever the bus refuses or its
//! delivery stream ends, each delivery handled as it comes, `concurrency`
//! at a time. The rating service and the matchmaker's tournaments read the
//! finished-games stream this way.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::watch;
use tracing::warn;

use crate::{ConsumerConfig, Delivery, EventBus};

/// Consumes `config` on `bus` until `stop` changes, handing each delivery
/// to `handle`, which acknowledges it (or leaves it to be delivered again).
pub async fn consume_until_stopped<F, Fut>(
    bus: &dyn EventBus,
    config: ConsumerConfig,
    concurrency: usize,
    mut stop: watch::Receiver<bool>,
    handle: F,
) where
    F: Fn(Box<dyn Delivery>) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut backoff = Duration::from_millis(100);
    loop {
        let deliveries = match bus.consume_durable(config.clone()).await {
            Ok(deliveries) => deliveries,
            Err(error) => {
                warn!(consumer = %config.name, %error, "cannot consume; trying again");
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stop.changed() => return,
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        backoff = Duration::from_millis(100);
        let work = deliveries.for_each_concurrent(concurrency, |next| {
            let (handle, name) = (&handle, &config.name);
            async move {
                match next {
                    Ok(delivery) => handle(delivery).await,
                    Err(error) => warn!(consumer = %name, %error, "delivery stream"),
                }
            }
        });
        tokio::select! {
            _ = work => {}
            _ = stop.changed() => return,
        }
    }
}
