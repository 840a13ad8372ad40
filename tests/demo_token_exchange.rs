//! Token exchange (RFC 8693) over real HTTP, against `axum_server` and `actix_server`:
//! `service-client` trades Alice's access token for one aimed at `https://resource.example/`,
//! which introspects as Alice's with the new audience and which `/api/me` refuses; a revoked
//! subject token is `invalid_request`; the metadata lists the grant type.

mod demo;

use demo::Server;
use demo::http::*;

each_framework! {
    service_client_exchanges_alices_token_for_the_other_resource => exchange;
}

const SERVICE: (&str, &str) = ("service-client", "service-secret");
const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS: &str = "urn:ietf:params:oauth:token-type:access_token";
const OTHER: &str = "https://resource.example/";

async fn exchange_for_other(base: &str, subject: &str, scope: Option<&str>) -> Reply {
    let mut pairs = vec![
        ("grant_type", GRANT),
        ("subject_token", subject),
        ("subject_token_type", ACCESS),
        ("resource", OTHER),
    ];
    pairs.extend(scope.map(|s| ("scope", s)));
    token(base, Some(SERVICE), &pairs).await
}

/// Introspection as `client`.
async fn introspect_as(base: &str, client: (&str, &str), token: &str) -> serde_json::Value {
    let url = format!("{base}/api/oauth/introspect");
    let reply = post_form(&browser(), &url, Some(client), &[("token", token)]).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

async fn exchange(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let metadata = metadata_document(base).await;
    assert!(strings(&metadata["grant_types_supported"]).contains(&GRANT.to_owned()));
    let alice = password_grant(base, DEMO, ALICE, "profile email").await;
    let subject = access_token(&alice);
    let reply = exchange_for_other(base, subject, Some("email")).await;
    let issued = assert_tokens(&reply);
    assert_eq!(issued["issued_token_type"], ACCESS, "{issued}");
    assert_eq!(issued["scope"], "email");
    assert!(issued.get("refresh_token").is_none(), "{issued}");
    let exchanged = access_token(&issued);
    let seen = introspect_as(base, SERVICE, exchanged).await;
    assert_eq!(seen["active"], true, "{seen}");
    assert_eq!(seen["aud"], OTHER);
    assert_eq!(seen["username"], ALICE.0);
    assert_eq!(seen["client_id"], "service-client");
    assert!(seen.get("act").is_none(), "{seen}");
    // Meant for the other resource, not the demo API.
    let refused = me(base, Some(exchanged)).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    let challenge = refused.header("www-authenticate").unwrap_or_default();
    assert!(challenge.contains("invalid_token"), "{challenge}");
    // The subject token still opens the API; widening its scope is refused.
    assert_eq!(me(base, Some(subject)).await.status, 200);
    let wider = exchange_for_other(base, subject, Some("profile email admin")).await;
    assert_oauth_error(&wider, 400, "invalid_scope");
    // Another client, even one agreed every other grant, may not exchange.
    let pairs = [
        ("grant_type", GRANT),
        ("subject_token", subject),
        ("subject_token_type", ACCESS),
    ];
    assert_oauth_error(
        &token(base, Some(DEMO), &pairs).await,
        400,
        "unauthorized_client",
    );
    // Once Alice's client revokes it, the subject token is no longer exchangeable.
    let url = format!("{base}/api/oauth/revoke");
    let revoked = post_form(&browser(), &url, Some(DEMO), &[("token", subject)]).await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    let reply = exchange_for_other(base, subject, None).await;
    assert_oauth_error(&reply, 400, "invalid_request");
    assert!(reply.body.contains("subject_token"), "{}", reply.body);
    server.assert_alive_and_calm();
}
