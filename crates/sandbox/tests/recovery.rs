//! Recovery codes over HTTP (`/api/recovery`): a code issued to a player
//! (by their token) and redeemed anywhere gives a token for that player
//! with the name the code carries; a new code replaces the old one; a
//! revoked or forged code is refused and changes nothing; tries are limited
//! per address.

use std::time::Duration;

use fogblast_client::protocol::Hello;
use fogblast_client::Http;
use fogblast_client::Method;
use fogblast_sandbox::Sandbox;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(10);

async fn call(http: &Http, method: Method, path: &str, bearer: Option<&str>, body: Option<Value>) -> (u16, Value) {
    let answer = http.send(method, path, bearer, body.as_ref()).await.unwrap();
    let value = answer.json().unwrap_or(Value::Null);
    (answer.status, value)
}

async fn redeem(http: &Http, code: &str) -> (u16, Value) {
    call(http, Method::POST, "/api/recovery/redeem", None, Some(json!({ "code": code }))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_code_carries_the_identity_until_replaced_or_revoked_and_forgeries_change_nothing() {
    let sandbox =
        Sandbox::builder().shards(1).gateways(2).rating().embedded().start().await.expect("the sandbox starts");
    let mut ann = sandbox.client(0).await.unwrap();
    let welcome = ann.hello(Hello { token: None, name: Some("Ann".into()) }, LIMIT).await.unwrap();
    let (here, there) = (sandbox.http(0), sandbox.http(1));

    // Without a token, or with a forged one: refused.
    let (status, body) = call(&here, Method::POST, "/api/recovery", None, Some(json!({ "name": "Ann" }))).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("unauthorized")), "{body}");
    let forged = format!("{}x", welcome.token);
    let (status, _) = call(&here, Method::POST, "/api/recovery", Some(&forged), None).await;
    assert_eq!(status, 401);

    let (status, issued) =
        call(&here, Method::POST, "/api/recovery", Some(&welcome.token), Some(json!({ "name": " Ann " }))).await;
    assert_eq!(status, 200, "{issued}");
    let code = issued["code"].as_str().unwrap().to_owned();
    assert_eq!((issued["player"].as_str(), issued["name"].as_str()), (Some(welcome.player.as_str()), Some("Ann")));

    // Redeemed on the other gateway, typed loosely: the same player, a token that works.
    let (status, carried) = redeem(&there, &code.to_lowercase().replace('-', " ")).await;
    assert_eq!(status, 200, "{carried}");
    assert_eq!((carried["player"].as_str(), carried["name"].as_str()), (Some(welcome.player.as_str()), Some("Ann")));
    let token = carried["token"].as_str().unwrap().to_owned();
    let mut elsewhere = sandbox.client(1).await.unwrap();
    let back = elsewhere.hello(Hello { token: Some(token.clone()), name: None }, LIMIT).await.unwrap();
    assert_eq!(back.player, welcome.player, "the carried token is the same player");
    // A code is good more than once (another device), until replaced.
    assert_eq!(redeem(&here, &code).await.0, 200);

    // A forged code: a well-formed one nobody was given, and a malformed one.
    let mut forged_code: Vec<char> = code.chars().collect();
    let last = forged_code.len() - 1;
    forged_code[last] = if forged_code[last] == 'A' { 'B' } else { 'A' };
    let forged_code: String = forged_code.into_iter().collect();
    let (status, body) = redeem(&here, &forged_code).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("not_found")), "{body}");
    let (status, body) = redeem(&here, "not a code").await;
    assert_eq!((status, body["code"].as_str()), (400, Some("bad_request")), "{body}");

    // A new code replaces the old, which stops working; the carried token issues it too.
    let (status, second) =
        call(&there, Method::POST, "/api/recovery", Some(&token), Some(json!({ "name": "Ann B" }))).await;
    assert_eq!(status, 200, "{second}");
    let second = second["code"].as_str().unwrap().to_owned();
    assert_ne!(second, code);
    assert_eq!(redeem(&here, &code).await.0, 404, "the replaced code is useless");
    let (status, carried) = redeem(&here, &second).await;
    assert_eq!((status, carried["name"].as_str()), (200, Some("Ann B")));

    // Revoked: useless; revoking again says there was none; a new one can be made.
    let (status, body) = call(&here, Method::DELETE, "/api/recovery", Some(&welcome.token), None).await;
    assert_eq!((status, body["revoked"].as_bool()), (200, Some(true)), "{body}");
    assert_eq!(redeem(&there, &second).await.0, 404, "the revoked code is useless");
    let (_, body) = call(&here, Method::DELETE, "/api/recovery", Some(&welcome.token), None).await;
    assert_eq!(body["revoked"], false);
    let (status, third) = call(&here, Method::POST, "/api/recovery", Some(&welcome.token), None).await;
    assert_eq!(status, 200);
    assert_eq!(
        redeem(&there, third["code"].as_str().unwrap()).await.1["player"].as_str(),
        Some(welcome.player.as_str())
    );

    // Guessing is limited per address: ten tries, then 429 with Retry-After,
    // even for the right code; the other gateway counts its own.
    let mut refused = None;
    for _ in 0..12 {
        let answer =
            here.send(Method::POST, "/api/recovery/redeem", None, Some(&json!({ "code": forged_code }))).await.unwrap();
        if answer.status == 429 {
            refused = Some(answer);
            break;
        }
        assert_eq!(answer.status, 404);
    }
    let refused = refused.expect("tries run out");
    assert!(refused.retry_after.is_some_and(|s| s >= 1), "{refused:?}");
    assert_eq!(redeem(&here, third["code"].as_str().unwrap()).await.0, 429);
    sandbox.stop().await.expect("every service stops cleanly");
}
