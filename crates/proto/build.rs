//! Generates the gRPC code from `proto/` with the protoc that
//! `protoc-bin-vendored` ships, so a fresh machine needs no protoc of its own.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read when the script runs, not when it is compiled: a script built
    // for one checkout may be reused for another at a different path.
    let proto_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let protos = [
        "engine.proto",
        "game.proto",
        "events.proto",
        "game_record.proto",
        "rating.proto",
        "matchmaker.proto",
        "notices.proto",
    ]
    .map(|name| proto_dir.join(name));
    for proto in &protos {
        println!("cargo:rerun-if-changed={}", proto.display());
    }
    // tonic-build finds protoc through this variable; a build script's
    // environment is its own.
    std::env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?);
    // An encoded event is shared, not copied, by every stream that sends it.
    tonic_build::configure()
        .bytes([".fogblast.game.v1.EncodedWatchEvent.event"])
        .compile_protos(&protos, &[proto_dir])?;
    Ok(())
}
