//! Step-up at a resource (RFC 9470): a token remembers how its user signed in (`acr`,
//! `auth_time`), for opaque and JWT access tokens alike; a resource that demands a class or a
//! recent sign-in passes a token that satisfies it and refuses the others with 401
//! `insufficient_user_authentication` and a challenge naming what it demands.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use grantor::client::ClientId;
use grantor::clock::{Clock as _, UnixTime};
use grantor::jwt::{JwtAccessTokens, SigningAlgorithm, SigningKey, StaticKeys};
use grantor::signin::Step;
use grantor::store::{
    AccessToken, Authorization, Family, FamilyId, Jti, NewTokens, SecretDigest, TokenIssuer as _,
    UserAuthentication, UserSession, UserSessionStore as _,
};
use grantor::{BearerRefusal, BearerRefusalReason, Scope, StepUp};
use http::{Request, Response};

const MFA: &str = "urn:grantor:acr:mfa";
const FIVE_MINUTES: Duration = Duration::from_secs(300);
const REALM: &str = "Bearer realm=\"http://127.0.0.1:8080\"";
const METADATA: &str =
    ", resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource\"";

/// The two kinds of access token a server may issue.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Opaque,
    Jwt,
}

fn fixture_of(kind: Kind) -> Fixture {
    match kind {
        Kind::Opaque => fixture(),
        Kind::Jwt => fixture_with(|b| {
            let key = SigningKey::generate(SigningAlgorithm::EdDSA).unwrap();
            b.jwt_access_tokens(JwtAccessTokens::new(Arc::new(StaticKeys::new(key, []))))
        }),
    }
}

/// `urn:grantor:acr:mfa` within five minutes.
fn strong() -> StepUp {
    StepUp::new()
        .acr_values([MFA])
        .unwrap()
        .max_age(FIVE_MINUTES)
}

fn now(f: &Fixture) -> UnixTime {
    f.clock.now()
}

fn access_token(tokens: &serde_json::Value) -> &str {
    tokens["access_token"].as_str().unwrap()
}

/// Tokens from the code flow of a browser signed in `ago` before now (single sign-on), its
/// sign-in of the class `acr`: the session is kept as a sign-in page would have kept it, and
/// the authorization request finds it and redirects with a code at once.
async fn signed_in_tokens(f: &Fixture, acr: Option<&str>, ago: Duration) -> serde_json::Value {
    let cookie = format!("a browser's cookie {:?}", std::time::Instant::now());
    let amr = vec!["pwd".to_owned(), "otp".to_owned()];
    let session = UserSession::new(
        f.alice.clone(),
        "sid-1",
        now(f).minus(ago),
        amr,
        now(f).plus(Duration::from_secs(3600)),
    )
    .with_acr(acr.map(str::to_owned));
    f.store
        .insert_user_session(&SecretDigest::of(&cookie), session, now(f))
        .await
        .unwrap();
    let query = format!(
        "response_type=code&client_id={}&redirect_uri={REDIRECT_ENCODED}",
        f.fast_id
    );
    let request = Request::get(format!("/api/oauth/authorize?{query}"))
        .header(
            "cookie",
            format!("{}={cookie}", f.server.sign_on_cookie_name()),
        )
        .body(Vec::new())
        .unwrap();
    let Step::Respond(response) = f.server.begin_sign_in(&request).await else {
        panic!("a signed-in browser is redirected at once");
    };
    let code = redirect(&response).query["code"].clone();
    let body = format!("grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}");
    assert_tokens(&f.token(Some(&f.fast_basic()), &body).await)
}

/// The resource's check of `token` with `step_up`.
async fn step_up(f: &Fixture, token: &str, step_up: &StepUp) -> Result<(), BearerRefusal> {
    let request = Request::get("/api/me/strong")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap();
    f.server
        .bearer_step_up(&request, Some(&Scope::parse("profile").unwrap()), step_up)
        .await
        .map(|_| ())
}

/// Asserts a step-up refusal saying `description`, and answers its challenge.
fn refused(refusal: BearerRefusal, description: &str) -> String {
    assert_eq!(
        refusal.reason(),
        BearerRefusalReason::InsufficientUserAuthentication
    );
    let response: Response<String> = refusal.into_response();
    assert_eq!(response.status(), 401, "{}", response.body());
    let body = json(&response);
    assert_eq!(body["error"], "insufficient_user_authentication");
    assert_eq!(body["error_description"], description);
    response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// The challenge of a refusal saying `description` of [`strong`].
fn strong_challenge(description: &str) -> String {
    format!(
        "{REALM}, error=\"insufficient_user_authentication\", \
         error_description=\"{description}\", acr_values=\"{MFA}\", max_age=300{METADATA}"
    )
}

const OTHER_CLASS: &str = "a different authentication level is required";
const TOO_OLD: &str = "a more recent authentication is required";
const NO_SIGN_IN: &str = "the access token was not issued for a user's sign-in";

async fn a_strong_recent_sign_in_passes_and_a_weaker_one_is_refused(kind: Kind) {
    let f = fixture_of(kind);
    let tokens = signed_in_tokens(&f, Some(MFA), Duration::from_secs(60)).await;
    let access = access_token(&tokens);
    step_up(&f, access, &strong()).await.unwrap();
    let request = Request::get("/api/me")
        .header("authorization", format!("Bearer {access}"))
        .body(())
        .unwrap();
    let grant = f.server.bearer(&request, None).await.unwrap();
    let signed_in = grant.authorization.authentication.unwrap();
    assert_eq!(signed_in.acr(), Some(MFA), "{kind:?}");
    assert_eq!(signed_in.amr(), ["pwd", "otp"]);
    assert_eq!(
        signed_in.auth_time(),
        now(&f).minus(Duration::from_secs(60))
    );

    let weaker = signed_in_tokens(&f, Some("urn:grantor:acr:pwd"), Duration::ZERO).await;
    let refusal = step_up(&f, access_token(&weaker), &strong()).await;
    let challenge = refused(refusal.unwrap_err(), OTHER_CLASS);
    assert_eq!(challenge, strong_challenge(OTHER_CLASS), "{kind:?}");
    let classless = signed_in_tokens(&f, None, Duration::ZERO).await;
    let refusal = step_up(&f, access_token(&classless), &strong()).await;
    refused(refusal.unwrap_err(), OTHER_CLASS);
    // Either of several classes will do.
    let either = StepUp::new()
        .acr_values(["urn:grantor:acr:pwd", MFA])
        .unwrap();
    step_up(&f, access_token(&weaker), &either).await.unwrap();
}

#[tokio::test]
async fn a_strong_recent_sign_in_passes_and_a_weaker_one_is_refused_opaque() {
    a_strong_recent_sign_in_passes_and_a_weaker_one_is_refused(Kind::Opaque).await;
}

#[tokio::test]
async fn a_strong_recent_sign_in_passes_and_a_weaker_one_is_refused_jwt() {
    a_strong_recent_sign_in_passes_and_a_weaker_one_is_refused(Kind::Jwt).await;
}

async fn a_stale_sign_in_is_refused_and_a_refresh_does_not_freshen_it(kind: Kind) {
    let f = fixture_of(kind);
    let tokens = signed_in_tokens(&f, Some(MFA), Duration::from_secs(200)).await;
    let access = access_token(&tokens).to_owned();
    step_up(&f, &access, &strong()).await.unwrap();
    // `auth_time + max_age` is now: still recent enough.
    f.clock.advance(Duration::from_secs(100));
    step_up(&f, &access, &strong()).await.unwrap();
    f.clock.advance(Duration::from_secs(1));
    let refusal = step_up(&f, &access, &strong()).await.unwrap_err();
    assert_eq!(
        refused(refusal, TOO_OLD),
        strong_challenge(TOO_OLD),
        "{kind:?}"
    );
    // The sign-in is the family's: a refreshed token is as old as it.
    let refreshed = assert_tokens(&f.refresh(tokens["refresh_token"].as_str().unwrap()).await);
    let refusal = step_up(&f, access_token(&refreshed), &strong()).await;
    refused(refusal.unwrap_err(), TOO_OLD);
    let any_age = StepUp::new().acr_values([MFA]).unwrap();
    step_up(&f, access_token(&refreshed), &any_age)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_stale_sign_in_is_refused_and_a_refresh_does_not_freshen_it_opaque() {
    a_stale_sign_in_is_refused_and_a_refresh_does_not_freshen_it(Kind::Opaque).await;
}

#[tokio::test]
async fn a_stale_sign_in_is_refused_and_a_refresh_does_not_freshen_it_jwt() {
    a_stale_sign_in_is_refused_and_a_refresh_does_not_freshen_it(Kind::Jwt).await;
}

async fn a_client_s_own_token_has_no_sign_in_to_step_up(kind: Kind) {
    let f = fixture_of(kind);
    let response = f
        .token(Some(&f.fast_basic()), "grant_type=client_credentials")
        .await;
    let tokens = assert_tokens(&response);
    let refusal = step_up(&f, access_token(&tokens), &strong()).await;
    assert_eq!(
        refused(refusal.unwrap_err(), NO_SIGN_IN),
        strong_challenge(NO_SIGN_IN)
    );
    // Demanding nothing passes it; demanding an age alone names no acr_values.
    step_up(&f, access_token(&tokens), &StepUp::new())
        .await
        .unwrap();
    let recent = StepUp::new().max_age(Duration::from_secs(60));
    let refusal = step_up(&f, access_token(&tokens), &recent).await;
    assert_eq!(
        refused(refusal.unwrap_err(), NO_SIGN_IN),
        format!(
            "{REALM}, error=\"insufficient_user_authentication\", \
             error_description=\"{NO_SIGN_IN}\", max_age=60{METADATA}"
        )
    );
}

#[tokio::test]
async fn a_client_s_own_token_has_no_sign_in_to_step_up_opaque() {
    a_client_s_own_token_has_no_sign_in_to_step_up(Kind::Opaque).await;
}

#[tokio::test]
async fn a_client_s_own_token_has_no_sign_in_to_step_up_jwt() {
    a_client_s_own_token_has_no_sign_in_to_step_up(Kind::Jwt).await;
}

#[tokio::test]
async fn a_password_sign_in_is_recent_but_names_no_class() {
    for kind in [Kind::Opaque, Kind::Jwt] {
        let f = fixture_of(kind);
        let body = "grant_type=password&username=alice%40example.com&password=alice-password-1";
        let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), body).await);
        let recent = StepUp::new().max_age(FIVE_MINUTES);
        step_up(&f, access_token(&tokens), &recent).await.unwrap();
        let refusal = step_up(&f, access_token(&tokens), &strong()).await;
        refused(refusal.unwrap_err(), OTHER_CLASS);
    }
}

#[tokio::test]
async fn a_token_whose_family_was_kept_with_a_class_passes_and_a_stale_one_does_not() {
    let f = fixture();
    // Tokens a store kept, as another node's sign-in would have made them.
    let keep = |text: &'static str, auth_time: UnixTime, family: u8| {
        let authentication = UserAuthentication::new(auth_time)
            .with_acr(Some(MFA.to_owned()))
            .with_amr(["pwd", "hwk"]);
        let authorization = Authorization::new(
            ClientId::new(&f.fast_id).unwrap(),
            Some(f.alice.clone()),
            Scope::parse("profile").unwrap(),
        )
        .with_authentication(Some(authentication));
        NewTokens::new(
            Family::New(FamilyId::from_bytes([family; 16])),
            authorization,
            now(&f),
            AccessToken::new(text).digest(),
            Jti::new(text),
            now(&f).plus(Duration::from_secs(3600)),
        )
    };
    let fresh = "a-token-of-a-fresh-strong-sign-in";
    let stale = "a-token-of-a-stale-strong-sign-in";
    f.store
        .insert_tokens(keep(fresh, now(&f), 1))
        .await
        .unwrap();
    let long_ago = now(&f).minus(Duration::from_secs(301));
    f.store
        .insert_tokens(keep(stale, long_ago, 2))
        .await
        .unwrap();
    step_up(&f, fresh, &strong()).await.unwrap();
    let refusal = step_up(&f, stale, &strong()).await.unwrap_err();
    refused(refusal, TOO_OLD);
}

#[tokio::test]
async fn the_scope_is_checked_before_the_sign_in() {
    let f = fixture();
    let tokens = signed_in_tokens(&f, None, Duration::ZERO).await;
    let request = Request::get("/api/me/strong")
        .header("authorization", format!("Bearer {}", access_token(&tokens)))
        .body(())
        .unwrap();
    let email = Scope::parse("email").unwrap();
    let refusal = f
        .server
        .bearer_step_up(&request, Some(&email), &strong())
        .await
        .unwrap_err();
    assert_eq!(refusal.reason(), BearerRefusalReason::InsufficientScope);
    let response = f
        .bearer(Some("Bearer no-such-token"), None)
        .await
        .unwrap_err();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn introspection_tells_when_and_how_the_user_signed_in() {
    let f = fixture();
    let tokens = signed_in_tokens(&f, Some(MFA), Duration::from_secs(30)).await;
    let auth_time = now(&f).as_secs() - 30;
    for token in [
        access_token(&tokens),
        tokens["refresh_token"].as_str().unwrap(),
    ] {
        let response = f
            .introspect(Some(&f.fast_basic()), &format!("token={token}"))
            .await;
        let body = json(&response);
        assert_eq!(body["active"], true);
        assert_eq!(body["auth_time"], auth_time, "{body}");
        assert_eq!(body["acr"], MFA, "{body}");
    }
    let response = f
        .token(Some(&f.fast_basic()), "grant_type=client_credentials")
        .await;
    let own = assert_tokens(&response);
    let response = f
        .introspect(
            Some(&f.fast_basic()),
            &format!("token={}", access_token(&own)),
        )
        .await;
    let body = json(&response);
    assert_eq!(body["active"], true);
    assert!(body.get("auth_time").is_none(), "{body}");
    assert!(body.get("acr").is_none(), "{body}");
}
