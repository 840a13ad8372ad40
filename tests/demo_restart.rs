//! The demo's default store is the embedded SQLite file (examples/README.md: "the default survives a
//! restart"): a demo started without `--store` keeps its state in
//! `$TMPDIR/grantor-demo-<address>.sqlite3`, and a demo killed outright (no clean shutdown) and
//! started again on the same address still has every client, user, code and token.

mod demo;

use demo::http::*;
use demo::{Launch, Server};
use serde_json::{Value, json};

each_framework! {
    a_restart_keeps_clients_users_codes_and_tokens => restart;
}

/// Starts the demo with no `--store`, its temporary directory `tmp`, on `port`.
fn start_default(framework: &str, tmp: &str, port: u16) -> Server {
    let mut launch = Launch::new(&[]);
    launch.env = vec![("TMPDIR", tmp)];
    launch.port = Some(port);
    Server::launch(framework, &launch)
}

async fn restart(framework: &str) {
    let tmp = std::env::temp_dir().join(format!(
        "grantor-restart-{framework}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&tmp).expect("a temporary directory");
    let tmp_text = tmp.to_string_lossy().into_owned();
    let port = demo::free_port();

    let server = start_default(framework, &tmp_text, port);
    let base = server.base.clone();
    let file = tmp.join(format!("grantor-demo-127.0.0.1_{port}.sqlite3"));
    assert!(file.is_file(), "no {}", file.display());
    #[cfg(unix)]
    {
        // It holds digests of live tokens and the signing keys: this user's alone.
        use std::os::unix::fs::MetadataExt as _;
        let mode = std::fs::metadata(&file).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }

    // A self-registered client, a user's tokens, and a code not yet redeemed.
    let registered = send(
        browser()
            .post(format!("{base}/api/oauth/register"))
            .header("content-type", "application/json")
            .body(json!({"redirect_uris": [CALLBACK], "client_name": "Survivor"}).to_string()),
    )
    .await;
    assert_eq!(registered.status, 201, "{}", registered.body);
    let client: Value = registered.json();
    let client_id = client["client_id"].as_str().unwrap().to_owned();
    let secret = client["client_secret"].as_str().unwrap().to_owned();
    let tokens = password_grant(&base, DEMO, ALICE, "profile").await;
    let access = access_token(&tokens).to_owned();
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    let http = browser();
    let code = approved_code(&http, &base, DEMO.0, ALICE).await;

    // Killed outright: no clean shutdown, nothing flushed on the way out.
    server.kill();
    drop(server);
    let server = start_default(framework, &tmp_text, port);
    assert_eq!(server.base, base);

    // The token still works at the resource and introspects active.
    let me = me(&base, Some(&access)).await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(me.json()["email"], ALICE.0);
    assert_eq!(introspect(&base, &access).await["active"], true);
    // The refresh token rotates.
    let refreshed = token(
        &base,
        Some(DEMO),
        &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
    )
    .await;
    assert_tokens(&refreshed);
    // The code redeems, once.
    let exchange = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", CALLBACK),
    ];
    assert_tokens(&token(&base, Some(DEMO), &exchange).await);
    assert_oauth_error(
        &token(&base, Some(DEMO), &exchange).await,
        400,
        "invalid_grant",
    );
    // The self-registered client authenticates with its secret, and Alice's browser is still
    // signed in (single sign-on outlives the restart): her approval remembered, the code comes
    // at once.
    let introspection = post_form(
        &http,
        &format!("{base}/api/oauth/introspect"),
        Some((&client_id, &secret)),
        &[("token", "not-a-token")],
    )
    .await;
    assert_eq!(introspection.status, 200, "{}", introspection.body);
    assert_eq!(introspection.json()["active"], false);
    let params = [
        ("response_type", "code"),
        ("client_id", DEMO.0),
        ("redirect_uri", CALLBACK),
        ("state", "approved"),
    ];
    let again = get(&http, &authorize_url(&base, &params)).await;
    assert!(
        callback_query(&again).contains_key("code"),
        "{}",
        again.body
    );

    drop(server);
    let _ = std::fs::remove_dir_all(&tmp);
}
