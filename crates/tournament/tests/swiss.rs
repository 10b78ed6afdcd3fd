//! The Swiss pairing from the outside: known pairings from published
//! examples, and random tournaments played to the end with every round's
//! pairing checked against the rules by code that shares nothing with the
//! pairing engine.

use fogblast_tournament::swiss::{
    pair_round, record_round, Board, Color, ColorPlayed, Float, GameResult, PairingError, RoundPairing, SwissPlayer,
    SwissSettings,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};

fn field(n: u32) -> Vec<SwissPlayer> {
    (1..=n).map(|i| SwissPlayer::new(format!("p{i:02}"), 2800 - i * 10)).collect()
}

fn boards(pairing: &RoundPairing) -> Vec<(&str, &str)> {
    pairing.boards.iter().map(|b| (b.white.as_str(), b.black.as_str())).collect()
}

/// Round 1 as the handbook prescribes it (C.04.3, Article 5.2.5 with the
/// initial colour, and top half against bottom half): 1-6, 7-2, 3-8, 9-4,
/// 5-10 when player 1 has White.
#[test]
fn round_one_pairs_top_half_against_bottom_half() {
    let players = field(10);
    let pairing = pair_round(&players, 1, 5, &SwissSettings::default()).unwrap();
    assert_eq!(boards(&pairing), [("p01", "p06"), ("p07", "p02"), ("p03", "p08"), ("p09", "p04"), ("p05", "p10")]);
    assert_eq!(pairing.bye, None);
    let black_first = SwissSettings { initial_color: Color::Black, ..SwissSettings::default() };
    let pairing = pair_round(&players, 1, 5, &black_first).unwrap();
    assert_eq!(boards(&pairing)[0], ("p06", "p01"));
    assert_eq!(boards(&pairing)[1], ("p02", "p07"));
}

#[test]
fn odd_count_gives_the_lowest_ranked_the_bye() {
    let players = field(7);
    let pairing = pair_round(&players, 1, 5, &SwissSettings::default()).unwrap();
    assert_eq!(pairing.bye.as_deref(), Some("p07"));
    assert_eq!(boards(&pairing), [("p01", "p04"), ("p05", "p02"), ("p03", "p06")]);
    assert_eq!(pairing.floats, [("p07".to_string(), Float::Down)]);
}

/// Pairing ids and ratings in the examples below: player `k` is "p0k".
fn player(k: u32, points_x2: u32, history: &[(u32, ColorPlayed)]) -> SwissPlayer {
    SwissPlayer {
        points_x2,
        colors: history.iter().map(|&(_, c)| c).collect(),
        opponents: history.iter().filter(|(o, _)| *o > 0).map(|(o, _)| format!("p{o:02}")).collect(),
        floats: vec![Float::None; history.len()],
        ..SwissPlayer::new(format!("p{k:02}"), 2800 - k * 10)
    }
}

/// bbpPairings' regression tournament `test/tests/dutch_2025_C5` (six
/// players, round 3; player 4 absent). Expected output there: 1-5, 3-2,
/// bye to 6. The top bracket could pair 1-3, but that would leave 2 and 5
/// (who met in round 1) unpairable, so completion (C4) floats 1 and 3 down.
#[test]
fn completion_floats_the_top_bracket_down() {
    use ColorPlayed::{Black as B, White as W};
    let mut players = vec![
        player(1, 4, &[(4, W), (2, B)]),
        player(2, 2, &[(5, B), (1, W)]),
        player(3, 4, &[(6, W), (4, B)]),
        player(4, 0, &[(1, B), (3, W)]),
        player(5, 2, &[(2, W), (6, B)]),
        player(6, 0, &[(3, B), (5, W)]),
    ];
    players[2].floats[1] = Float::Down;
    players[3].floats[1] = Float::Up;
    players[3].withdrawn = true;
    let pairing = pair_round(&players, 3, 5, &SwissSettings::default()).unwrap();
    assert_eq!(boards(&pairing), [("p01", "p05"), ("p03", "p02")]);
    assert_eq!(pairing.bye.as_deref(), Some("p06"));
    assert_eq!(pairing.not_paired, ["p04"]);
}

/// bbpPairings' regression tournament `test/tests/dutch_2025_C9` (five
/// players, round 2; player 5 missed round 1 with a zero-point bye).
/// Expected output there: 2-1, 3-5, bye to 4: the bye skips the player who
/// already sat a round out.
#[test]
fn the_bye_skips_a_player_who_already_missed_a_round() {
    use ColorPlayed::{Absent, Black as B, White as W};
    let players = vec![
        player(1, 2, &[(3, W)]),
        player(2, 2, &[(4, B)]),
        player(3, 0, &[(1, B)]),
        player(4, 0, &[(2, W)]),
        player(5, 0, &[(0, Absent)]),
    ];
    let pairing = pair_round(&players, 2, 3, &SwissSettings::default()).unwrap();
    assert_eq!(boards(&pairing), [("p02", "p01"), ("p03", "p05")]);
    assert_eq!(pairing.bye.as_deref(), Some("p04"));
}

#[test]
fn colours_alternate_and_absolute_preferences_never_meet() {
    use ColorPlayed::{Black as B, White as W};
    // p01 and p02 both had White twice: they must not meet; each gets Black.
    let players = vec![
        player(1, 4, &[(5, W), (3, W)]),
        player(2, 4, &[(6, W), (4, W)]),
        player(3, 2, &[(7, B), (1, B)]),
        player(4, 2, &[(8, B), (2, B)]),
    ];
    let pairing = pair_round(&players, 3, 5, &SwissSettings::default()).unwrap();
    let got = boards(&pairing);
    assert!(!got.contains(&("p01", "p02")) && !got.contains(&("p02", "p01")), "{got:?}");
    assert!(got.contains(&("p03", "p01")) || got.contains(&("p04", "p01")), "{got:?}");
}

#[test]
fn late_joiner_and_zero_point_bye() {
    let settings = SwissSettings::default();
    let mut players = field(6);
    let first = pair_round(&players, 1, 4, &settings).unwrap();
    record_round(&mut players, &first, &[GameResult::WhiteWins; 3]).unwrap();
    players.push(SwissPlayer::late_joiner("late", 2900, 2, &settings));
    assert_eq!(players[6].colors, [ColorPlayed::Absent]);
    assert_eq!(players[6].points_x2, 0);
    let second = pair_round(&players, 2, 4, &settings).unwrap();
    // Seven players: the late joiner has 0 points and the best rating, so
    // the bye goes to the lowest-ranked zero-scorer instead.
    let bye = second.bye.clone().unwrap();
    assert_ne!(bye, "late");
    assert!(players.iter().any(|p| p.id == bye && p.points_x2 == 0));
    assert!(second.boards.iter().any(|b| b.white == "late" || b.black == "late"));
}

#[test]
fn bad_input_is_refused() {
    let settings = SwissSettings::default();
    let players = field(4);
    assert!(matches!(pair_round(&players, 0, 5, &settings), Err(PairingError::RoundOutOfRange { .. })));
    assert!(matches!(pair_round(&players, 2, 5, &settings), Err(PairingError::HistoryLength { .. })));
    let mut twice = field(3);
    twice.push(twice[0].clone());
    assert!(matches!(pair_round(&twice, 1, 5, &settings), Err(PairingError::DuplicatePlayer(_))));
    let two = field(2);
    let mut two_played = two.clone();
    let first = pair_round(&two, 1, 3, &settings).unwrap();
    record_round(&mut two_played, &first, &[GameResult::Draw]).unwrap();
    assert_eq!(pair_round(&two_played, 2, 3, &settings), Err(PairingError::Impossible { round: 2 }));
}

// ---- Random tournaments, checked by an independent referee. ----

/// The rules' limits, recomputed from the records without the engine.
struct Referee<'a> {
    players: &'a [SwissPlayer],
    round: u32,
    rounds_total: u32,
}

impl Referee<'_> {
    fn played(&self, p: &SwissPlayer) -> Vec<ColorPlayed> {
        p.colors.iter().copied().filter(|c| matches!(c, ColorPlayed::White | ColorPlayed::Black)).collect()
    }

    fn topscorer(&self, p: &SwissPlayer) -> bool {
        self.round == self.rounds_total && p.points_x2 > self.round - 1
    }

    /// The colour a player must get, if any: after two of a colour in a
    /// row or a difference of two.
    fn forced(&self, p: &SwissPlayer) -> Option<ColorPlayed> {
        let played = self.played(p);
        let diff: i32 = played.iter().map(|c| if *c == ColorPlayed::White { 1 } else { -1 }).sum();
        let n = played.len();
        if diff >= 2 || (n >= 2 && played[n - 1] == ColorPlayed::White && played[n - 2] == ColorPlayed::White) {
            Some(ColorPlayed::Black)
        } else if diff <= -2 || (n >= 2 && played[n - 1] == ColorPlayed::Black && played[n - 2] == ColorPlayed::Black) {
            Some(ColorPlayed::White)
        } else {
            None
        }
    }

    fn may_meet(&self, a: &SwissPlayer, b: &SwissPlayer) -> bool {
        let rematch = a.opponents.contains(&b.id);
        let clash = self.forced(a).is_some() && self.forced(a) == self.forced(b);
        let exempt = self.topscorer(a) || self.topscorer(b);
        !rematch && (!clash || exempt)
    }

    /// Whether `ids` can all be paired: `Some(answer)`, or `None` when the
    /// search is too long to be worth it in a test.
    fn pairable(&self, ids: &[&SwissPlayer]) -> Option<bool> {
        let n = ids.len();
        if !n.is_multiple_of(2) {
            return Some(false);
        }
        let ok: Vec<Vec<bool>> =
            ids.iter().map(|a| ids.iter().map(|b| a.id != b.id && self.may_meet(a, b)).collect()).collect();
        let mut failed = HashSet::new();
        let mut nodes = 0u32;
        search((1u128 << n) - 1, &ok, &mut failed, &mut nodes)
    }
}

fn search(left: u128, ok: &[Vec<bool>], failed: &mut HashSet<u128>, nodes: &mut u32) -> Option<bool> {
    if left == 0 {
        return Some(true);
    }
    if failed.contains(&left) {
        return Some(false);
    }
    *nodes += 1;
    if *nodes > 200_000 {
        return None;
    }
    let a = left.trailing_zeros() as usize;
    for b in a + 1..ok.len() {
        if left & (1 << b) != 0 && ok[a][b] && search(left & !(1 << a) & !(1 << b), ok, failed, nodes)? {
            return Some(true);
        }
    }
    failed.insert(left);
    Some(false)
}

/// Checks one round's pairing; `Err` carries what was broken.
fn check_round(referee: &Referee<'_>, pairing: &RoundPairing) -> Result<(), String> {
    let by_id: HashMap<&str, &SwissPlayer> = referee.players.iter().map(|p| (p.id.as_str(), p)).collect();
    let active: Vec<&SwissPlayer> = referee.players.iter().filter(|p| !p.withdrawn).collect();
    let mut seen = HashSet::new();
    for Board { white, black } in &pairing.boards {
        let (w, b) = (by_id[white.as_str()], by_id[black.as_str()]);
        for p in [w, b] {
            if p.withdrawn || !seen.insert(p.id.as_str()) {
                return Err(format!("{} paired twice or while withdrawn", p.id));
            }
        }
        if !referee.may_meet(w, b) {
            return Err(format!("{white}-{black} breaks an absolute criterion"));
        }
        let exempt = referee.topscorer(w) || referee.topscorer(b);
        for (p, got) in [(w, ColorPlayed::White), (b, ColorPlayed::Black)] {
            if referee.forced(p).is_some_and(|f| f != got) && !exempt {
                return Err(format!("{} gets a third colour in a row or a difference beyond 2", p.id));
            }
        }
    }
    if let Some(bye) = &pairing.bye {
        let p = by_id[bye.as_str()];
        if p.withdrawn || !seen.insert(bye.as_str()) {
            return Err(format!("{bye} has the bye and a board"));
        }
        if p.colors.contains(&ColorPlayed::Bye) {
            // Only allowed if no player without a bye could take it.
            for q in active.iter().filter(|q| !q.colors.contains(&ColorPlayed::Bye)) {
                let rest: Vec<&SwissPlayer> = active.iter().copied().filter(|r| r.id != q.id).collect();
                if referee.pairable(&rest) == Some(true) {
                    return Err(format!("{bye} gets a second bye though {} could take it", q.id));
                }
            }
        }
    }
    if seen.len() != active.len() || (pairing.bye.is_some() != (active.len() % 2 == 1)) {
        return Err(format!("{} of {} active players placed", seen.len(), active.len()));
    }
    Ok(())
}

fn random_result(rng: &mut StdRng) -> GameResult {
    match rng.random_range(0..10) {
        0..=3 => GameResult::WhiteWins,
        4..=6 => GameResult::BlackWins,
        _ => GameResult::Draw,
    }
}

/// Plays one random event to its end (or to a round that cannot be paired,
/// which the referee must confirm); returns the rounds paired.
fn play_random_tournament(seed: u64, sizes: std::ops::RangeInclusive<u32>, search_budget: usize) -> u32 {
    let mut rng = StdRng::seed_from_u64(seed);
    let settings = SwissSettings {
        initial_color: if rng.random_bool(0.5) { Color::White } else { Color::Black },
        search_budget,
        ..SwissSettings::default()
    };
    let n = rng.random_range(sizes.clone());
    let rounds_total = if *sizes.end() < 10 { 11 } else { rng.random_range(1..=11) };
    let mut players: Vec<SwissPlayer> =
        (0..n).map(|i| SwissPlayer::new(format!("s{seed}p{i}"), rng.random_range(1000..2800))).collect();
    for round in 1..=rounds_total {
        if round > 1 && rng.random_bool(0.3) {
            let id = format!("s{seed}late{round}");
            players.push(SwissPlayer::late_joiner(id, rng.random_range(1000..2800), round, &settings));
        }
        // Some withdraw for good, some sit one round out.
        let mut sitting_out = Vec::new();
        for p in players.iter_mut().filter(|p| !p.withdrawn) {
            if rng.random_bool(0.02) {
                p.withdrawn = true;
            } else if rng.random_bool(0.03) {
                p.withdrawn = true;
                sitting_out.push(p.id.clone());
            }
        }
        let result = pair_round(&players, round, rounds_total, &settings);
        let mut shuffled = players.clone();
        shuffled.shuffle(&mut rng);
        assert_eq!(
            result,
            pair_round(&shuffled, round, rounds_total, &settings),
            "seed {seed} round {round}: input order matters"
        );
        let referee = Referee { players: &players, round, rounds_total };
        let pairing = match result {
            Ok(pairing) => pairing,
            Err(PairingError::Impossible { .. }) => {
                let active: Vec<&SwissPlayer> = players.iter().filter(|p| !p.withdrawn).collect();
                let possible = if active.len().is_multiple_of(2) {
                    referee.pairable(&active)
                } else {
                    // Any bye will do for this question.
                    let mut any = Some(false);
                    for bye in &active {
                        let rest: Vec<&SwissPlayer> = active.iter().copied().filter(|p| p.id != bye.id).collect();
                        match referee.pairable(&rest) {
                            Some(true) => any = Some(true),
                            None => any = any.and(None),
                            Some(false) => {}
                        }
                    }
                    any
                };
                assert_ne!(possible, Some(true), "seed {seed} round {round}: a valid pairing existed");
                return round - 1;
            }
            Err(other) => panic!("seed {seed} round {round}: {other}"),
        };
        if let Err(broken) = check_round(&referee, &pairing) {
            panic!("seed {seed} round {round}: {broken}\n{pairing:?}");
        }
        let results: Vec<GameResult> = pairing.boards.iter().map(|_| random_result(&mut rng)).collect();
        record_round(&mut players, &pairing, &results).unwrap();
        for p in players.iter_mut().filter(|p| sitting_out.contains(&p.id)) {
            p.withdrawn = false;
        }
    }
    rounds_total
}

#[test]
fn random_tournaments_follow_the_rules() {
    let mut rounds = 0;
    for seed in 0..40 {
        rounds += play_random_tournament(seed, 2..=60, SwissSettings::default().search_budget);
    }
    assert!(rounds > 100, "only {rounds} rounds were paired");
}

/// Small fields run out of opponents: the engine must pair while it can
/// and report `Impossible` (confirmed by the referee) only when it must.
#[test]
fn small_random_tournaments_to_exhaustion() {
    let mut stopped = 0;
    for seed in 1000..1100 {
        stopped += u32::from(play_random_tournament(seed, 2..=9, SwissSettings::default().search_budget) < 11);
    }
    assert!(stopped > 0, "no small event ran out of pairings");
}

/// With almost no search budget every bracket falls back to the greedy
/// completion: the pairing is plainer but must still keep every rule.
#[test]
fn the_fallback_keeps_the_rules() {
    for seed in 2000..2010 {
        play_random_tournament(seed, 2..=40, 1);
    }
}

/// A hand-worked round 2: winners 1, 2, 3 and losers 4, 5, 6 of round 1
/// (1-4, 5-2, 3-6). The top bracket pairs 1 and 2 (both colour wishes
/// granted) and floats 3, the lowest; 3 is paired first in the next bracket
/// with 4 (not 6, whom 3 has met), and 5-6 are the remainder.
#[test]
fn the_downfloater_is_paired_first_below() {
    use ColorPlayed::{Black as B, White as W};
    let players = vec![
        player(1, 2, &[(4, W)]),
        player(2, 2, &[(5, B)]),
        player(3, 2, &[(6, W)]),
        player(4, 0, &[(1, B)]),
        player(5, 0, &[(2, W)]),
        player(6, 0, &[(3, B)]),
    ];
    let pairing = pair_round(&players, 2, 5, &SwissSettings::default()).unwrap();
    assert_eq!(boards(&pairing), [("p02", "p01"), ("p04", "p03"), ("p06", "p05")]);
    assert_eq!(pairing.floats, [("p03".to_string(), Float::Down), ("p04".to_string(), Float::Up)]);
}

/// Two leaders who both need White may meet in the last round (C3 spares
/// topscorers), one of them taking a third Black; a round earlier, or with
/// the exception turned off, that pairing is refused.
#[test]
fn topscorers_may_break_colour_limits_in_the_last_round_only() {
    use ColorPlayed::{Black as B, White as W};
    let players = vec![
        player(1, 7, &[(3, W), (4, W), (9, B), (10, B)]),
        player(2, 7, &[(3, W), (4, W), (11, B), (12, B)]),
        player(3, 2, &[(1, B), (2, B), (13, W), (14, W)]),
        player(4, 2, &[(1, B), (2, W), (15, B), (16, W)]),
    ];
    let settings = SwissSettings::default();
    let last = pair_round(&players, 5, 5, &settings).unwrap();
    assert_eq!(boards(&last), [("p01", "p02"), ("p04", "p03")]);
    assert_eq!(pair_round(&players, 5, 6, &settings), Err(PairingError::Impossible { round: 5 }));
    let strict = SwissSettings { topscorer_exception: false, ..settings };
    assert_eq!(pair_round(&players, 5, 5, &strict), Err(PairingError::Impossible { round: 5 }));
}

/// A hand-worked round 2 of eight players: round 1 was 1-5, 6-2, 3-7, 8-4
/// and the higher-rated won every game. In the top bracket 1 and 3 (who had
/// White) want Black, 2 and 4 want White: the first candidate 1-3, 2-4
/// leaves two players without their colour, the next transposition 1-4,
/// 2-3 leaves nobody, so it is taken.
#[test]
fn a_transposition_grants_every_colour_preference() {
    use ColorPlayed::{Black as B, White as W};
    let players = vec![
        player(1, 2, &[(5, W)]),
        player(2, 2, &[(6, B)]),
        player(3, 2, &[(7, W)]),
        player(4, 2, &[(8, B)]),
        player(5, 0, &[(1, B)]),
        player(6, 0, &[(2, W)]),
        player(7, 0, &[(3, B)]),
        player(8, 0, &[(4, W)]),
    ];
    let pairing = pair_round(&players, 2, 5, &SwissSettings::default()).unwrap();
    assert_eq!(boards(&pairing), [("p04", "p01"), ("p02", "p03"), ("p05", "p08"), ("p07", "p06")]);
}
