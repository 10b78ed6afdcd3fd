//! What the gateway does with a client's frame: a command on one game,
//! sent to the game service as the `Command` message's action (the one
//! mapping, which the gateway's sockets and its Bot API both use), or a
//! frame the gateway carries out itself.

use fogblast_proto::game::command::Action;
use fogblast_proto::game::{self as proto, OfferAction};

use crate::client::{ClientFrame, Create, GameRef, Hello, Join, Resume, Seek};
use crate::vocab::{ChatRoom, RematchAction};

/// A command on the game `game` (as the client wrote its id).
#[derive(Clone, Debug, PartialEq)]
pub struct GameCommand {
    pub game: String,
    pub action: Action,
}

impl GameCommand {
    /// The message for the game service, by `player`. The gateway adds
    /// what only it knows (a move's lag and time in the gateway).
    pub fn by(self, player: &str) -> proto::Command {
        proto::Command {
            game_id: self.game,
            player_id: player.to_owned(),
            request_id: String::new(),
            action: Some(self.action),
        }
    }
}

/// A chat line as the game service takes it: the room and the text; the
/// shard fills in who wrote it.
pub fn chat_line(room: ChatRoom, text: String) -> proto::ChatLine {
    proto::ChatLine { room: proto::ChatRoom::from(room) as i32, text, ..Default::default() }
}

fn offer(action: OfferAction) -> proto::Offer {
    proto::Offer { action: action as i32 }
}

/// A frame the gateway carries out itself: every frame but a command on
/// one game.
#[derive(Clone, Debug, PartialEq)]
pub enum GatewayFrame {
    Hello(Hello),
    Create(Create),
    Join(Join),
    Watch(GameRef),
    Resume(Resume),
    Seek(Seek),
    CancelSeek,
    Lobby,
    Ping,
}

/// Where a frame is carried out.
#[derive(Clone, Debug, PartialEq)]
pub enum Routed {
    /// By the game's shard.
    Game(GameCommand),
    /// By the gateway.
    Gateway(GatewayFrame),
}

/// The one match that names every frame: a new one is put on one side or
/// the other, and a new command on a game needs nothing in the gateway.
impl From<ClientFrame> for Routed {
    fn from(frame: ClientFrame) -> Routed {
        let (game, action) = match frame {
            ClientFrame::Move(m) => {
                (m.game, Action::Move(proto::Move { uci: m.uci, ply: m.ply, ..Default::default() }))
            }
            ClientFrame::Resign(r) => (r.game, Action::Resign(proto::Resign {})),
            ClientFrame::Abort(r) => (r.game, Action::Abort(proto::Abort {})),
            ClientFrame::ClaimVictory(r) => (r.game, Action::ClaimVictory(proto::ClaimVictory {})),
            ClientFrame::Draw(o) => (o.game, Action::Draw(offer(o.action.into()))),
            ClientFrame::Takeback(o) => (o.game, Action::Takeback(offer(o.action.into()))),
            ClientFrame::Rematch(r) => match r.action {
                Some(RematchAction::Decline) => (r.game, Action::DeclineRematch(proto::DeclineRematch {})),
                Some(RematchAction::Offer) | None => (r.game, Action::Rematch(proto::Rematch {})),
            },
            ClientFrame::Chat(c) => (c.game, Action::Chat(chat_line(c.room, c.text))),
            ClientFrame::Berserk(r) => (r.game, Action::Berserk(proto::Berserk {})),
            ClientFrame::GiveTime(r) => (r.game, Action::GiveTime(proto::GiveTime {})),
            ClientFrame::Hello(hello) => return Routed::Gateway(GatewayFrame::Hello(hello)),
            ClientFrame::Create(create) => return Routed::Gateway(GatewayFrame::Create(create)),
            ClientFrame::Join(join) => return Routed::Gateway(GatewayFrame::Join(join)),
            ClientFrame::Watch(watch) => return Routed::Gateway(GatewayFrame::Watch(watch)),
            ClientFrame::Resume(resume) => return Routed::Gateway(GatewayFrame::Resume(resume)),
            ClientFrame::Seek(seek) => return Routed::Gateway(GatewayFrame::Seek(seek)),
            ClientFrame::CancelSeek => return Routed::Gateway(GatewayFrame::CancelSeek),
            ClientFrame::Lobby => return Routed::Gateway(GatewayFrame::Lobby),
            ClientFrame::Ping => return Routed::Gateway(GatewayFrame::Ping),
        };
        Routed::Game(GameCommand { game, action })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::parse;

    fn command(text: &str) -> Result<GameCommand, GatewayFrame> {
        match Routed::from(parse(text).expect("a valid frame").frame) {
            Routed::Game(command) => Ok(command),
            Routed::Gateway(frame) => Err(frame),
        }
    }

    #[test]
    fn commands_on_a_game_become_actions_and_the_rest_come_back() {
        let moved = command(r#"{"t":"move","game":"g1","uci":"e2e4","ply":0}"#).unwrap();
        assert_eq!(moved.game, "g1");
        assert_eq!(moved.action, Action::Move(proto::Move { uci: "e2e4".into(), ply: 0, lag_ms: 0, waited_ms: 0 }));
        let draw = command(r#"{"t":"draw","game":"g1","action":"accept"}"#).unwrap();
        assert_eq!(draw.action, Action::Draw(proto::Offer { action: OfferAction::Accept as i32 }));
        let takeback = command(r#"{"t":"takeback","game":"g1","action":"request"}"#).unwrap();
        assert_eq!(takeback.action, Action::Takeback(proto::Offer { action: OfferAction::Offer as i32 }));
        let offer = command(r#"{"t":"rematch","game":"g1"}"#).unwrap();
        assert_eq!(offer.action, Action::Rematch(proto::Rematch {}));
        let chat = command(r#"{"t":"chat","game":"g1","room":"players","text":"good luck"}"#).unwrap();
        let line =
            proto::ChatLine { room: proto::ChatRoom::Players as i32, text: "good luck".into(), ..Default::default() };
        assert_eq!(chat.action, Action::Chat(line));
        let decline = command(r#"{"t":"rematch","game":"g1","action":"decline"}"#).unwrap();
        assert_eq!(decline.action, Action::DeclineRematch(proto::DeclineRematch {}));
        for (text, action) in [
            (r#"{"t":"resign","game":"g1"}"#, Action::Resign(proto::Resign {})),
            (r#"{"t":"abort","game":"g1"}"#, Action::Abort(proto::Abort {})),
            (r#"{"t":"claim_victory","game":"g1"}"#, Action::ClaimVictory(proto::ClaimVictory {})),
            (r#"{"t":"give_time","game":"g1"}"#, Action::GiveTime(proto::GiveTime {})),
        ] {
            assert_eq!(command(text).unwrap().action, action, "{text}");
        }
        let message = command(r#"{"t":"resign","game":"g1"}"#).unwrap().by("p1");
        assert_eq!((message.game_id.as_str(), message.player_id.as_str()), ("g1", "p1"));
        let watch = GatewayFrame::Watch(GameRef { game: "g1".into() });
        for (text, frame) in [
            (r#"{"t":"watch","game":"g1"}"#, watch),
            (r#"{"t":"lobby"}"#, GatewayFrame::Lobby),
            (r#"{"t":"ping"}"#, GatewayFrame::Ping),
        ] {
            assert_eq!(command(text).unwrap_err(), frame, "{text} is the gateway's");
        }
    }
}
