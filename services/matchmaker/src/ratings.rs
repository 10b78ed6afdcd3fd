//! Where a seeker's rating comes from. With a rating service configured
//! the matchmaker asks it (`GetProfile`, the variant's rating, 1500 for a
//! variant never played rated): a gateway's client cannot be trusted to
//! state its own rating. Without one, or when it does not answer in time,
//! the rating the caller gave is used, and 1500 without one.

use std::time::Duration;

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::Variant;
use fogblast_proto::rating::rating_client::RatingClient;
use fogblast_proto::rating::ProfileRequest;
use tonic::transport::{Channel, Endpoint};
use tracing::warn;

/// The rating of a player the rating service has never rated.
pub const DEFAULT_RATING: u32 = 1500;
/// The highest rating accepted from a caller.
pub const MAX_RATING: u32 = 4000;
const LOOKUP_TIMEOUT: Duration = Duration::from_millis(800);

#[derive(Debug, Clone)]
pub struct Ratings {
    client: Option<RatingClient<Channel>>,
}

impl Ratings {
    /// Ratings from the service at `addr`, or from callers with `None`.
    pub fn new(addr: Option<&str>) -> Result<Ratings, ServiceError> {
        let client = match addr {
            Some(addr) => {
                let endpoint = Endpoint::from_shared(addr.to_owned())
                    .map_err(|e| ServiceError::new(ErrorCode::BadRequest, format!("bad rating address {addr}: {e}")))?
                    .connect_timeout(Duration::from_secs(2))
                    .timeout(LOOKUP_TIMEOUT)
                    .tcp_nodelay(true);
                Some(RatingClient::new(endpoint.connect_lazy()))
            }
            None => None,
        };
        Ok(Ratings { client })
    }

    /// The player's rating in `variant`; `given` is the caller's word for it.
    pub async fn rating(&self, player: &str, variant: Variant, given: Option<u32>) -> u32 {
        let fallback = given.filter(|r| *r > 0).map_or(DEFAULT_RATING, |r| r.min(MAX_RATING));
        let Some(client) = &self.client else { return fallback };
        let request = ProfileRequest { player_id: player.to_owned() };
        let answer =
            tokio::time::timeout(LOOKUP_TIMEOUT, client.clone().get_profile(fogblast_telemetry::traced(request))).await;
        match answer {
            Ok(Ok(profile)) => profile
                .into_inner()
                .ratings
                .iter()
                .find(|r| r.variant == variant as i32)
                .map_or(DEFAULT_RATING, |r| r.rating.round().clamp(0.0, f64::from(MAX_RATING)) as u32),
            Ok(Err(status)) if status.code() == tonic::Code::NotFound => DEFAULT_RATING,
            Ok(Err(status)) => {
                warn!(player, error = %status.message(), "rating lookup failed; using the fallback");
                fallback
            }
            Err(_) => {
                warn!(player, "rating lookup timed out; using the fallback");
                fallback
            }
        }
    }
}
