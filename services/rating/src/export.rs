//! An archived game as PGN: the archive's record turned into the PGN
//! writer's, with lichess's tags and terminations.

use fogblast_pgn::{Eval, GameRecord, GameResult, TimeControl};
use fogblast_proto::engine::PositionEval;
use fogblast_proto::events::FinishedPlayer;
use fogblast_proto::game::EndReason;
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
        // A player who never chose a name is shown as the page shows them;
        // their id goes in a tag of its own.
        Some(_) => "Anonymous".to_owned(),
        None => String::new(),
    }
}

/// `WhitePlayerId` and `BlackPlayerId`: the seats' player ids, which the
/// names do not carry.
fn id_tags(white: Option<&FinishedPlayer>, black: Option<&FinishedPlayer>) -> Vec<(String, String)> {
    [("WhitePlayerId", white), ("BlackPlayerId", black)]
        .into_iter()
        .filter_map(|(tag, p)| p.filter(|p| !p.computer && !p.id.is_empty()).map(|p| (tag.to_owned(), p.id.clone())))
        .collect()
}

fn termination(reason: EndReason) -> &'static str {
    match reason {
        EndReason::Timeout => "Time forfeit",
        EndReason::Abandoned => "Abandoned",
        EndReason::Aborted => "Unterminated",
        _ => "Normal",
    }
}

/// A position's score as PGN writes it; none for a finished position.
fn eval_of(eval: &PositionEval) -> Option<Eval> {
    match (eval.mate, eval.cp) {
        (Some(mate), _) => Some(Eval::Mate(mate)),
        (None, Some(cp)) => Some(Eval::Cp(cp)),
        (None, None) => None,
    }
}

/// The game as PGN; with an analysis (`evals`, one per position, the
/// start first), each move carries the score of the position it led to as
/// `[%eval]`, and the move that ends the game none (its result says it).
pub fn pgn(archived: &ArchivedGame, evals: &[PositionEval]) -> Result<String, String> {
    let game = archived.game.as_ref().ok_or("the archive holds no game")?;
    let variant = fogblast_rules::Variant::try_from(game.variant()).unwrap_or(fogblast_rules::Variant::Standard);
    let standard_start = Position::from_fen(&game.initial_fen, variant)
        .ok()
        .is_some_and(|p| p == Position::from_fen(STARTING_FEN, variant).expect("the start parses"));
    let kind = if game.rated { "Rated" } else { "Casual" };
    let elo = |change: &Option<fogblast_proto::rating::RatingChange>| change.as_ref().map(|c| c.before.round() as u32);
    let record = GameRecord {
        event: format!("{kind} {} game", variant.prose_name()),
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
        evals: evals.iter().skip(1).take(game.moves.len()).map(eval_of).collect(),
        time_control: game
            .clock
            .map(|c| TimeControl { initial_s: c.initial_ms / 1000, increment_s: c.increment_ms / 1000 }),
        termination: termination(game.reason()).to_owned(),
        white_elo: elo(&archived.white_rating),
        black_elo: elo(&archived.black_rating),
        extra_tags: id_tags(game.white.as_ref(), game.black.as_ref()),
    };
    fogblast_pgn::write_game(&record).map_err(|e| format!("game {} cannot be written as PGN: {e}", game.game_id))
}

#[cfg(test)]
mod tests {
    use fogblast_proto::events::GameFinished;
    use fogblast_proto::game::Variant;

    use super::*;

    fn person(id: &str, name: &str) -> FinishedPlayer {
        FinishedPlayer { id: id.into(), name: name.into(), ..Default::default() }
    }

    #[test]
    fn a_player_without_a_name_is_anonymous_with_the_id_in_a_tag_of_its_own() {
        let game = GameFinished {
            game_id: "g1".into(),
            variant: Variant::Atomic as i32,
            initial_fen: STARTING_FEN.into(),
            white: Some(person("ijndniymry9xhlue", "")),
            black: Some(person("p2p2p2p2p2p2p2p", "Magnus")),
            result: "1-0".into(),
            moves: vec!["e2e4".into()],
            ..Default::default()
        };
        let pgn = pgn(&ArchivedGame { game: Some(game), ..Default::default() }, &[]).unwrap();
        assert!(pgn.contains("[White \"Anonymous\"]"), "{pgn}");
        assert!(pgn.contains("[Black \"Magnus\"]"), "{pgn}");
        assert!(pgn.contains("[WhitePlayerId \"ijndniymry9xhlue\"]"), "{pgn}");
        assert!(!pgn.contains("[White \"ijndniymry9xhlue\"]"), "{pgn}");
    }
}
