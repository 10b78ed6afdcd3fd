//! Who is online, as lichess's `GET /api/users/status` and `GET /api/bot/online`
//! tell it: a player with a socket or an open bot event stream on any
//! gateway. Each gateway knows only its own, so a question goes to every
//! gateway on `online.ask` ([`OnlineAsk`]), and the answers that arrive
//! within a short window are gathered. No gateway keeps a list of another's
//! players, and an idle gateway pays nothing.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, Weak};

use std::time::Duration;

use fogblast_bus::EventBus;
use fogblast_proto::ids::PlayerId;
use fogblast_proto::notices::{OnlineAnswer, OnlineAsk};
use futures::StreamExt;
use prost::Message;
use rand::Rng;
use tracing::{debug, warn};

use crate::players::Players;

/// The subject every gateway answers questions on.
const ASK_SUBJECT: &str = "online.ask";

/// How long answers are gathered: every gateway on a healthy bus answers
/// well within it; one that does not counts its players as offline.
const GATHER: Duration = Duration::from_millis(250);

/// The most players one question may name (lichess's limit is 100).
pub const MAX_ASKED: usize = 100;

/// The bots with an open event stream on this gateway, with how many each has.
#[derive(Debug, Default)]
pub struct Online {
    streams: Mutex<HashMap<PlayerId, usize>>,
}

impl Online {
    /// An event stream of `player` opened; dropping the guard closes it.
    pub fn stream_opened(self: &Arc<Self>, player: &PlayerId) -> StreamGuard {
        *self.streams.lock().expect("online lock").entry(player.clone()).or_default() += 1;
        StreamGuard { online: Arc::downgrade(self), player: player.clone() }
    }

    fn bots(&self, most: usize) -> Vec<PlayerId> {
        self.streams.lock().expect("online lock").keys().take(most).cloned().collect()
    }

    fn has_stream(&self, player: &PlayerId) -> bool {
        self.streams.lock().expect("online lock").contains_key(player)
    }
}

/// An open event stream, counted while it lives.
pub struct StreamGuard {
    online: Weak<Online>,
    player: PlayerId,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let Some(online) = self.online.upgrade() else { return };
        let mut streams = online.streams.lock().expect("online lock");
        if let Some(count) = streams.get_mut(&self.player) {
            *count -= 1;
            if *count == 0 {
                streams.remove(&self.player);
            }
        }
    }
}

/// What this gateway answers to `ask`.
fn answer(ask: &OnlineAsk, online: &Online, players: &Players) -> Vec<String> {
    if ask.bots > 0 {
        return online.bots(ask.bots as usize).into_iter().map(PlayerId::into_string).collect();
    }
    ask.player_ids
        .iter()
        .take(MAX_ASKED)
        .filter(|id| PlayerId::parse(id).is_ok_and(|p| online.has_stream(&p) || players.is_here(&p)))
        .cloned()
        .collect()
}

/// Answers every gateway's questions for as long as the gateway runs.
pub fn answer_questions(bus: Arc<dyn EventBus>, gateway: Weak<crate::Gateway>) {
    tokio::spawn(async move {
        let mut asks = match bus.subscribe(ASK_SUBJECT).await {
            Ok(asks) => asks,
            Err(error) => {
                warn!(%error, "not answering who is online: other gateways will count this one's players offline");
                return;
            }
        };
        while let Some(message) = asks.next().await {
            let Some(gateway) = gateway.upgrade() else { return };
            let Ok(ask) = OnlineAsk::decode(message.payload.as_ref()) else { continue };
            if !ask.reply_subject.starts_with("online.reply.") {
                continue;
            }
            let reply = OnlineAnswer { player_ids: answer(&ask, &gateway.online, &gateway.players) };
            if let Err(error) = bus.publish(&ask.reply_subject, Vec::new(), reply.encode_to_vec().into()).await {
                debug!(%error, "an answer about who is online was not sent");
            }
        }
    });
}

/// Asks every gateway `ask` (its reply subject is filled in here) and
/// gathers what they answer within the window.
pub async fn ask(bus: &dyn EventBus, mut ask: OnlineAsk) -> Result<BTreeSet<String>, fogblast_bus::BusError> {
    let nonce: u64 = rand::rng().random();
    ask.reply_subject = format!("online.reply.{nonce:016x}");
    let mut answers = bus.subscribe(&ask.reply_subject).await?;
    bus.publish(ASK_SUBJECT, Vec::new(), ask.encode_to_vec().into()).await?;
    let mut online = BTreeSet::new();
    let window = tokio::time::sleep(GATHER);
    tokio::pin!(window);
    loop {
        tokio::select! {
            answer = answers.next() => match answer {
                Some(message) => {
                    if let Ok(answer) = OnlineAnswer::decode(message.payload.as_ref()) {
                        online.extend(answer.player_ids);
                    }
                }
                None => break,
            },
            () = &mut window => break,
        }
    }
    Ok(online)
}
