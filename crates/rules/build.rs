//! Generates the slider attack tables at build time: a magic multiplier for
//! every square and piece, and the shared table they index. Searching for the
//! magics here keeps them out of the source and makes the tables `static`
//! data, so the move generator never pays for lazy initialisation.

use std::fmt::Write as _;
use std::{env, fs, path::Path};

const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn sliding_attacks(sq: usize, occupied: u64, dirs: &[(i32, i32); 4]) -> u64 {
    let mut attacks = 0;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i32, (sq / 8) as i32);
        loop {
            f += df;
            r += dr;
            if !(0..8).contains(&f) || !(0..8).contains(&r) {
                break;
            }
            let bit = 1u64 << (r * 8 + f);
            attacks |= bit;
            if occupied & bit != 0 {
                break;
            }
        }
    }
    attacks
}

/// Squares whose occupancy can change the attacks: the rays without their
/// last square.
fn relevant_mask(sq: usize, dirs: &[(i32, i32); 4]) -> u64 {
    let mut mask = 0;
    for &(df, dr) in dirs {
        let (mut f, mut r) = ((sq % 8) as i32, (sq / 8) as i32);
        loop {
            let (nf, nr) = (f + df, r + dr);
            if !(0..8).contains(&(nf + df)) || !(0..8).contains(&(nr + dr)) {
                break;
            }
            f = nf;
            r = nr;
            mask |= 1u64 << (r * 8 + f);
        }
    }
    mask
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

struct Found {
    mask: u64,
    factor: u64,
    shift: u32,
    table: Vec<u64>,
}

fn find_magic(sq: usize, dirs: &[(i32, i32); 4], rng: &mut XorShift) -> Found {
    let mask = relevant_mask(sq, dirs);
    let bits = mask.count_ones();
    let shift = 64 - bits;
    // Every subset of the mask (Carry-Rippler enumeration) with its attacks.
    let mut subsets = Vec::with_capacity(1 << bits);
    let mut subset = 0u64;
    loop {
        subsets.push((subset, sliding_attacks(sq, subset, dirs)));
        subset = subset.wrapping_sub(mask) & mask;
        if subset == 0 {
            break;
        }
    }
    let mut table = vec![0u64; 1 << bits];
    let mut used = vec![0u32; 1 << bits];
    for attempt in 1u32.. {
        let factor = rng.sparse();
        if (mask.wrapping_mul(factor) >> 56).count_ones() < 6 {
            continue;
        }
        let ok = subsets.iter().all(|&(occ, attacks)| {
            let index = (occ.wrapping_mul(factor) >> shift) as usize;
            if used[index] != attempt {
                used[index] = attempt;
                table[index] = attacks;
                true
            } else {
                table[index] == attacks
            }
        });
        if ok {
            return Found { mask, factor, shift, table };
        }
    }
    unreachable!("the attempt counter is unbounded")
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut out = String::new();
    let mut attacks: Vec<u64> = Vec::new();
    for (name, dirs) in [("ROOK_MAGICS", &ROOK_DIRS), ("BISHOP_MAGICS", &BISHOP_DIRS)] {
        writeln!(out, "pub(crate) static {name}: [Magic; 64] = [").unwrap();
        for sq in 0..64 {
            let found = find_magic(sq, dirs, &mut rng);
            writeln!(
                out,
                "    Magic {{ mask: {:#x}, factor: {:#x}, shift: {}, offset: {} }},",
                found.mask,
                found.factor,
                found.shift,
                attacks.len()
            )
            .unwrap();
            attacks.extend_from_slice(&found.table);
        }
        writeln!(out, "];").unwrap();
    }
    writeln!(out, "pub(crate) static SLIDER_ATTACKS: [u64; {}] = [", attacks.len()).unwrap();
    for chunk in attacks.chunks(8) {
        out.push_str("   ");
        for a in chunk {
            write!(out, " {a:#x},").unwrap();
        }
        out.push('\n');
    }
    writeln!(out, "];").unwrap();
    let path = Path::new(&env::var("OUT_DIR").unwrap()).join("magics.rs");
    fs::write(path, out).unwrap();
}
