//! The engine the page runs offline is the server's engine: the embedded
//! WebAssembly build, run under Node.js, answers a fixed set of positions
//! at a fixed depth with exactly the native build's move, score and node
//! count, and its levels pick the same moves.

use fogblast_gateway::web;
use serde_json::{json, Value};

const POSITIONS: [(&str, &str); 8] = [
    ("atomic", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    ("atomic", "rn1qkb1r/p5pp/2p5/3p4/N3P3/5P2/PPP4P/R1BQK3 w Qkq - 0 1"),
    ("atomic", "r1bqkbnr/pppp1ppp/2n1p3/8/8/2N1P3/PPPP1PPP/R1BQKBNR w KQkq - 0 3"),
    ("atomic", "8/5k2/3p4/1p1Pp2p/pP2Pp1P/P4P1K/8/8 b - - 0 1"),
    ("atomic", "rnbqkb1r/pppppppp/5n2/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 2 2"),
    ("standard", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    ("standard", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
    ("standard", "r1bq1rk1/pp2bppp/2n2n2/3p4/3P4/2NB1N2/PP3PPP/R1BQ1RK1 w - - 0 10"),
];

/// The embedded module's answers to `requests`, run under Node.js.
fn wasm_answers(requests: &[Value]) -> Vec<Value> {
    let asset = web::lookup("offline/fogblast.wasm").expect("the gateway embeds the browser engine");
    assert_eq!(&asset.bytes[..4], b"\0asm", "the embedded engine is a WebAssembly module");
    let answers = fogblast_wasm::node::run_module(asset.bytes, requests).expect("node runs the module");
    answers.into_iter().map(|timed| timed.answer).collect()
}

fn native(request: &Value) -> Value {
    serde_json::from_str(&fogblast_wasm::handle(&request.to_string())).expect("native answers are JSON")
}

#[test]
fn wasm_and_native_search_alike_at_a_fixed_depth() {
    let requests: Vec<Value> = POSITIONS
        .iter()
        .map(|(variant, fen)| json!({ "op": "search", "variant": variant, "fen": fen, "depth": 5 }))
        .collect();
    let answers = wasm_answers(&requests);
    for (request, answer) in requests.iter().zip(&answers) {
        let expected = native(request);
        assert_eq!(expected["ok"], true, "{request} → {expected}");
        assert!(expected["nodes"].as_u64().unwrap() > 100, "a real search: {expected}");
        assert_eq!(answer, &expected, "wasm and native differ on {request}");
    }
}

#[test]
fn wasm_and_native_levels_pick_the_same_moves() {
    // Easy and Medium stop on depth and node caps long before their time
    // caps, so with the same seed both builds must agree move for move.
    let mut requests = Vec::new();
    for level in ["easy", "medium"] {
        for (seed, moves) in [(1, json!([])), (2, json!(["e2e4", "e7e6"])), (3, json!(["g1f3", "d7d5", "f3e5"]))] {
            requests.push(json!({ "op": "best", "variant": "atomic", "moves": moves, "level": level, "seed": seed }));
        }
    }
    let answers = wasm_answers(&requests);
    for (request, answer) in requests.iter().zip(&answers) {
        let expected = native(request);
        assert_eq!(expected["ok"], true, "{request} → {expected}");
        assert_eq!(answer["uci"], expected["uci"], "{request}: wasm {answer} native {expected}");
    }
}

#[test]
fn the_wasm_build_refuses_bad_requests_without_trapping() {
    let requests = vec![
        json!({ "op": "position", "variant": "atomic", "moves": ["e2e5"] }),
        json!({ "op": "nonsense" }),
        json!({ "op": "search", "variant": "standard", "fen": "8/8/8/8/8/8/8/8 w - - 0 1", "depth": 3 }),
        json!({ "op": "position", "variant": "atomic", "moves": ["e2e4"] }),
    ];
    let answers = wasm_answers(&requests);
    for answer in &answers[..3] {
        assert_eq!(answer["ok"], false, "{answer}");
    }
    // The module still answers after the refusals.
    assert_eq!(answers[3], native(&requests[3]));
}
