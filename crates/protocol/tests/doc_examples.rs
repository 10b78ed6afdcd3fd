//! Every frame `docs/protocol.md` shows must be a frame these types read
//! and write back unchanged, so the page and the code cannot drift apart:
//! the ```json blocks, the `A → {...}` / `A ← {...}` lines of the recorded
//! sessions (an arrow names the direction), the HTTP answers written as
//! `404 {...}` and the frames quoted inline as `` `{"t":...}` ``. A frame
//! is compared as a JSON value, so key order and line breaks do not count.

use std::collections::BTreeSet;

use fogblast_protocol::{parse, ClientFrame, ServerFrame};
use serde_json::Value;

const PAGE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/protocol.md"));

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    ToServer,
    ToClient,
    /// A block of the reference: whichever side's frame it is.
    Either,
}

#[derive(Debug)]
struct Example {
    line: usize,
    direction: Direction,
    text: String,
}

/// A transcript line's direction and the text after its arrow.
fn arrow(line: &str) -> Option<(Direction, &str)> {
    let line = line.trim_start();
    let mut chars = line.chars();
    let speaker = chars.next()?;
    if !speaker.is_ascii_uppercase() || chars.next() != Some(' ') {
        return None;
    }
    let rest = chars.as_str();
    if let Some(frame) = rest.strip_prefix("→ ") {
        return Some((Direction::ToServer, frame));
    }
    rest.strip_prefix("← ").map(|frame| (Direction::ToClient, frame))
}

/// An HTTP answer written as its status and its body.
fn http_answer(line: &str) -> Option<&str> {
    let (status, body) = line.split_once(' ')?;
    (status.len() == 3 && status.bytes().all(|b| b.is_ascii_digit()) && body.starts_with('{')).then_some(body)
}

fn examples(page: &str) -> Vec<Example> {
    let lines: Vec<&str> = page.lines().collect();
    let mut examples = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let fence = lines[i].trim();
        if fence == "```json" {
            let start = i + 1;
            let end = start + lines[start..].iter().position(|l| l.trim() == "```").expect("a closed ```json block");
            examples.push(Example {
                line: start + 1,
                direction: Direction::Either,
                text: lines[start..end].join("\n"),
            });
            i = end + 1;
        } else if fence.starts_with("```") {
            let start = i + 1;
            let end = start + lines[start..].iter().position(|l| l.trim() == "```").expect("a closed ``` block");
            let mut j = start;
            while j < end {
                let found = arrow(lines[j])
                    .filter(|(_, frame)| frame.starts_with('{'))
                    .or_else(|| http_answer(lines[j]).map(|body| (Direction::ToClient, body)));
                let Some((direction, first)) = found else {
                    j += 1;
                    continue;
                };
                // A frame goes on over indented lines until it reads as JSON.
                let line = j + 1;
                let mut text = first.to_owned();
                j += 1;
                while serde_json::from_str::<Value>(&text).is_err() && j < end && arrow(lines[j]).is_none() {
                    text.push('\n');
                    text.push_str(lines[j]);
                    j += 1;
                }
                examples.push(Example { line, direction, text });
            }
            i = end + 1;
        } else {
            // Frames quoted in the prose.
            for (k, span) in lines[i].split('`').enumerate() {
                if k % 2 == 1 && span.starts_with("{\"t\"") {
                    examples.push(Example { line: i + 1, direction: Direction::Either, text: span.to_owned() });
                }
            }
            i += 1;
        }
    }
    examples
}

/// Whether `frame` reads as a client's frame and writes back the same.
fn client_round_trip(frame: &Value) -> Result<String, String> {
    let request = parse(&frame.to_string()).map_err(|e| format!("not a client frame: {e}"))?;
    let written = serde_json::to_value(&request).expect("a frame writes");
    if &written == frame {
        Ok(request.frame.kind().to_owned())
    } else {
        Err(format!("as a client frame it writes back as {written}"))
    }
}

/// Whether `frame` reads as a server's frame and writes back the same.
fn server_round_trip(frame: &Value) -> Result<String, String> {
    let read: ServerFrame = serde_json::from_value(frame.clone()).map_err(|e| format!("not a server frame: {e}"))?;
    let written = serde_json::to_value(&read).expect("a frame writes");
    if &written == frame {
        Ok(written["t"].as_str().unwrap_or_default().to_owned())
    } else {
        Err(format!("as a server frame it writes back as {written}"))
    }
}

#[test]
fn every_example_in_the_protocol_page_reads_and_writes_back_unchanged() {
    let examples = examples(PAGE);
    let mut failures = Vec::new();
    let mut client_kinds = BTreeSet::new();
    let mut server_kinds = BTreeSet::new();
    let mut frames = 0;
    for example in &examples {
        let values: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(&example.text).into_iter().collect();
        let values = match values {
            Ok(values) => values,
            Err(e) => {
                failures.push(format!("line {}: not JSON ({e}):\n{}", example.line, example.text));
                continue;
            }
        };
        for value in values {
            // JSON that is not a frame (an HTTP body of another shape).
            if value.get("t").is_none() {
                continue;
            }
            frames += 1;
            let client = client_round_trip(&value);
            let server = server_round_trip(&value);
            let outcome = match example.direction {
                Direction::ToServer => client.map(|kind| client_kinds.insert(kind)),
                Direction::ToClient => server.map(|kind| server_kinds.insert(kind)),
                Direction::Either => match (client, server) {
                    (Ok(kind), _) => Ok(client_kinds.insert(kind)),
                    (_, Ok(kind)) => Ok(server_kinds.insert(kind)),
                    (Err(c), Err(s)) => Err(format!("{c}; {s}")),
                },
            };
            if let Err(why) = outcome {
                failures.push(format!("line {}: {value}\n  {why}", example.line));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {frames} examples do not round-trip:\n{}", failures.len(), failures.join("\n"));

    // The page shows every frame of the protocol at least once.
    let every_client: BTreeSet<String> = ClientFrame::KINDS.iter().map(|k| k.to_string()).collect();
    assert_eq!(client_kinds, every_client, "client frames without an example");
    let every_server: BTreeSet<String> = [
        "welcome",
        "pong",
        "created",
        "joined",
        "state",
        "move",
        "end",
        "draw",
        "takeback",
        "seated",
        "opponent_gone",
        "opponent_back",
        "rematch",
        "chat",
        "berserk",
        "time_given",
        "reconnect",
        "error",
        "seeking",
        "seek_cancelled",
        "paired",
        "lobby",
        "lobby_update",
        "rating",
    ]
    .iter()
    .map(|k| k.to_string())
    .collect();
    assert_eq!(server_kinds, every_server, "server frames without an example");
}

#[test]
fn the_page_is_read_whole() {
    // The extraction itself: a change to the page's layout that hides
    // examples from the test above fails here instead of passing quietly.
    let examples = examples(PAGE);
    let transcript = examples.iter().filter(|e| e.direction != Direction::Either).count();
    assert!(examples.len() >= 60, "only {} examples found", examples.len());
    assert!(transcript >= 15, "only {transcript} transcript frames found");
}
