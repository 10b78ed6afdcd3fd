//! The one conversion between the wire enums of this crate, the gRPC enums
//! of `fogblast-proto` and the rules' enums, so that no other code maps
//! names by hand. A gRPC enum's unset value has no wire name: colours and
//! levels become `None` (written `null`), the rest their written-only
//! `Unknown`.

use fogblast_proto::game as proto;

use crate::server::{ChatLine, Clock};
use crate::vocab::{
    ChatRoom, Color, ColorChoice, DrawAction, EndReason, Level, Status, TakebackAction, TimeControl, Variant, Viewer,
};

impl From<ChatRoom> for proto::ChatRoom {
    fn from(room: ChatRoom) -> proto::ChatRoom {
        match room {
            ChatRoom::Players => proto::ChatRoom::Players,
            ChatRoom::Spectators => proto::ChatRoom::Spectators,
        }
    }
}

/// A chat line as the protocol writes it; `None` for a line of no known room.
pub fn chat_line(line: &proto::ChatLine) -> Option<ChatLine> {
    let room = match line.room() {
        proto::ChatRoom::Players => ChatRoom::Players,
        proto::ChatRoom::Spectators => ChatRoom::Spectators,
        proto::ChatRoom::Unspecified => return None,
    };
    Some(ChatLine { room, player: line.player_id.clone(), name: line.name.clone(), text: line.text.clone() })
}

// The protobuf enum goes through the rules' variant (its conversions are
// the proto crate's), so the wire's names and the protobuf's agree by
// construction.
impl From<proto::Variant> for Variant {
    fn from(variant: proto::Variant) -> Variant {
        fogblast_rules::Variant::try_from(variant).map_or(Variant::Unknown, Variant::from)
    }
}

impl From<Variant> for proto::Variant {
    fn from(variant: Variant) -> proto::Variant {
        variant.rules().map_or(proto::Variant::Unspecified, proto::Variant::from)
    }
}

impl From<fogblast_rules::Variant> for Variant {
    fn from(variant: fogblast_rules::Variant) -> Variant {
        match variant {
            fogblast_rules::Variant::Standard => Variant::Standard,
            fogblast_rules::Variant::Atomic => Variant::Atomic,
            fogblast_rules::Variant::Fog => Variant::Fog,
        }
    }
}

impl Variant {
    /// The rules of this variant; `None` for the written-only `Unknown`.
    pub fn rules(self) -> Option<fogblast_rules::Variant> {
        match self {
            Variant::Standard => Some(fogblast_rules::Variant::Standard),
            Variant::Atomic => Some(fogblast_rules::Variant::Atomic),
            Variant::Fog => Some(fogblast_rules::Variant::Fog),
            Variant::Unknown => None,
        }
    }
}

/// The colour a gRPC field names; `None` when unset.
pub fn color(color: proto::Color) -> Option<Color> {
    match color {
        proto::Color::White => Some(Color::White),
        proto::Color::Black => Some(Color::Black),
        proto::Color::Unspecified => None,
    }
}

impl From<Color> for proto::Color {
    fn from(color: Color) -> proto::Color {
        match color {
            Color::White => proto::Color::White,
            Color::Black => proto::Color::Black,
        }
    }
}

impl From<fogblast_rules::Color> for Color {
    fn from(color: fogblast_rules::Color) -> Color {
        match color {
            fogblast_rules::Color::White => Color::White,
            fogblast_rules::Color::Black => Color::Black,
        }
    }
}

impl From<Color> for fogblast_rules::Color {
    fn from(color: Color) -> fogblast_rules::Color {
        match color {
            Color::White => fogblast_rules::Color::White,
            Color::Black => fogblast_rules::Color::Black,
        }
    }
}

impl From<ColorChoice> for proto::ColorChoice {
    fn from(choice: ColorChoice) -> proto::ColorChoice {
        match choice {
            ColorChoice::White => proto::ColorChoice::ChooseWhite,
            ColorChoice::Black => proto::ColorChoice::ChooseBlack,
            ColorChoice::Random => proto::ColorChoice::ChooseRandom,
        }
    }
}

/// The colour choice a gRPC field names; `None` when unset.
pub fn color_choice(choice: proto::ColorChoice) -> Option<ColorChoice> {
    match choice {
        proto::ColorChoice::ChooseWhite => Some(ColorChoice::White),
        proto::ColorChoice::ChooseBlack => Some(ColorChoice::Black),
        proto::ColorChoice::ChooseRandom => Some(ColorChoice::Random),
        proto::ColorChoice::Unspecified => None,
    }
}

/// The level a gRPC field names; `None` when unset.
pub fn level(level: proto::Level) -> Option<Level> {
    match level {
        proto::Level::Easy => Some(Level::Easy),
        proto::Level::Medium => Some(Level::Medium),
        proto::Level::Hard => Some(Level::Hard),
        proto::Level::Unspecified => None,
    }
}

impl From<Level> for proto::Level {
    fn from(level: Level) -> proto::Level {
        match level {
            Level::Easy => proto::Level::Easy,
            Level::Medium => proto::Level::Medium,
            Level::Hard => proto::Level::Hard,
        }
    }
}

impl From<proto::Status> for Status {
    fn from(status: proto::Status) -> Status {
        match status {
            proto::Status::Waiting => Status::Waiting,
            proto::Status::Playing => Status::Playing,
            proto::Status::Ended => Status::Ended,
            proto::Status::Unspecified => Status::Unknown,
        }
    }
}

impl From<proto::EndReason> for EndReason {
    fn from(reason: proto::EndReason) -> EndReason {
        match reason {
            proto::EndReason::Explosion => EndReason::Explosion,
            proto::EndReason::Checkmate => EndReason::Checkmate,
            proto::EndReason::KingCaptured => EndReason::KingCaptured,
            proto::EndReason::Stalemate | proto::EndReason::NoMoves => EndReason::Stalemate,
            proto::EndReason::Threefold => EndReason::Threefold,
            proto::EndReason::FiftyMoves => EndReason::FiftyMoves,
            proto::EndReason::InsufficientMaterial => EndReason::InsufficientMaterial,
            proto::EndReason::Timeout => EndReason::Timeout,
            proto::EndReason::Resign => EndReason::Resign,
            proto::EndReason::Agreement => EndReason::Agreement,
            proto::EndReason::Abandoned => EndReason::Abandoned,
            proto::EndReason::Aborted => EndReason::Aborted,
            proto::EndReason::Unspecified => EndReason::Unknown,
        }
    }
}

/// Whose view a state is; anything but a seat sees the spectators' view.
impl From<proto::Audience> for Viewer {
    fn from(audience: proto::Audience) -> Viewer {
        match audience {
            proto::Audience::WhiteSeat => Viewer::White,
            proto::Audience::BlackSeat => Viewer::Black,
            proto::Audience::Spectators | proto::Audience::Unspecified => Viewer::Spectator,
        }
    }
}

impl From<DrawAction> for proto::OfferAction {
    fn from(action: DrawAction) -> proto::OfferAction {
        match action {
            DrawAction::Offer => proto::OfferAction::Offer,
            DrawAction::Accept => proto::OfferAction::Accept,
            DrawAction::Decline => proto::OfferAction::Decline,
        }
    }
}

impl From<TakebackAction> for proto::OfferAction {
    fn from(action: TakebackAction) -> proto::OfferAction {
        match action {
            TakebackAction::Request => proto::OfferAction::Offer,
            TakebackAction::Accept => proto::OfferAction::Accept,
            TakebackAction::Decline => proto::OfferAction::Decline,
        }
    }
}

/// An offer event's action; an unset action has always been written as a
/// refusal.
impl From<proto::OfferAction> for DrawAction {
    fn from(action: proto::OfferAction) -> DrawAction {
        match action {
            proto::OfferAction::Offer => DrawAction::Offer,
            proto::OfferAction::Accept => DrawAction::Accept,
            proto::OfferAction::Decline | proto::OfferAction::Unspecified => DrawAction::Decline,
        }
    }
}

impl From<proto::OfferAction> for TakebackAction {
    fn from(action: proto::OfferAction) -> TakebackAction {
        match action {
            proto::OfferAction::Offer => TakebackAction::Request,
            proto::OfferAction::Accept => TakebackAction::Accept,
            proto::OfferAction::Decline | proto::OfferAction::Unspecified => TakebackAction::Decline,
        }
    }
}

impl From<proto::ClockSettings> for TimeControl {
    fn from(clock: proto::ClockSettings) -> TimeControl {
        TimeControl { initial_ms: clock.initial_ms, increment_ms: clock.increment_ms }
    }
}

impl From<TimeControl> for proto::ClockSettings {
    fn from(clock: TimeControl) -> proto::ClockSettings {
        proto::ClockSettings { initial_ms: clock.initial_ms, increment_ms: clock.increment_ms }
    }
}

impl From<&proto::ClockState> for Clock {
    fn from(clock: &proto::ClockState) -> Clock {
        Clock { white_ms: clock.white_ms, black_ms: clock.black_ms, running: color(clock.running()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_and_colour_goes_there_and_back() {
        for variant in fogblast_rules::Variant::ALL {
            let wire = Variant::from(variant);
            assert_eq!(wire.rules(), Some(variant));
            assert_eq!(Variant::from(proto::Variant::from(wire)), wire);
            assert_eq!(serde_json::to_value(wire).unwrap(), variant.name());
        }
        assert_eq!(Variant::from(proto::Variant::Unspecified).rules(), None);
        assert_eq!(proto::Variant::from(Variant::Unknown), proto::Variant::Unspecified);
        for color in [Color::White, Color::Black] {
            assert_eq!(self::color(proto::Color::from(color)), Some(color));
            assert_eq!(Color::from(fogblast_rules::Color::from(color)), color);
        }
        assert_eq!(color(proto::Color::Unspecified), None);
    }

    #[test]
    fn offers_and_takebacks_are_one_grpc_action() {
        for action in [DrawAction::Offer, DrawAction::Accept, DrawAction::Decline] {
            assert_eq!(DrawAction::from(proto::OfferAction::from(action)), action);
        }
        for action in [TakebackAction::Request, TakebackAction::Accept, TakebackAction::Decline] {
            assert_eq!(TakebackAction::from(proto::OfferAction::from(action)), action);
        }
        for level in [Level::Easy, Level::Medium, Level::Hard] {
            assert_eq!(self::level(proto::Level::from(level)), Some(level));
        }
        for choice in [ColorChoice::White, ColorChoice::Black, ColorChoice::Random] {
            assert_eq!(color_choice(proto::ColorChoice::from(choice)), Some(choice));
        }
        assert_eq!(color_choice(proto::ColorChoice::Unspecified), None);
    }

    #[test]
    fn unset_values_are_written_as_unknown_and_never_read() {
        assert_eq!(serde_json::to_value(EndReason::from(proto::EndReason::Unspecified)).unwrap(), "unknown");
        assert_eq!(serde_json::to_value(EndReason::from(proto::EndReason::NoMoves)).unwrap(), "stalemate");
        assert_eq!(serde_json::to_value(Status::from(proto::Status::Unspecified)).unwrap(), "unknown");
        assert!("unknown".parse::<Variant>().is_err());
        assert_eq!("fog".parse::<Variant>().unwrap(), Variant::Fog);
    }
}
