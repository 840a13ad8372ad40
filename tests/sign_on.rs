//! Single sign-on through the browser's pages ([`Site`]): a sign-in keeps the browser signed in
//! for `session_ttl`, across clients; an approval is remembered; OpenID Connect's `prompt` and
//! `max_age` ask again when they say so; ID tokens name the session's `sid` and `auth_time`.

mod common;

use std::time::Duration;

use common::browser::Browser;
use common::*;
use grantor::clock::Clock as _;
use grantor::settings::OpenIdConnect;
use grantor::store::{SecretDigest, UserSessionStore};
use http::Response;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const DAY: Duration = Duration::from_secs(86_400);

fn openid_fixture() -> Fixture {
    fixture_with(|b| b.openid_connect(OpenIdConnect::default()))
}

fn is_sign_in_page(response: &Response<String>) -> bool {
    response.status() == 200 && response.body().contains("name=\"password\"")
}

fn is_approval_page(response: &Response<String>) -> bool {
    response.status() == 200 && response.body().contains("value=\"approve\"")
}

fn code_query(client: &str, scope: &str, extra: &str) -> String {
    format!(
        "response_type=code&client_id={client}&redirect_uri={REDIRECT_ENCODED}&scope={scope}\
         &state=st&code_challenge={CHALLENGE}&code_challenge_method=S256{extra}"
    )
}

/// The raw ID token a code redirect's code is exchanged for (by `plain-client`).
async fn id_token_of(f: &Fixture, response: &Response<String>) -> String {
    let code = redirect(response).query["code"].clone();
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &code_verifier={VERIFIER}"
    );
    let basic = basic("plain-client", "plain-secret");
    let tokens = assert_tokens(&f.token(Some(&basic), &body).await);
    tokens["id_token"].as_str().expect("an id_token").to_owned()
}

/// The ID token a code redirect's code is exchanged for (by the public client or `plain-client`).
async fn id_token_claims(
    f: &Fixture,
    client: &str,
    response: &Response<String>,
) -> serde_json::Value {
    let code = redirect(response).query["code"].clone();
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &code_verifier={VERIFIER}&client_id={client}"
    );
    let authorization = (client == "plain-client").then(|| basic("plain-client", "plain-secret"));
    let tokens = assert_tokens(&f.token(authorization.as_deref(), &body).await);
    let id_token = tokens["id_token"].as_str().expect("an id_token");
    let claims = id_token.split('.').nth(1).unwrap();
    let claims =
        base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, claims).unwrap();
    serde_json::from_slice(&claims).unwrap()
}

#[tokio::test]
async fn a_signed_in_browser_needs_no_password_for_another_client_until_the_session_ends() {
    let f = openid_fixture();
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&code_query("plain-client", "openid", "&nonce=a"))
        .await;
    assert!(is_sign_in_page(&page));
    let done = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    assert!(redirect(&done).query.contains_key("code"));
    let cookie = browser
        .signed_on()
        .expect("the single sign-on cookie")
        .to_owned();
    let set = done.headers()["set-cookie"].to_str().unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Lax"),
        "{set}"
    );
    assert!(set.contains("Max-Age=86400"), "{set}");
    let first = id_token_claims(&f, "plain-client", &done).await;

    // Later, another client: no page at all, straight back with a code.
    f.clock.advance(Duration::from_secs(100));
    let again = browser
        .authorize(&code_query("public-client", "openid", "&nonce=b"))
        .await;
    let second = id_token_claims(&f, "public-client", &again).await;
    assert_eq!(second["sub"], first["sub"]);
    assert_eq!(
        second["auth_time"], first["auth_time"],
        "the session's sign-in"
    );
    assert_eq!(second["sid"], first["sid"]);
    assert!(first["sid"].as_str().is_some_and(|sid| sid.len() >= 22));
    assert_eq!(second["nonce"], "b");

    // Both grants are recorded in the session, for logout to end them.
    let session = f
        .store
        .find_user_session(&SecretDigest::of(&cookie), f.clock.now())
        .await
        .unwrap()
        .expect("the session");
    let clients: Vec<&str> = session.grants.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(clients, ["plain-client", "public-client"]);

    // Past the session's lifetime, the password again.
    f.clock.advance(DAY);
    let expired = browser
        .authorize(&code_query("public-client", "openid", "&nonce=c"))
        .await;
    assert!(is_sign_in_page(&expired), "{}", expired.body());
}

#[tokio::test]
async fn an_approval_is_remembered_until_the_scope_grows_or_prompt_consent() {
    let f = openid_fixture();
    let mut browser = Browser::new(&f);
    let query = |scope: &str, extra: &str| code_query("demo-client", scope, extra);
    let page = browser.authorize(&query("openid%20email", "")).await;
    let approval = browser.sign_in(&page, (BOB, BOB_PASSWORD)).await;
    assert!(is_approval_page(&approval), "{}", approval.body());
    let done = browser.approve(&approval).await;
    assert!(redirect(&done).query.contains_key("code"));

    // The same or a narrower scope: no page.
    for scope in ["openid%20email", "email"] {
        let again = browser.authorize(&query(scope, "")).await;
        assert!(redirect(&again).query.contains_key("code"), "{scope}");
    }
    // A wider one: the approval page, and the union is remembered once approved.
    let wider = browser
        .authorize(&query("openid%20email%20profile", ""))
        .await;
    assert!(is_approval_page(&wider), "{}", wider.body());
    assert!(
        redirect(&browser.approve(&wider).await)
            .query
            .contains_key("code")
    );
    let within = browser.authorize(&query("profile%20email", "")).await;
    assert!(redirect(&within).query.contains_key("code"));
    // prompt=consent asks all the same.
    let asked = browser
        .authorize(&query("openid%20email", "&prompt=consent"))
        .await;
    assert!(is_approval_page(&asked), "{}", asked.body());

    // A fresh sign-in in another browser shows the page all the same.
    let mut other = Browser::new(&f);
    let page = other.authorize(&query("email", "")).await;
    let fresh = other.sign_in(&page, (BOB, BOB_PASSWORD)).await;
    assert!(is_approval_page(&fresh), "{}", fresh.body());

    // Forgotten (the person removed the app's access): asked again.
    let client = grantor::client::ClientId::new("demo-client").unwrap();
    assert!(f.server.forget_consent(f.bob.id(), &client).await.unwrap());
    assert!(!f.server.forget_consent(f.bob.id(), &client).await.unwrap());
    let forgotten = browser.authorize(&query("email", "")).await;
    assert!(
        is_approval_page(&forgotten),
        "{:?} {}",
        forgotten.headers(),
        forgotten.body()
    );
}

/// RFC 8707: an approval of a client for its tokens at one resource is not one for another.
#[tokio::test]
async fn an_approval_is_remembered_for_its_resources_only() {
    const FILES: &str = "https://files.example/";
    let f = fixture_with(|b| {
        b.openid_connect(OpenIdConnect::default())
            .resources([FILES])
    });
    let mut browser = Browser::new(&f);
    let query = |extra: &str| code_query("demo-client", "email", extra);
    let page = browser.authorize(&query("")).await;
    let approval = browser.sign_in(&page, (BOB, BOB_PASSWORD)).await;
    assert!(is_approval_page(&approval), "{}", approval.body());
    browser.approve(&approval).await;
    let again = browser.authorize(&query("")).await;
    assert!(redirect(&again).query.contains_key("code"), "remembered");

    // The same client and scope for another resource: asked again.
    let files = "&resource=https%3A%2F%2Ffiles.example%2F";
    let asked = browser.authorize(&query(files)).await;
    assert!(is_approval_page(&asked), "{}", asked.body());
    assert!(
        redirect(&browser.approve(&asked).await)
            .query
            .contains_key("code")
    );
    // Both are remembered now, and the default audience with them.
    let issuer: String = url::form_urlencoded::byte_serialize(ISSUER.as_bytes()).collect();
    for extra in [files, "", &format!("{files}&resource={issuer}")] {
        let within = browser.authorize(&query(extra)).await;
        assert!(redirect(&within).query.contains_key("code"), "{extra}");
    }
}

#[tokio::test]
async fn prompt_none_is_answered_login_required_or_consent_required_never_with_a_page() {
    let f = openid_fixture();
    let mut browser = Browser::new(&f);
    let none = |client: &str| code_query(client, "openid", "&prompt=none");
    let refused = browser.authorize(&none("demo-client")).await;
    assert_eq!(redirect(&refused).query["error"], "login_required");
    assert_eq!(redirect(&refused).query["state"], "st");

    let page = browser
        .authorize(&code_query("plain-client", "openid", ""))
        .await;
    browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    // Signed in: a client that needs no approval answers at once.
    let done = browser.authorize(&none("public-client")).await;
    assert!(redirect(&done).query.contains_key("code"));
    // One whose approval was never given: consent_required, not a page.
    let refused = browser.authorize(&none("demo-client")).await;
    assert_eq!(redirect(&refused).query["error"], "consent_required");
}

#[tokio::test]
async fn prompt_login_and_an_elapsed_max_age_ask_for_the_password_again() {
    let f = openid_fixture();
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&code_query("plain-client", "openid", ""))
        .await;
    let first = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    let first = id_token_claims(&f, "plain-client", &first).await;
    f.clock.advance(Duration::from_secs(600));

    let login = browser
        .authorize(&code_query("plain-client", "openid", "&prompt=login"))
        .await;
    assert!(is_sign_in_page(&login), "{}", login.body());
    // A max_age the session is within: no page.
    let within = browser
        .authorize(&code_query("plain-client", "openid", "&max_age=3600"))
        .await;
    assert!(redirect(&within).query.contains_key("code"));
    // One it is past: the password, and the new sign-in's auth_time.
    let past = browser
        .authorize(&code_query("plain-client", "openid", "&max_age=60"))
        .await;
    assert!(is_sign_in_page(&past), "{}", past.body());
    let done = browser.sign_in(&past, (ALICE, ALICE_PASSWORD)).await;
    let claims = id_token_claims(&f, "plain-client", &done).await;
    assert_eq!(
        claims["auth_time"].as_u64().unwrap(),
        first["auth_time"].as_u64().unwrap() + 600
    );
    assert_ne!(claims["sid"], first["sid"], "a new sign-in, a new session");
}

/// OIDC Core §3.1.2.1: `max_age=0` asks for the password even within the second of the
/// session's sign-in (times are whole seconds), and the sign-in it asks for answers.
#[tokio::test]
async fn max_age_zero_asks_for_the_password_even_within_the_sign_ins_second() {
    let f = openid_fixture();
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&code_query("plain-client", "openid", ""))
        .await;
    let signed_in = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    assert!(redirect(&signed_in).query.contains_key("code"));
    // The clock has not moved: the session's auth_time is now.
    let fresh = browser
        .authorize(&code_query("plain-client", "openid", "&max_age=0"))
        .await;
    assert!(is_sign_in_page(&fresh), "{}", fresh.body());
    let done = browser.sign_in(&fresh, (ALICE, ALICE_PASSWORD)).await;
    assert!(
        redirect(&done).query.contains_key("code"),
        "{}",
        done.body()
    );
}

#[tokio::test]
async fn login_hint_prefills_the_username_escaped() {
    let f = openid_fixture();
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&code_query(
            "plain-client",
            "openid",
            "&login_hint=%22%3E%3Cscript%3Ealice%40example.com",
        ))
        .await;
    assert!(is_sign_in_page(&page));
    assert!(
        page.body()
            .contains("value=\"&quot;&gt;&lt;script&gt;alice@example.com\""),
        "{}",
        page.body()
    );
}

#[tokio::test]
async fn without_single_sign_on_every_request_asks_for_the_password() {
    let f = fixture_with(|b| {
        b.openid_connect(OpenIdConnect::default())
            .session_ttl(Duration::ZERO)
    });
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&code_query("plain-client", "openid", ""))
        .await;
    let done = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    assert!(redirect(&done).query.contains_key("code"));
    assert!(browser.signed_on().is_none(), "no session cookie");
    let again = browser
        .authorize(&code_query("plain-client", "openid", ""))
        .await;
    assert!(is_sign_in_page(&again));
    let none = browser
        .authorize(&code_query("plain-client", "openid", "&prompt=none"))
        .await;
    assert_eq!(redirect(&none).query["error"], "login_required");
}

#[tokio::test]
async fn an_id_token_hint_for_another_user_is_not_answered_by_this_browsers_session() {
    let f = openid_fixture();
    let mut alice = Browser::new(&f);
    let page = alice
        .authorize(&code_query("plain-client", "openid", ""))
        .await;
    let alices = id_token_of(&f, &alice.sign_in(&page, (ALICE, ALICE_PASSWORD)).await).await;
    let mut bob = Browser::new(&f);
    let page = bob
        .authorize(&code_query("plain-client", "openid", ""))
        .await;
    let bobs = id_token_of(&f, &bob.sign_in(&page, (BOB, BOB_PASSWORD)).await).await;

    let hinted = |hint: &str| {
        code_query(
            "plain-client",
            "openid",
            &format!("&prompt=none&id_token_hint={hint}"),
        )
    };
    // Alice's own hint: answered at once; Bob's: her session does not stand for him.
    let done = alice.authorize(&hinted(&alices)).await;
    assert!(redirect(&done).query.contains_key("code"));
    let refused = alice.authorize(&hinted(&bobs)).await;
    assert_eq!(redirect(&refused).query["error"], "login_required");
    // Without prompt=none, the sign-in page.
    let asked = alice
        .authorize(&code_query(
            "plain-client",
            "openid",
            &format!("&id_token_hint={bobs}"),
        ))
        .await;
    assert!(is_sign_in_page(&asked), "{}", asked.body());
    // A hint this server did not sign: invalid_request, at the client.
    let forged = format!("{}x", &alices[..alices.len() - 1]);
    let refused = alice.authorize(&hinted(&forged)).await;
    assert_eq!(redirect(&refused).query["error"], "invalid_request");
}

/// A signed-in-browser store that is full: it refuses every new session.
struct Full(grantor::MemoryStore);

#[grantor::async_trait]
impl UserSessionStore for Full {
    async fn insert_user_session(
        &self,
        _id: &SecretDigest,
        _session: grantor::store::UserSession,
        _now: grantor::clock::UnixTime,
    ) -> Result<(), grantor::store::StoreError> {
        Err(grantor::store::StoreError::unavailable("full"))
    }

    async fn find_user_session(
        &self,
        id: &SecretDigest,
        now: grantor::clock::UnixTime,
    ) -> Result<Option<grantor::store::UserSession>, grantor::store::StoreError> {
        self.0.find_user_session(id, now).await
    }

    async fn add_session_grant(
        &self,
        id: &SecretDigest,
        client: &grantor::client::ClientId,
        family: grantor::store::FamilyId,
        now: grantor::clock::UnixTime,
    ) -> Result<bool, grantor::store::StoreError> {
        self.0.add_session_grant(id, client, family, now).await
    }

    async fn end_user_session(
        &self,
        id: &SecretDigest,
        now: grantor::clock::UnixTime,
    ) -> Result<Option<grantor::store::UserSession>, grantor::store::StoreError> {
        self.0.end_user_session(id, now).await
    }
}

#[tokio::test]
async fn a_full_session_store_costs_single_sign_on_never_the_sign_in() {
    let f = fixture_with(|b| {
        b.user_sessions(std::sync::Arc::new(Full(grantor::MemoryStore::new())))
            .openid_connect(OpenIdConnect::default())
    });
    let mut browser = Browser::new(&f);
    let page = browser
        .authorize(&code_query("plain-client", "openid", ""))
        .await;
    let done = browser.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    let claims = id_token_claims(&f, "plain-client", &done).await;
    assert!(claims.get("sid").is_none(), "no session: {claims}");
    assert!(browser.signed_on().is_none(), "no session cookie");
}
