//! Colour preferences and colour allocation of the Dutch system: the
//! definitions of colour difference and absolute/strong/mild preference
//! (C.04.3 A.6) and the allocation rules of section E, kept apart from the bracket search so both
//! can be read against the handbook on their own.

use serde::{Deserialize, Serialize};

/// A colour a player has or will have in a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Color {
    White,
    Black,
}

impl Color {
    pub fn opposite(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

/// How much a player wants the colour they prefer; the order is the order
/// in which the rules grant a preference over another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Strength {
    None,
    Mild,
    Strong,
    Absolute,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Preference {
    pub color: Option<Color>,
    pub strength: Strength,
}

/// Whites minus blacks over the games actually played.
pub(crate) fn color_difference(played: &[Color]) -> i32 {
    played
        .iter()
        .map(|c| match c {
            Color::White => 1,
            Color::Black => -1,
        })
        .sum()
}

/// The preference that follows from the colours of the games played
/// (unplayed rounds are skipped, as the rules say).
pub(crate) fn preference(played: &[Color]) -> Preference {
    let Some(&last) = played.last() else {
        return Preference { color: None, strength: Strength::None };
    };
    let diff = color_difference(played);
    let same_twice = played.len() >= 2 && played[played.len() - 2] == last;
    let (color, strength) = if diff > 1 {
        (Color::Black, Strength::Absolute)
    } else if diff < -1 {
        (Color::White, Strength::Absolute)
    } else if same_twice {
        (last.opposite(), Strength::Absolute)
    } else if diff == 1 {
        (Color::Black, Strength::Strong)
    } else if diff == -1 {
        (Color::White, Strength::Strong)
    } else {
        (last.opposite(), Strength::Mild)
    };
    Preference { color: Some(color), strength }
}

/// What the allocation needs to know of one side of a board.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<'a> {
    pub played: &'a [Color],
    pub preference: Preference,
    pub pairing_number: u32,
}

/// The colour the higher-ranked player `high` receives against `low`
/// (rules E.1–E.5, in their order: both preferences; the stronger one, or the
/// wider colour difference when both are absolute; alternation from the
/// last round the two had different colours; the higher-ranked player's
/// preference; and with no preference at all, the initial colour by the
/// parity of the higher-ranked player's pairing number).
pub(crate) fn allocate(high: Side<'_>, low: Side<'_>, initial: Color) -> Color {
    let (hp, lp) = (high.preference, low.preference);
    match (hp.color, lp.color) {
        (Some(h), Some(l)) if h != l => return h,
        (Some(h), None) => return h,
        (None, Some(l)) => return l.opposite(),
        (None, None) => return initial_for(high.pairing_number, initial),
        _ => {}
    }
    let wanted = hp.color.unwrap_or(initial);
    if hp.strength != lp.strength {
        return if hp.strength > lp.strength { wanted } else { wanted.opposite() };
    }
    if hp.strength == Strength::Absolute {
        let (hd, ld) = (color_difference(high.played).abs(), color_difference(low.played).abs());
        if hd != ld {
            return if hd > ld { wanted } else { wanted.opposite() };
        }
    }
    let last_different = high.played.iter().rev().zip(low.played.iter().rev()).find(|(h, l)| h != l);
    if let Some((&h, _)) = last_different {
        return h.opposite();
    }
    wanted
}

fn initial_for(pairing_number: u32, initial: Color) -> Color {
    if pairing_number % 2 == 1 {
        initial
    } else {
        initial.opposite()
    }
}

/// Whether taking `next` would give the player a colour difference beyond
/// ±2 or the same colour three times in a row: what the absolute criteria
/// forbid for everyone but topscorers in the last round.
pub(crate) fn breaks_colour_limits(played: &[Color], next: Color) -> bool {
    let diff = color_difference(played) + if next == Color::White { 1 } else { -1 };
    let n = played.len();
    let three = n >= 2 && played[n - 1] == next && played[n - 2] == next;
    diff.abs() > 2 || three
}

#[cfg(test)]
mod tests {
    use super::*;
    use Color::{Black as B, White as W};

    fn side(played: &[Color], pairing_number: u32) -> Side<'_> {
        Side { played, preference: preference(played), pairing_number }
    }

    #[test]
    fn preferences_follow_the_definitions() {
        assert_eq!(preference(&[]).strength, Strength::None);
        assert_eq!(preference(&[W]), Preference { color: Some(B), strength: Strength::Strong });
        assert_eq!(preference(&[W, B]), Preference { color: Some(W), strength: Strength::Mild });
        assert_eq!(preference(&[B, W, W]), Preference { color: Some(B), strength: Strength::Absolute });
        assert_eq!(preference(&[W, B, W, W, B, W]), Preference { color: Some(B), strength: Strength::Absolute });
        assert_eq!(preference(&[B, B, W]), Preference { color: Some(W), strength: Strength::Strong });
    }

    #[test]
    fn allocation_rules_in_order() {
        // Both preferences granted.
        assert_eq!(allocate(side(&[B], 2), side(&[W], 1), W), W);
        // The stronger preference wins even for the lower-ranked player.
        assert_eq!(allocate(side(&[W, B], 1), side(&[B], 2), W), B);
        // Equal strength: alternate from the last round they differed.
        assert_eq!(allocate(side(&[B, W, W, B, W, B], 1), side(&[W, B, W, B, W, B], 2), W), B);
        // Identical histories: the higher-ranked player's preference.
        assert_eq!(allocate(side(&[B, W], 3), side(&[B, W], 1), W), B);
        // No history at all: the initial colour by pairing-number parity.
        assert_eq!(allocate(side(&[], 1), side(&[], 6), W), W);
        assert_eq!(allocate(side(&[], 2), side(&[], 7), W), B);
        assert_eq!(allocate(side(&[], 2), side(&[], 7), B), W);
        // Only one has a preference: grant it.
        assert_eq!(allocate(side(&[], 1), side(&[W], 2), W), W);
    }

    #[test]
    fn colour_limits() {
        assert!(breaks_colour_limits(&[W, W], W));
        assert!(breaks_colour_limits(&[W, B, W, W], W));
        assert!(!breaks_colour_limits(&[W, B, W], W));
        assert!(breaks_colour_limits(&[W, B, W, B, W, W, B, W], W));
    }
}
