//! The web client, embedded in the binary: `build.rs` turns every file
//! under `web/` into a table of bytes, and these routes serve it. `/` and
//! invite links `/g/{code}` answer the page; `/assets/{*path}` answers its
//! scripts, styles and images with their content type and an ETag, so a
//! browser revalidates cheaply and never runs stale code after an upgrade.

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    pub path: &'static str,
    pub etag: &'static str,
    pub bytes: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));

/// The page every browser route answers.
const PAGE: &str = "index.html";
/// The service worker's template, served at `/sw.js`.
const SERVICE_WORKER: &str = "sw.js";

/// The page's content security policy: everything from this origin; inline
/// styles only for the SVG art and the positions set from script.
const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' ws: wss:; \
                   img-src 'self' data:; \
                   style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/// The page: `/` and invite links.
pub fn page_routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route("/", get(page)).route("/g/{code}", get(page))
}

/// The page's files: its scripts, styles and images, and the service worker.
pub fn file_routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route("/assets/{*path}", get(asset)).route("/sw.js", get(service_worker))
}

/// The most file requests one page load makes: every embedded file twice
/// (the page's own requests, then the service worker's offline copy) and
/// the service worker itself.
pub fn files_per_page_load() -> u32 {
    u32::try_from(2 * ASSETS.len() + 1).unwrap_or(u32::MAX)
}

/// The embedded file at `path` (relative to `web/`).
pub fn lookup(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}

pub fn content_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
    match extension.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "json" | "webmanifest" => "application/json",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "wasm" => "application/wasm",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

async fn page(headers: HeaderMap) -> Response {
    match lookup(PAGE) {
        Some(asset) => serve(asset, &headers),
        None => (StatusCode::NOT_FOUND, "this gateway was built without its web page").into_response(),
    }
}

/// The service worker, at the root so that it may keep every page route
/// for offline play: `web/sw.js` with the list of embedded files and a
/// version that changes whenever any of them does.
async fn service_worker() -> Response {
    static BODY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let body = BODY.get_or_init(|| {
        let paths: Vec<String> =
            ASSETS.iter().filter(|a| a.path != SERVICE_WORKER).map(|a| format!("/assets/{}", a.path)).collect();
        let template = lookup(SERVICE_WORKER).map_or("", |a| std::str::from_utf8(a.bytes).unwrap_or_default());
        template
            .replace("__VERSION__", ASSETS_VERSION)
            .replace("__ASSETS__", &serde_json::to_string(&paths).unwrap_or_else(|_| "[]".into()))
    });
    if body.is_empty() {
        return (StatusCode::NOT_FOUND, "this gateway was built without its service worker").into_response();
    }
    let mut response = body.clone().into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    match lookup(&path) {
        Some(asset) => serve(asset, &headers),
        None => (StatusCode::NOT_FOUND, format!("no asset {path}")).into_response(),
    }
}

fn serve(asset: &'static Asset, headers: &HeaderMap) -> Response {
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == asset.etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = asset.bytes.into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(asset.path)));
        response
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, HeaderValue::from_static(asset.etag));
    // Revalidate every time: a 304 is cheap, and a new binary's code is used at once.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if asset.path == PAGE {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
        headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    }
    response
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use super::*;

    /// A GET over a real socket: the status line and the headers, lowercased, and the body.
    fn get(addr: std::net::SocketAddr, path: &str, extra: &str) -> (String, String, Vec<u8>) {
        let mut stream = TcpStream::connect(addr).expect("connecting");
        write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n{extra}\r\n").expect("writing");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("reading");
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a header block");
        let head = String::from_utf8_lossy(&raw[..split]).to_string();
        let (status, headers) = head.split_once("\r\n").unwrap_or((&head, ""));
        (status.to_string(), headers.to_ascii_lowercase(), raw[split + 4..].to_vec())
    }

    fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
        headers.lines().find_map(|line| line.strip_prefix(&format!("{name}: ")))
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn serves_the_page_and_every_asset_with_its_content_type() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binding");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move { axum::serve(listener, page_routes::<()>().merge(file_routes())).await });

        let checked = tokio::task::spawn_blocking(move || {
            for path in ["/", "/g/2Y3FFY65"] {
                let (status, headers, body) = get(addr, path, "");
                assert!(status.ends_with("200 OK"), "{path}: {status}");
                assert_eq!(header(&headers, "content-type"), Some("text/html; charset=utf-8"), "{path}");
                assert!(header(&headers, "content-security-policy").is_some(), "{path}");
                assert!(String::from_utf8_lossy(&body).contains("data-testid=\"home\""), "{path} is the client page");
            }
            // Every embedded file, by the URL a browser uses for it.
            for asset in ASSETS {
                let url = format!("/assets/{}", asset.path);
                let (status, headers, body) = get(addr, &url, "");
                assert!(status.ends_with("200 OK"), "{url}: {status}");
                assert_eq!(header(&headers, "content-type"), Some(content_type(asset.path)), "{url}");
                assert_eq!(header(&headers, "cache-control"), Some("no-cache"), "{url}");
                assert_eq!(header(&headers, "etag"), Some(asset.etag), "{url}");
                assert_eq!(body, asset.bytes, "{url}");
            }
            let (status, headers, body) = get(addr, "/assets/app.js", "");
            assert!(status.ends_with("200 OK"));
            let etag = header(&headers, "etag").expect("an etag").to_string();
            assert!(!body.is_empty());
            let (status, _, body) = get(addr, "/assets/app.js", &format!("If-None-Match: {etag}\r\n"));
            assert!(status.ends_with("304 Not Modified"), "{status}");
            assert!(body.is_empty());
            let (status, _, _) = get(addr, "/assets/no-such-file.js", "");
            assert!(status.ends_with("404 Not Found"), "{status}");
            ASSETS.len()
        })
        .await
        .expect("the checks ran");
        assert!(checked >= 5, "the client's files are embedded ({checked})");
    }

    /// The page's own unit tests (its move replayer against python-chess
    /// games), run with node's test runner when node is installed.
    #[test]
    fn the_client_unit_tests_pass_under_node() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web/tests");
        let run = std::process::Command::new("node").args(["--test", dir]).output();
        let output = match run {
            Ok(output) => output,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                eprintln!("node is not installed: the web client's unit tests did not run");
                return;
            }
            Err(error) => panic!("running node: {error}"),
        };
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "node --test {dir} failed:\n{text}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(text.contains("# fail 0") && !text.contains("# pass 0"), "{text}");
    }

    #[test]
    fn the_client_modules_and_styles_are_embedded() {
        for path in ["index.html", "app.css", "app.js", "art/pieces.js", "art/themes.css"] {
            let asset = lookup(path).unwrap_or_else(|| panic!("{path} is embedded"));
            assert!(!asset.bytes.is_empty(), "{path}");
        }
        assert_eq!(content_type("a/b.JS"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("noextension"), "application/octet-stream");
    }
}
