//! Any text a client may send, through the one parser the gateway uses: it
//! never panics; a frame it reads writes back as one that reads the same;
//! a refusal names a code of the protocol; an id found for an error reply
//! is one the protocol allows.

#![no_main]

use fogblast_protocol::{Id, MAX_ID_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(Id::Text(id)) = fogblast_protocol::id_of(text) {
        assert!(id.len() <= MAX_ID_BYTES, "an id over the limit: {id:?}");
    }
    match fogblast_protocol::parse(text) {
        Ok(request) => {
            let written = serde_json::to_string(&request).expect("a frame writes");
            let again = fogblast_protocol::parse(&written).expect("a frame written by the protocol reads back");
            assert_eq!(again, request, "{text:?} -> {written:?}");
        }
        Err(refused) => {
            assert!(!refused.message.is_empty());
            assert!(matches!(refused.code.as_ws_code(), "bad_request" | "unknown_type"), "{refused:?}");
        }
    }
});
