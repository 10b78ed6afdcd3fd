//! Embeds the web client: every file under `web/` becomes an entry of a
//! generated table of `include_bytes!`, with its ETag computed here, so the
//! binary serves the page with nothing to read or build at run time.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

#[path = "build_wasm.rs"]
mod build_wasm;

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("web");
    // A directory is watched whole: any file added, changed or removed under it.
    println!("cargo:rerun-if-changed=web");
    let mut files = Vec::new();
    if root.is_dir() {
        collect(&root, &root, &mut files);
    }
    // The rules and the computer player, compiled for offline games in the page.
    let workspace = root.ancestors().nth(3).expect("the gateway sits two levels below the workspace");
    files.push(("offline/fogblast.wasm".to_owned(), build_wasm::build(workspace)));
    files.push(("offline/fogblast-wasm.js".to_owned(), workspace.join("crates/wasm/js/fogblast-wasm.js")));
    files.sort();
    let mut out = String::from("/// The files of `web/`, by path relative to it.\npub static ASSETS: &[Asset] = &[\n");
    // One version for all files but the service worker, which names it.
    let mut version = Vec::new();
    for (relative, absolute) in &files {
        let bytes = fs::read(absolute).expect("reading a web asset");
        let etag = format!("\"{:016x}\"", fnv1a(&bytes));
        if relative != "sw.js" {
            version.extend_from_slice(etag.as_bytes());
        }
        writeln!(
            out,
            "    Asset {{ path: {relative:?}, etag: {etag:?}, bytes: include_bytes!({:?}) }},",
            absolute.display().to_string()
        )
        .expect("writing to a string");
    }
    out.push_str("];\n");
    writeln!(
        out,
        "/// Changes whenever any file but the service worker does.\npub const ASSETS_VERSION: &str = \"{:016x}\";",
        fnv1a(&version)
    )
    .expect("writing to a string");
    let dest = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("web_assets.rs");
    fs::write(dest, out).expect("writing the asset table");
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let entries = fs::read_dir(dir).expect("reading the web directory");
    for entry in entries {
        let path = entry.expect("reading a web directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        // Editors' swap files, hidden files and the client's own tests stay out.
        if name.starts_with('.') || name.ends_with('~') || (dir == root && name == "tests") {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            let relative = path.strip_prefix(root).expect("under the root").to_string_lossy().replace('\\', "/");
            files.push((relative, path));
        }
    }
}

/// FNV-1a, 64 bits: a stable content hash for ETags, with no dependency.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
