//! New games: a `CreateGame` request checked and turned into the first
//! record, and the record of an agreed rematch. Ids and join codes are made
//! here too.

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{ColorChoice, CreateGameRequest, Level, Player, Status, Variant as WireVariant};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::record::{GameRecord, Seat};
use fogblast_rules::{Color, Fen, Position, Variant};
use rand::Rng;

use crate::clock::{self, LagPolicy};
use crate::record::LiveGame;

/// Join codes avoid characters that read alike (0/O, 1/I/L).
const CODE_ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
/// 31^8 is about 8.5e11 codes: guessing a live one under the gateways'
/// rate limits is futile.
pub const CODE_LEN: usize = 8;
/// Gateways allow 30 characters; this many bytes hold any 30.
pub const MAX_NAME_BYTES: usize = 120;

/// A checked `CreateGame` request.
#[derive(Clone, Debug)]
pub struct NewGame {
    pub player: PlayerId,
    pub name: String,
    pub variant: Variant,
    pub chess960: bool,
    /// The Chess960 position asked for (0..959); `None`: drawn at random.
    pub chess960_position: Option<u32>,
    pub color: ColorChoice,
    pub clock: Option<fogblast_proto::game::ClockSettings>,
    pub computer: Option<Level>,
    pub rated: bool,
    /// The tournament the game is played in; empty for none.
    pub tournament: String,
}

fn bad(message: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::BadRequest, message)
}

impl NewGame {
    pub fn from_request(request: &CreateGameRequest) -> Result<NewGame, ServiceError> {
        let player = PlayerId::parse(&request.player_id).map_err(|e| bad(e.to_string()))?;
        let wire_variant = WireVariant::try_from(request.variant).unwrap_or(WireVariant::Unspecified);
        let variant = Variant::try_from(wire_variant).map_err(|_| bad("variant must be standard, atomic or fog"))?;
        if request.chess960 && !variant.allows_chess960() {
            return Err(bad("Chess960 starting positions are for standard and atomic only"));
        }
        match request.chess960_position {
            Some(_) if !request.chess960 => return Err(bad("a Chess960 position number needs chess960")),
            Some(n) if n >= 960 => return Err(bad("a Chess960 position number is 0 to 959")),
            _ => {}
        }
        let color = match ColorChoice::try_from(request.color) {
            Ok(ColorChoice::Unspecified) | Err(_) => return Err(bad("color must be white, black or random")),
            Ok(color) => color,
        };
        if let Some(settings) = &request.clock {
            clock::validate(settings).map_err(bad)?;
        }
        let computer = if request.computer {
            let level = match Level::try_from(request.level) {
                Ok(Level::Unspecified) | Err(_) => return Err(bad("level must be easy, medium or hard")),
                Ok(level) => level,
            };
            if request.rated {
                return Err(bad("games against the computer are not rated"));
            }
            Some(level)
        } else {
            None
        };
        if request.player_name.len() > MAX_NAME_BYTES {
            return Err(bad(format!("names are at most {MAX_NAME_BYTES} bytes")));
        }
        let tournament = &request.tournament_id;
        if tournament.len() > fogblast_proto::ids::MAX_ID_LEN
            || !tournament.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(bad("a tournament id is letters, digits and dashes"));
        }
        if !tournament.is_empty() && computer.is_some() {
            return Err(bad("tournament games are between people"));
        }
        Ok(NewGame {
            player,
            name: request.player_name.clone(),
            variant,
            chess960: request.chess960,
            chess960_position: request.chess960_position,
            color,
            clock: request.clock,
            computer,
            rated: request.rated,
            tournament: request.tournament_id.clone(),
        })
    }
}

pub fn random_game_id(rng: &mut impl Rng) -> GameId {
    GameId::random(rng)
}

pub fn random_code(rng: &mut impl Rng) -> String {
    random_text(rng, CODE_ALPHABET, CODE_LEN)
}

fn random_text(rng: &mut impl Rng, alphabet: &[u8], len: usize) -> String {
    (0..len).map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())])).collect()
}

/// The rematch of a game has an id derived from the game's, so a rematch
/// agreed twice (or on two shards) names one game.
pub fn rematch_id(game: &str) -> GameId {
    GameId::derived(&format!("rematch:{game}"))
}

fn starting_position(variant: Variant, chess960: bool, number: Option<u32>, rng: &mut impl Rng) -> Position {
    if chess960 {
        let number = number.unwrap_or_else(|| rng.random_range(0..960));
        Position::chess960(number, variant).expect("0..960 are valid Chess960 positions")
    } else {
        Position::new(variant)
    }
}

fn seat(player: Player, settings: Option<&fogblast_proto::game::ClockSettings>) -> Seat {
    Seat {
        player: Some(player),
        remaining_ms: settings.map_or(0, |s| u64::from(s.initial_ms)),
        lag_quota_ms: settings.map_or(0, |s| LagPolicy::for_clock(s).initial_ms),
        gone_since_ms: 0,
        present_until_ms: 0,
        draw_offers: 0,
        takeback_requests: 0,
        presence_reported: false,
        chat_lines: 0,
        berserk: false,
    }
}

fn computer_player(level: Level) -> Player {
    let name = match level {
        Level::Easy => "Computer (easy)",
        Level::Medium => "Computer (medium)",
        _ => "Computer (hard)",
    };
    Player { id: String::new(), name: name.to_owned(), computer: true, level: level as i32 }
}

/// The first record of a new game and the creator's colour.
pub fn new_record(game: &GameId, code: &str, spec: &NewGame, now_ms: u64, rng: &mut impl Rng) -> (GameRecord, Color) {
    let creator_color = match spec.color {
        ColorChoice::ChooseWhite => Color::White,
        ColorChoice::ChooseBlack => Color::Black,
        _ => {
            if rng.random::<bool>() {
                Color::White
            } else {
                Color::Black
            }
        }
    };
    let creator = Player { id: spec.player.to_string(), name: spec.name.clone(), computer: false, level: 0 };
    let other = spec.computer.map_or_else(Player::default, computer_player);
    let (white, black) = if creator_color == Color::White { (creator, other) } else { (other, creator) };
    let position = starting_position(spec.variant, spec.chess960, spec.chess960_position, rng);
    let status = if spec.computer.is_some() { Status::Playing } else { Status::Waiting };
    let record = GameRecord {
        game_id: game.to_string(),
        variant: WireVariant::from(spec.variant) as i32,
        chess960: spec.chess960,
        initial_fen: Fen::from_position(&position).to_string(),
        white: Some(seat(white, spec.clock.as_ref())),
        black: Some(seat(black, spec.clock.as_ref())),
        rated: spec.rated,
        clock: spec.clock,
        code: if spec.computer.is_some() { String::new() } else { code.to_owned() },
        status: status as i32,
        created_at_ms: now_ms,
        started_at_ms: if status == Status::Playing { now_ms } else { 0 },
        turn_started_ms: now_ms,
        seed: rng.random(),
        tournament_id: spec.tournament.clone(),
        ..GameRecord::default()
    };
    (record, creator_color)
}

/// The agreed rematch of a finished game: same settings, colours swapped,
/// both seats taken, a fresh Chess960 position if the game had one.
pub fn rematch_record(old: &LiveGame, game: &GameId, now_ms: u64, rng: &mut impl Rng) -> GameRecord {
    let settings = old.record.clock;
    let player = |c: Color| old.seat(c).player.clone().unwrap_or_default();
    let position = starting_position(old.variant(), old.record.chess960, None, rng);
    GameRecord {
        game_id: game.to_string(),
        variant: old.record.variant,
        chess960: old.record.chess960,
        initial_fen: Fen::from_position(&position).to_string(),
        white: Some(seat(player(Color::Black), settings.as_ref())),
        black: Some(seat(player(Color::White), settings.as_ref())),
        rated: old.record.rated,
        clock: settings,
        status: Status::Playing as i32,
        created_at_ms: now_ms,
        started_at_ms: now_ms,
        turn_started_ms: now_ms,
        seed: rng.random(),
        ..GameRecord::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_ids_use_their_alphabets() {
        let mut rng = rand::rng();
        for _ in 0..100 {
            let code = random_code(&mut rng);
            assert_eq!(code.len(), CODE_LEN);
            assert!(code.bytes().all(|b| CODE_ALPHABET.contains(&b)), "{code}");
            let id = random_game_id(&mut rng);
            assert!(id.as_str().bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()), "{id}");
        }
    }

    #[test]
    fn a_rematch_id_is_fixed_by_its_game_and_differs_between_games() {
        assert_eq!(rematch_id("abc"), rematch_id("abc"));
        assert_ne!(rematch_id("abc"), rematch_id("abd"));
        assert_ne!(rematch_id("abc").as_str(), "abc");
    }

    /// Every board of an Atomic960 Swiss round starts from the position
    /// the round drew: the request's number, not one of the shard's own.
    #[test]
    fn a_chess960_position_asked_for_is_the_one_played() {
        let request = CreateGameRequest {
            player_id: "p1".into(),
            variant: WireVariant::Atomic as i32,
            chess960: true,
            chess960_position: Some(0),
            color: ColorChoice::ChooseWhite as i32,
            ..Default::default()
        };
        let spec = NewGame::from_request(&request).unwrap();
        let mut rng = rand::rng();
        for _ in 0..20 {
            let (record, _) = new_record(&random_game_id(&mut rng), "CODE", &spec, 0, &mut rng);
            // Position 0 of the Scharnagl numbering: bishops, queen, knights, rook king rook.
            assert_eq!(record.initial_fen, "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1");
        }
        let standard = NewGame::from_request(&CreateGameRequest { chess960_position: Some(518), ..request }).unwrap();
        let (record, _) = new_record(&random_game_id(&mut rng), "CODE", &standard, 0, &mut rng);
        assert!(
            record.initial_fen.starts_with("rnbqkbnr/pppppppp"),
            "518 is the standard array: {}",
            record.initial_fen
        );
    }

    #[test]
    fn requests_are_checked() {
        let good = CreateGameRequest {
            player_id: "p1".into(),
            variant: WireVariant::Atomic as i32,
            color: ColorChoice::ChooseRandom as i32,
            ..Default::default()
        };
        assert!(NewGame::from_request(&good).is_ok());
        let fog_computer = CreateGameRequest {
            variant: WireVariant::Fog as i32,
            computer: true,
            level: Level::Hard as i32,
            ..good.clone()
        };
        assert_eq!(NewGame::from_request(&fog_computer).unwrap().computer, Some(Level::Hard));
        let cases = [
            CreateGameRequest { player_id: String::new(), ..good.clone() },
            CreateGameRequest { variant: 0, ..good.clone() },
            CreateGameRequest { variant: WireVariant::Fog as i32, chess960: true, ..good.clone() },
            CreateGameRequest { color: 0, ..good.clone() },
            CreateGameRequest {
                clock: Some(fogblast_proto::game::ClockSettings { initial_ms: 30_000, increment_ms: 0 }),
                ..good.clone()
            },
            CreateGameRequest { computer: true, level: 0, ..good.clone() },
            CreateGameRequest { computer: true, level: Level::Easy as i32, rated: true, ..good.clone() },
            CreateGameRequest { chess960_position: Some(518), ..good.clone() },
            CreateGameRequest { chess960: true, chess960_position: Some(960), ..good.clone() },
        ];
        for case in cases {
            let error = NewGame::from_request(&case).unwrap_err();
            assert_eq!(error.code, ErrorCode::BadRequest, "{case:?}");
        }
    }
}
