//! RFC 9470 step-up at the demos' `/api/me/strong`, against `axum_server` and `actix_server`:
//! a token whose sign-in does not name `urn:grantor:acr:mfa` is refused with exactly the
//! challenge that demands it (within 300 seconds), while `/api/me` still answers it; and
//! introspection tells the resource server when the user of a browser-less sign-in signed in.

mod demo;

use std::time::{SystemTime, UNIX_EPOCH};

use demo::Server;
use demo::http::*;

each_framework! {
    a_password_token_is_refused_at_the_strong_api_with_the_step_up_challenge => strong_api;
    introspection_by_the_api_server_tells_when_a_password_sign_in_happened => auth_time;
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs()
}

async fn strong_api(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let tokens = password_grant(base, DEMO, ALICE, "profile").await;
    let token = access_token(&tokens);

    let reply = me(base, Some(token)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["email"], ALICE.0);

    let request = browser().get(format!("{base}/api/me/strong"));
    let reply = send(request.bearer_auth(token)).await;
    assert_oauth_error(&reply, 401, "insufficient_user_authentication");
    // RFC 9470 §3, naming the API's metadata as every challenge does (RFC 9728 §5.1).
    let metadata = format!("{base}/.well-known/oauth-protected-resource/api");
    assert_eq!(
        reply.header("www-authenticate"),
        Some(
            format!(
                "Bearer realm=\"{base}\", error=\"insufficient_user_authentication\", \
                 error_description=\"a different authentication level is required\", \
                 acr_values=\"urn:grantor:acr:mfa\", max_age=300, \
                 resource_metadata=\"{metadata}\""
            )
            .as_str()
        )
    );
    // Without a token: the bare challenge, as at `/api/me`.
    let reply = send(browser().get(format!("{base}/api/me/strong"))).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!("Bearer realm=\"{base}\", resource_metadata=\"{metadata}\"").as_str())
    );
}

async fn auth_time(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let before = unix_now();
    let tokens = password_grant(base, DEMO, ALICE, "profile").await;
    let after = unix_now();
    let reply = post_form(
        &browser(),
        &format!("{base}/api/oauth/introspect"),
        Some(("api-server", "api-secret")),
        &[("token", access_token(&tokens))],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let described = reply.json();
    assert_eq!(described["active"], true, "{described}");
    let signed_in = described["auth_time"].as_u64().expect("an auth_time");
    assert!(
        (before..=after).contains(&signed_in),
        "{before} <= {signed_in} <= {after}"
    );
    // The demo names the class a password alone reaches (examples/README.md part 4).
    assert_eq!(described["acr"], "urn:grantor:acr:password", "{described}");
}
