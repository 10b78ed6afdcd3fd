//! An archived game as PGN: the archive's record turned into the PGN
//! writer's, with lichess's tags and terminations.

use fogblast_pgn::{GameRecord, GameResult, TimeControl};
use fogblast_proto::events::FinishedPlayer;
use fogblast_proto::game::{EndReason, Variant};
use fogblast_proto::rating::ArchivedGame;
use fogblast_rules::{Position, STARTING_FEN};

fn name(player: Option<&FinishedPlayer>) -> String {
    match player {
        Some(p) if p.computer => {
            let level = match p.level {
                1 => "easy",
                2 => "medium",
                _ => "hard",
            };
            format!("Fogblast computer ({level})")
        }
        Some(p) if !p.name.is_empty() => p.name.clone(),
        Some(p) => p.id.clone(),
        None => String::new(),
    }
}

fn termination(reason: EndReason) -> &'static str {
    match reason {
        EndReason::Timeout => "Time forfeit",
        EndReason::Abandoned => "Abandoned",
        EndReason::Aborted => "Unterminated",
        _ => "Normal",
    }
}

pub fn pgn(archived: &ArchivedGame) -> Result<String, String> {
    let game = archived.game.as_ref().ok_or("the archive holds no game")?;
    let variant = match game.variant() {
        Variant::Atomic => fogblast_rules::Variant::Atomic,
        Variant::Fog => fogblast_rules::Variant::Fog,
        _ => fogblast_rules::Variant::Standard,
    };
    let standard_start = Position::from_fen(&game.initial_fen, variant)
        .ok()
        .is_some_and(|p| p == Position::from_fen(STARTING_FEN, variant).expect("the start parses"));
    let kind = if game.rated { "Rated" } else { "Casual" };
    let variant_text = match variant {
        fogblast_rules::Variant::Standard => "standard",
        fogblast_rules::Variant::Atomic => "atomic",
        fogblast_rules::Variant::Fog => "fog of war",
    };
    let elo = |change: &Option<fogblast_proto::rating::RatingChange>| change.as_ref().map(|c| c.before.round() as u32);
    let record = GameRecord {
        event: format!("{kind} {variant_text} game"),
        site: format!("/games/{}", game.game_id),
        started_at_ms: Some(game.started_at_ms.max(game.created_at_ms)),
        white: name(game.white.as_ref()),
        black: name(game.black.as_ref()),
        result: game.result.parse().unwrap_or(GameResult::Unknown),
        variant,
        chess960: game.chess960,
        initial_fen: (!standard_start || game.chess960).then(|| game.initial_fen.clone()),
        moves: game.moves.clone(),
        clocks_ms: game.clock_ms.clone(),
        time_control: game
            .clock
            .map(|c| TimeControl { initial_s: c.initial_ms / 1000, increment_s: c.increment_ms / 1000 }),
        termination: termination(game.reason()).to_owned(),
        white_elo: elo(&archived.white_rating),
        black_elo: elo(&archived.black_rating),
        extra_tags: Vec::new(),
    };
    fogblast_pgn::write_game(&record).map_err(|e| format!("game {} cannot be written as PGN: {e}", game.game_id))
}
