//! Pairwise subject identifiers (OpenID Connect Core §8.1, OIDC Registration §2, §5) through
//! the public API: a pairwise client's ID tokens, userinfo and logout tokens carry a `sub` of
//! its sector alone, the same for every client of that sector, and what it sends back as an
//! `id_token_hint` is compared with it; a public client keeps the user id. Registration takes
//! `subject_type` and `sector_identifier_uri`, whose document (served here by an outbound seam
//! the test answers) must list every redirect URI.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::browser::Browser;
use common::*;
use grantor::client::{Approval, Client, GrantType};
use grantor::outbound::{
    Delivery, FetchError, FetchFuture, Fetched, Outbound, OutboundGet, OutboundPost,
};
use grantor::settings::{OpenIdConnect, PairwiseSecret, RegistrationPolicy};
use grantor::signin::Step;
use grantor::{Decision, Scope};
use http::{Request, Response};
use serde_json::{Value, json};

const SECTOR_URI: &str = "https://sector.example/redirect_uris.json";

/// An outbound seam that serves documents from a map and keeps the forms it was asked to post.
#[derive(Default)]
struct Net {
    documents: Mutex<HashMap<String, String>>,
    posted: Mutex<Vec<OutboundPost>>,
}

impl Net {
    fn serve(&self, url: &str, body: &Value) {
        let mut documents = self.documents.lock().unwrap();
        documents.insert(url.to_owned(), body.to_string());
    }

    /// The claims of the logout tokens posted so far.
    fn logout_tokens(&self) -> Vec<Value> {
        let posted = self.posted.lock().unwrap();
        let tokens = posted.iter().flat_map(|post| &post.form);
        tokens
            .filter(|(name, _)| *name == "logout_token")
            .map(|(_, token)| claims_of(token))
            .collect()
    }
}

impl Outbound for Net {
    fn post(&self, post: OutboundPost, done: Box<dyn FnOnce(Delivery) + Send>) {
        self.posted.lock().unwrap().push(post);
        done(Delivery::Delivered);
    }

    fn get(&self, get: OutboundGet) -> FetchFuture<'_> {
        let documents = self.documents.lock().unwrap();
        let answer = match documents.get(&get.url) {
            Some(body) => Ok(Fetched::new(body.clone())),
            None => Err(FetchError::Status(404)),
        };
        Box::pin(std::future::ready(answer))
    }
}

fn secret() -> PairwiseSecret {
    PairwiseSecret::from_bytes([42; 32])
}

/// A server offering pairwise subjects, registration and back-channel logout through `net`.
fn pairwise_fixture(net: &Arc<Net>) -> Fixture {
    let outbound: Arc<dyn Outbound> = net.clone();
    let policy = RegistrationPolicy::new().scope(&Scope::parse("profile email").unwrap());
    fixture_with(|b| {
        b.openid_connect(OpenIdConnect::default().pairwise_secret(secret()))
            .outbound(outbound)
            .registration(policy)
    })
}

/// A public client of `sector` (pairwise) or with public subjects (`None`), redirected to
/// [`REDIRECT`], issued refresh tokens, logged out over the back channel.
fn app(id: &str, sector: Option<&str>) -> Client {
    let builder = Client::public(id)
        .redirect_uri(REDIRECT)
        .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
        .scopes("profile email")
        .approval(Approval::NotRequired)
        .backchannel_logout_uri(format!("https://{id}.example/backchannel"));
    match sector {
        Some(sector) => builder.pairwise_subjects(sector),
        None => builder,
    }
    .build()
    .unwrap()
}

fn claims_of(jwt: &str) -> Value {
    let payload = jwt.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

fn code_query(client: &str, extra: &str) -> String {
    format!(
        "response_type=code&client_id={client}&redirect_uri={REDIRECT_ENCODED}\
         &scope=openid%20email&state=st&code_challenge={CHALLENGE}\
         &code_challenge_method=S256{extra}"
    )
}

/// The tokens `client` gets for `code`.
async fn exchange(f: &Fixture, client: &str, code: &str) -> Value {
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &code_verifier={VERIFIER}&client_id={client}"
    );
    assert_tokens(&f.token(None, &body).await)
}

/// The tokens `client` gets for `user` approving its OpenID Connect request.
async fn tokens_for(f: &Fixture, client: &str, user: &grantor::store::User) -> Value {
    let pending = f.pending(&code_query(client, "")).await;
    let response = f.server.decide(pending, user.id(), Decision::Approve).await;
    exchange(f, client, &redirect(&response).query["code"]).await
}

async fn userinfo(f: &Fixture, access_token: &str) -> Value {
    let request = Request::get("/api/oauth/userinfo")
        .header("authorization", format!("Bearer {access_token}"))
        .body(Vec::new())
        .unwrap();
    let response = f.server.userinfo(&request).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    json(&response)
}

/// The `sub` of the ID token `client` gets for `user`, checked equal to its userinfo's.
async fn sub_for(f: &Fixture, client: &str, user: &grantor::store::User) -> String {
    let tokens = tokens_for(f, client, user).await;
    let id_token = claims_of(tokens["id_token"].as_str().expect("an id_token"));
    let info = userinfo(f, tokens["access_token"].as_str().unwrap()).await;
    assert_eq!(
        info["sub"], id_token["sub"],
        "userinfo and the ID token agree"
    );
    id_token["sub"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_pairwise_client_knows_a_user_by_a_sub_of_its_sector_a_public_one_by_the_user_id() {
    let f = pairwise_fixture(&Arc::new(Net::default()));
    f.register(app("pairwise-app", Some("app.example")));
    f.register(app("public-app", None));

    let public = sub_for(&f, "public-app", &f.alice).await;
    assert_eq!(public, f.alice.id().as_str());
    let pairwise = sub_for(&f, "pairwise-app", &f.alice).await;
    assert_ne!(pairwise, f.alice.id().as_str());
    assert_eq!(pairwise.len(), 43, "HMAC-SHA-256, base64url");
    // Stable for the user and the sector; another user has another.
    assert_eq!(sub_for(&f, "pairwise-app", &f.alice).await, pairwise);
    assert_ne!(sub_for(&f, "pairwise-app", &f.bob).await, pairwise);
}

#[tokio::test]
async fn clients_of_one_sector_share_a_sub_and_clients_of_another_do_not() {
    let f = pairwise_fixture(&Arc::new(Net::default()));
    f.register(app("mail", Some("suite.example")));
    f.register(app("calendar", Some("Suite.Example")));
    f.register(app("tracker", Some("ads.example")));
    let mail = sub_for(&f, "mail", &f.alice).await;
    assert_eq!(sub_for(&f, "calendar", &f.alice).await, mail);
    let tracker = sub_for(&f, "tracker", &f.alice).await;
    assert_ne!(tracker, mail);
    assert_ne!(tracker, f.alice.id().as_str());
}

#[tokio::test]
async fn the_same_secret_gives_the_same_subs_on_another_server() {
    let first = pairwise_fixture(&Arc::new(Net::default()));
    let second = pairwise_fixture(&Arc::new(Net::default()));
    for f in [&first, &second] {
        f.register(app("pairwise-app", Some("app.example")));
    }
    assert_eq!(
        sub_for(&first, "pairwise-app", &first.alice).await,
        sub_for(&second, "pairwise-app", &second.alice).await
    );
}

#[tokio::test]
async fn a_refresh_answers_an_id_token_with_the_same_pairwise_sub() {
    let f = pairwise_fixture(&Arc::new(Net::default()));
    f.register(app("pairwise-app", Some("app.example")));
    let tokens = tokens_for(&f, "pairwise-app", &f.alice).await;
    let first = claims_of(tokens["id_token"].as_str().unwrap());
    let refresh_token = tokens["refresh_token"].as_str().expect("a refresh token");
    let body =
        format!("grant_type=refresh_token&refresh_token={refresh_token}&client_id=pairwise-app");
    let refreshed = assert_tokens(&f.token(None, &body).await);
    let again = claims_of(refreshed["id_token"].as_str().expect("a new ID token"));
    assert_eq!(again["sub"], first["sub"]);
    assert_ne!(again["sub"], f.alice.id().as_str());
}

#[tokio::test]
async fn a_pairwise_id_token_hint_is_answered_by_its_users_session_and_logs_it_out() {
    let net = Arc::new(Net::default());
    let f = pairwise_fixture(&net);
    f.register(app("pairwise-app", Some("app.example")));
    let mut alice = Browser::new(&f);
    let page = alice.authorize(&code_query("pairwise-app", "")).await;
    let done = alice.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    let tokens = exchange(&f, "pairwise-app", &redirect(&done).query["code"]).await;
    let alices = tokens["id_token"].as_str().unwrap().to_owned();
    let bobs = tokens_for(&f, "pairwise-app", &f.bob).await["id_token"]
        .as_str()
        .unwrap()
        .to_owned();

    // prompt=none with her own pairwise hint: a code at once; with Bob's: not her session.
    let hinted = |hint: &str| {
        code_query(
            "pairwise-app",
            &format!("&prompt=none&id_token_hint={hint}"),
        )
    };
    let answered = alice.authorize(&hinted(&alices)).await;
    assert!(
        redirect(&answered).query.contains_key("code"),
        "{:?}",
        redirect(&answered).query
    );
    let refused = alice.authorize(&hinted(&bobs)).await;
    assert_eq!(redirect(&refused).query["error"], "login_required");

    // Her hint proves the logout (no confirmation), and the logout token names her as the
    // client knows her.
    let cookie = alice.signed_on().expect("signed on").to_owned();
    let logout = Request::get(format!("/api/oauth/logout?id_token_hint={alices}"))
        .header("cookie", format!("grantor-session={cookie}"))
        .body(Vec::new())
        .unwrap();
    let step = f.server.logout(&logout).await;
    assert!(
        matches!(step, Step::LoggedOut),
        "logged out without a confirmation"
    );
    let logout_tokens = net.logout_tokens();
    assert_eq!(logout_tokens.len(), 1);
    assert_eq!(logout_tokens[0]["sub"], claims_of(&alices)["sub"]);
    assert_eq!(logout_tokens[0]["aud"], "pairwise-app");
}

#[tokio::test]
async fn without_a_secret_discovery_lists_public_only_and_a_pairwise_client_gets_no_id_token() {
    let f = fixture_with(|b| b.openid_connect(OpenIdConnect::default()));
    let discovery = json(&f.server.openid_configuration());
    assert_eq!(discovery["subject_types_supported"], json!(["public"]));
    f.register(app("pairwise-app", Some("app.example")));
    let pending = f.pending(&code_query("pairwise-app", "")).await;
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    let code = &redirect(&response).query["code"];
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &code_verifier={VERIFIER}&client_id=pairwise-app"
    );
    let refused = f.token(None, &body).await;
    assert_error(&refused, 500, "server_error");
    assert!(!refused.body().contains(f.alice.id().as_str()));

    let with_secret = pairwise_fixture(&Arc::new(Net::default()));
    let discovery = json(&with_secret.server.openid_configuration());
    assert_eq!(
        discovery["subject_types_supported"],
        json!(["public", "pairwise"])
    );
}

/// Registers `metadata` (redirect URIs at [`REDIRECT`] unless it names its own).
async fn register(f: &Fixture, metadata: Value) -> Response<String> {
    let mut document = json!({
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "scope": "openid email",
    });
    for (name, value) in metadata.as_object().unwrap() {
        document[name] = value.clone();
    }
    let request = Request::post("/api/oauth/register")
        .header("content-type", "application/json")
        .body(document.to_string())
        .unwrap();
    f.server.register(&request).await
}

/// The description of a refused registration, checked `invalid_client_metadata`.
async fn refused(f: &Fixture, metadata: Value) -> String {
    let response = register(f, metadata).await;
    assert_error(&response, 400, "invalid_client_metadata");
    json(&response)["error_description"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn registration_refuses_unknown_subject_types_and_several_hosts_without_a_sector_uri() {
    let f = pairwise_fixture(&Arc::new(Net::default()));
    let why = refused(&f, json!({"subject_type": "anonymous"})).await;
    assert!(why.contains("public or pairwise"), "{why}");
    let two_hosts = json!({
        "subject_type": "pairwise",
        "redirect_uris": ["https://one.example/cb", "https://two.example/cb"],
    });
    let why = refused(&f, two_hosts).await;
    assert!(why.contains("sector_identifier_uri"), "{why}");
    let public_with_sector = json!({"sector_identifier_uri": SECTOR_URI});
    let why = refused(&f, public_with_sector).await;
    assert!(why.contains("pairwise"), "{why}");

    let policy = RegistrationPolicy::new().scope(&Scope::parse("profile email").unwrap());
    let no_secret = fixture_with(|b| {
        b.openid_connect(OpenIdConnect::default())
            .registration(policy)
    });
    let why = refused(&no_secret, json!({"subject_type": "pairwise"})).await;
    assert!(why.contains("not offered"), "{why}");
}

#[tokio::test]
async fn a_sector_document_must_list_every_redirect_uri() {
    let net = Arc::new(Net::default());
    let f = pairwise_fixture(&net);
    let redirect_uris = json!(["https://one.example/cb", "https://two.example/cb"]);
    let metadata = || {
        json!({
            "subject_type": "pairwise",
            "sector_identifier_uri": SECTOR_URI,
            "redirect_uris": redirect_uris,
        })
    };
    let why = refused(&f, metadata()).await;
    assert!(why.contains("could not be read"), "{why}");
    net.serve(SECTOR_URI, &json!({"redirect_uris": redirect_uris}));
    let why = refused(&f, metadata()).await;
    assert!(why.contains("JSON array"), "{why}");
    net.serve(SECTOR_URI, &json!(["https://one.example/cb"]));
    let why = refused(&f, metadata()).await;
    assert!(why.contains("every redirect URI"), "{why}");
    let plain_http = json!({
        "subject_type": "pairwise",
        "sector_identifier_uri": "http://sector.example/redirect_uris.json",
    });
    let why = refused(&f, plain_http).await;
    assert!(why.contains("https"), "{why}");
}

#[tokio::test]
async fn a_client_registered_under_a_good_sector_document_shares_its_sectors_subs() {
    let net = Arc::new(Net::default());
    let f = pairwise_fixture(&net);
    net.serve(
        SECTOR_URI,
        &json!([REDIRECT, OTHER_REDIRECT, "https://elsewhere.example/cb"]),
    );
    let response = register(
        &f,
        json!({
            "subject_type": "pairwise",
            "sector_identifier_uri": SECTOR_URI,
            "redirect_uris": [REDIRECT, OTHER_REDIRECT],
        }),
    )
    .await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let registered = json(&response);
    assert_eq!(registered["subject_type"], "pairwise");
    assert_eq!(registered["sector_identifier_uri"], SECTOR_URI);
    let client_id = registered["client_id"].as_str().unwrap();

    // Self-registered clients are approved by the user: the approval page, then the code.
    let mut alice = Browser::new(&f);
    let page = alice.authorize(&code_query(client_id, "")).await;
    let approval = alice.sign_in(&page, (ALICE, ALICE_PASSWORD)).await;
    let done = alice.approve(&approval).await;
    let tokens = exchange(&f, client_id, &redirect(&done).query["code"]).await;
    let sub = claims_of(tokens["id_token"].as_str().unwrap())["sub"].clone();

    // The sector is the document's host: an administrator's client of it knows her so too.
    f.register(app("sector-app", Some("sector.example")));
    assert_eq!(sub_for(&f, "sector-app", &f.alice).await, sub);
    let public = register(&f, json!({})).await;
    assert_eq!(json(&public)["subject_type"], "public");

    // An update (RFC 7592) fetches the document again: one that no longer lists a redirect
    // URI refuses it.
    net.serve(SECTOR_URI, &json!([REDIRECT]));
    let update = json!({
        "client_id": client_id,
        "token_endpoint_auth_method": "none",
        "subject_type": "pairwise",
        "sector_identifier_uri": SECTOR_URI,
        "redirect_uris": [REDIRECT, OTHER_REDIRECT],
    });
    let token = registered["registration_access_token"].as_str().unwrap();
    let request = Request::put(format!("/api/oauth/register/{client_id}"))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(update.to_string())
        .unwrap();
    let refused = f.server.client_configuration(&request).await;
    assert_error(&refused, 400, "invalid_client_metadata");
    assert!(
        refused.body().contains("every redirect URI"),
        "{}",
        refused.body()
    );
}
