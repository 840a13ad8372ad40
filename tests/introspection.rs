//! RFC 7662 introspection: active tokens described, everything else exactly `{"active":false}`.

mod common;

use std::time::Duration;

use common::*;
use grantor::client::*;

const INACTIVE: &str = r#"{"active":false}"#;

#[tokio::test]
async fn an_active_access_token_is_described() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let access = tokens["access_token"].as_str().unwrap();
    for hint in [
        "",
        "&token_type_hint=access_token",
        "&token_type_hint=refresh_token",
    ] {
        let response = f
            .introspect(Some(&f.fast_basic()), &format!("token={access}{hint}"))
            .await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.headers()["cache-control"], "no-store");
        let body = json(&response);
        assert_eq!(body["active"], true);
        assert_eq!(body["scope"], "profile");
        assert_eq!(body["client_id"], f.fast_id.as_str());
        assert_eq!(body["username"], ALICE);
        assert_eq!(body["sub"], f.alice.id().as_str());
        assert_eq!(body["token_type"], "bearer");
        assert_eq!(body["iat"], START);
        assert_eq!(body["exp"], START + 3600);
        assert_eq!(body["jti"], tokens["jti"]);
        assert_eq!(body["iss"], ISSUER);
        assert_eq!(body["aud"], ISSUER, "the default audience is the issuer");
    }
}

/// Two nodes over one store, the second configured with another issuer (and so another
/// default audience): it neither vouches for the first's tokens under its own `iss` nor
/// refreshes them; the first still does.
#[tokio::test]
async fn a_node_with_another_issuer_answers_the_first_nodes_tokens_inactive() {
    let f = fixture();
    let other = grantor::AuthorizationServer::builder()
        .issuer("https://other.example")
        .store(f.store.clone())
        .clock(std::sync::Arc::new(f.clock.clone()))
        .build()
        .unwrap();
    let tokens = f.fast_tokens().await;
    for token in ["access_token", "refresh_token"] {
        let body = format!("token={}", tokens[token].as_str().unwrap());
        let request = post("/api/oauth/introspect", Some(&f.fast_basic()), &body);
        let elsewhere = other.introspect(&request).await;
        assert_eq!(elsewhere.body(), INACTIVE, "{token}");
        let here = json(&f.introspect(Some(&f.fast_basic()), &body).await);
        assert_eq!(here["active"], true, "{token}");
        assert_eq!(here["iss"], ISSUER);
    }
    let refresh = format!(
        "grant_type=refresh_token&refresh_token={}",
        tokens["refresh_token"].as_str().unwrap()
    );
    let refused = other
        .token(&token_request(Some(&f.fast_basic()), &refresh))
        .await;
    assert_error(&refused, 400, "invalid_grant");
    let refreshed = f.token(Some(&f.fast_basic()), &refresh).await;
    assert_eq!(refreshed.status(), 200, "{}", refreshed.body());
}

#[tokio::test]
async fn a_refresh_token_is_described_until_it_rotates() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    for hint in [
        "",
        "&token_type_hint=refresh_token",
        "&token_type_hint=access_token",
    ] {
        let response = f
            .introspect(Some(&f.fast_basic()), &format!("token={refresh}{hint}"))
            .await;
        let body = json(&response);
        assert_eq!(body["active"], true);
        assert_eq!(body["token_type"], "refresh_token");
        assert_eq!(body["username"], ALICE);
        assert_eq!(body["exp"], START + 30 * 24 * 3600);
        assert!(body.get("jti").is_none());
    }
    assert_eq!(f.refresh(refresh).await.status(), 200);
    let response = f
        .introspect(Some(&f.fast_basic()), &format!("token={refresh}"))
        .await;
    assert_eq!(response.body(), INACTIVE);
}

#[tokio::test]
async fn unknown_expired_and_revoked_tokens_are_exactly_inactive() {
    let f = fixture();
    let auth = f.fast_basic();
    let response = f.introspect(Some(&auth), "token=no-such-token").await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.body(), INACTIVE);

    let revoked = f.fast_tokens().await;
    let access = revoked["access_token"].as_str().unwrap();
    f.revoke(Some(&auth), &format!("token={access}")).await;
    let response = f.introspect(Some(&auth), &format!("token={access}")).await;
    assert_eq!(response.body(), INACTIVE);

    let family = f.fast_tokens().await;
    let refresh = family["refresh_token"].as_str().unwrap();
    f.revoke(Some(&auth), &format!("token={refresh}")).await;
    for token in [&family["access_token"], &family["refresh_token"]] {
        let body = format!("token={}", token.as_str().unwrap());
        assert_eq!(f.introspect(Some(&auth), &body).await.body(), INACTIVE);
    }

    let expiring = f.fast_tokens().await;
    f.clock.advance(Duration::from_secs(3600));
    let body = format!("token={}", expiring["access_token"].as_str().unwrap());
    assert_eq!(f.introspect(Some(&auth), &body).await.body(), INACTIVE);
}

#[tokio::test]
async fn a_client_credentials_token_has_the_client_as_subject_and_no_username() {
    let f = fixture();
    let response = f
        .token(Some(&f.fast_basic()), "grant_type=client_credentials")
        .await;
    let access = json(&response)["access_token"].as_str().unwrap().to_owned();
    let body = json(
        &f.introspect(Some(&f.fast_basic()), &format!("token={access}"))
            .await,
    );
    assert_eq!(body["active"], true);
    assert_eq!(body["sub"], f.fast_id.as_str());
    assert!(body.get("username").is_none());
}

#[tokio::test]
async fn introspection_requires_client_authentication() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let body = format!("token={}", tokens["access_token"].as_str().unwrap());
    assert_error(&f.introspect(None, &body).await, 401, "invalid_client");
    let wrong = basic(&f.fast_id, "wrong");
    assert_error(
        &f.introspect(Some(&wrong), &body).await,
        401,
        "invalid_client",
    );
    let missing = f.introspect(Some(&f.fast_basic()), "").await;
    assert_error(&missing, 400, "invalid_request");
}

#[tokio::test]
async fn a_public_client_cannot_introspect() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    let body = format!(
        "token={}&client_id=public-client",
        tokens["access_token"].as_str().unwrap()
    );
    assert_error(&f.introspect(None, &body).await, 401, "invalid_client");
}

#[tokio::test]
async fn another_client_sees_exactly_inactive_for_a_token_not_issued_to_it() {
    let f = fixture();
    let tokens = f.fast_tokens().await;
    for token in [&tokens["access_token"], &tokens["refresh_token"]] {
        let body = format!("token={}", token.as_str().unwrap());
        let response = f.introspect(Some(&f.demo_basic()), &body).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.body(), INACTIVE);
    }
}

#[tokio::test]
async fn a_resource_server_sees_every_token_of_its_audience_and_no_other() {
    let f = fixture_with(|b| b.default_audience("https://issuer.example/api"));
    let secret = "api-server-secret-that-is-long-enough";
    let verifier = SecretVerifier::argon2id(&ClientSecret::new(secret)).unwrap();
    f.register(
        Client::confidential("api-server", verifier.clone())
            .resource_server("https://issuer.example/api")
            .build()
            .unwrap(),
    );
    f.register(
        Client::confidential("other-api", verifier)
            .resource_server("https://resource.example/")
            .build()
            .unwrap(),
    );
    let tokens = f.fast_tokens().await;
    let body = format!("token={}", tokens["access_token"].as_str().unwrap());
    let seen = json(
        &f.introspect(Some(&basic("api-server", secret)), &body)
            .await,
    );
    assert_eq!(seen["active"], true);
    assert_eq!(seen["aud"], "https://issuer.example/api");
    assert_eq!(seen["username"], ALICE);
    let other = f.introspect(Some(&basic("other-api", secret)), &body).await;
    assert_eq!(other.body(), INACTIVE);
}

#[test]
fn only_confidential_clients_with_absolute_audiences_serve_one() {
    let public = Client::public("p")
        .resource_server("https://issuer.example/api")
        .build();
    assert_eq!(public.unwrap_err(), ClientError::PublicResourceServer);
    let verifier = SecretVerifier::argon2id(&ClientSecret::new("s")).unwrap();
    let relative = Client::confidential("c", verifier)
        .resource_server("/api")
        .build();
    assert_eq!(relative.unwrap_err(), ClientError::InvalidAudience);
}

/// A token seam that counts which lookup grantor asks for: `check_access_token` (which a store
/// may answer from a read replica) or `find_access_token` (the primary).
struct CountingTokens {
    inner: grantor::MemoryStore,
    checks: std::sync::atomic::AtomicUsize,
    finds: std::sync::atomic::AtomicUsize,
}

#[grantor::async_trait]
impl grantor::store::TokenIssuer for CountingTokens {
    async fn insert_code(
        &self,
        code: &grantor::store::SecretDigest,
        family: grantor::store::FamilyId,
        grant: grantor::store::CodeGrant,
    ) -> Result<(), grantor::store::StoreError> {
        self.inner.insert_code(code, family, grant).await
    }
    async fn redeem_code(
        &self,
        code: &grantor::store::SecretDigest,
        now: grantor::clock::UnixTime,
    ) -> Result<grantor::store::CodeRedemption, grantor::store::StoreError> {
        self.inner.redeem_code(code, now).await
    }
    async fn insert_tokens(
        &self,
        tokens: grantor::store::NewTokens,
    ) -> Result<(), grantor::store::StoreError> {
        self.inner.insert_tokens(tokens).await
    }
    async fn find_refresh_token(
        &self,
        token: &grantor::store::SecretDigest,
        now: grantor::clock::UnixTime,
    ) -> Result<Option<grantor::store::RefreshGrant>, grantor::store::StoreError> {
        self.inner.find_refresh_token(token, now).await
    }
    async fn rotate_refresh_token(
        &self,
        token: &grantor::store::SecretDigest,
        successor: grantor::store::NewTokens,
        retry_since: Option<grantor::clock::UnixTime>,
    ) -> Result<grantor::store::Rotation, grantor::store::StoreError> {
        self.inner
            .rotate_refresh_token(token, successor, retry_since)
            .await
    }
    async fn find_access_token(
        &self,
        token: &grantor::store::SecretDigest,
        now: grantor::clock::UnixTime,
    ) -> Result<Option<grantor::store::AccessGrant>, grantor::store::StoreError> {
        self.finds.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.find_access_token(token, now).await
    }
    async fn check_access_token(
        &self,
        token: &grantor::store::SecretDigest,
        now: grantor::clock::UnixTime,
    ) -> Result<Option<grantor::store::AccessGrant>, grantor::store::StoreError> {
        self.checks
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.find_access_token(token, now).await
    }
    async fn revoke_access_token(
        &self,
        token: &grantor::store::SecretDigest,
    ) -> Result<(), grantor::store::StoreError> {
        self.inner.revoke_access_token(token).await
    }
    async fn revoke_family(
        &self,
        family: grantor::store::FamilyId,
    ) -> Result<(), grantor::store::StoreError> {
        self.inner.revoke_family(family).await
    }
    async fn revoke_client(&self, client_id: &str) -> Result<u64, grantor::store::StoreError> {
        self.inner.revoke_client(client_id).await
    }
}

/// Introspection and bearer validation ask `check_access_token`, which a store may answer from
/// a read replica; revocation asks `find_access_token`, the primary.
#[tokio::test]
async fn token_checks_may_be_answered_by_a_replica_and_revocation_never_is() {
    use std::sync::atomic::Ordering::SeqCst;
    let store = grantor::MemoryStore::new();
    let counting = std::sync::Arc::new(CountingTokens {
        inner: store.clone(),
        checks: Default::default(),
        finds: Default::default(),
    });
    let credentials = ClientCredentials::generate().unwrap();
    register(
        &store,
        Client::confidential(credentials.client_id.as_str(), credentials.verifier)
            .grant_types([GrantType::ClientCredentials])
            .build()
            .unwrap(),
    );
    let server = grantor::AuthorizationServer::builder()
        .issuer(ISSUER)
        .tokens(counting.clone())
        .store(store.clone())
        .build()
        .unwrap();
    let authorization = basic(
        credentials.client_id.as_str(),
        credentials.secret.expose_secret(),
    );
    let issued = server
        .token(&token_request(
            Some(&authorization),
            "grant_type=client_credentials",
        ))
        .await;
    let access = json(&issued)["access_token"].as_str().unwrap().to_owned();
    let token = format!("token={access}&token_type_hint=access_token");

    let introspected = server
        .introspect(&post("/api/oauth/introspect", Some(&authorization), &token))
        .await;
    assert_eq!(json(&introspected)["active"], true);
    let me = http::Request::get("/api/me")
        .header("authorization", format!("Bearer {access}"))
        .body(())
        .unwrap();
    assert!(server.bearer(&me, None).await.is_ok());
    assert_eq!(
        (counting.checks.load(SeqCst), counting.finds.load(SeqCst)),
        (2, 0)
    );

    let revoked = server
        .revoke(&post("/api/oauth/revoke", Some(&authorization), &token))
        .await;
    assert_eq!(revoked.status(), 200);
    assert_eq!(
        (counting.checks.load(SeqCst), counting.finds.load(SeqCst)),
        (2, 1)
    );
    assert!(server.bearer(&me, None).await.is_err(), "revoked");
}

#[tokio::test]
async fn a_user_s_tokens_tell_when_the_user_signed_in_and_a_refresh_keeps_it() {
    let f = fixture();
    let auth = f.fast_basic();
    let body = "grant_type=password&username=alice%40example.com&password=alice-password-1";
    let tokens = assert_tokens(&f.token(Some(&auth), body).await);
    let access = described(&f, tokens["access_token"].as_str().unwrap()).await;
    assert_eq!(access["auth_time"], START, "RFC 9470 §6.2: {access}");
    assert!(
        access.get("acr").is_none(),
        "a password names no class: {access}"
    );
    let refresh = tokens["refresh_token"].as_str().unwrap();
    assert_eq!(described(&f, refresh).await["auth_time"], START);
    // A refresh is no new sign-in (OIDC Core §12.2).
    f.clock.advance(Duration::from_secs(600));
    let refreshed = assert_tokens(&f.refresh(refresh).await);
    let access = described(&f, refreshed["access_token"].as_str().unwrap()).await;
    assert_eq!(access["iat"], START + 600);
    assert_eq!(access["auth_time"], START, "the family's sign-in: {access}");

    // A host that signs users in itself and decides: the decision is the sign-in.
    f.clock.advance(Duration::from_secs(5));
    let tokens = f.fast_tokens().await;
    let access = described(&f, tokens["access_token"].as_str().unwrap()).await;
    assert_eq!(access["auth_time"], START + 605);
    let own = f.token(Some(&auth), "grant_type=client_credentials").await;
    let own = described(&f, json(&own)["access_token"].as_str().unwrap()).await;
    assert_eq!(own["active"], true);
    assert!(
        own.get("auth_time").is_none(),
        "a client's own token: {own}"
    );
}

/// What introspection by the generated client says of `token`.
async fn described(f: &Fixture, token: &str) -> serde_json::Value {
    let body = format!("token={token}");
    json(&f.introspect(Some(&f.fast_basic()), &body).await)
}
