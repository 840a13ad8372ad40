//! Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document) through the
//! public API, over an outbound seam the test answers: a `client_id` that is an `https` URL is
//! fetched once for all the requests asking at the same time, kept for its `Cache-Control`
//! within 5 minutes–1 day, never kept when the fetch fails, and refused on an error page (never
//! a redirect) saying why when the URL or the document breaks a rule.

mod common;
#[cfg(feature = "private-key-jwt")]
mod dpop_proofs;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use grantor::Scope;
use grantor::outbound::{
    Delivery, FetchError, FetchFuture, Fetched, Outbound, OutboundGet, OutboundPost,
};
use grantor::settings::{ClientIdDocuments, RegistrationPolicy};
use grantor::{Authorize, Decision, ErrorCode, OAuthError, PendingAuthorization};
use serde_json::{Value, json};

const DOC: &str = "https://app.example/oauth/client.json";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/// An outbound seam serving documents from a map, slowly if asked, counting fetches.
#[derive(Default)]
struct Documents {
    answers: Mutex<HashMap<String, Result<Fetched, FetchError>>>,
    fetches: AtomicUsize,
    delay: Mutex<Duration>,
}

impl Documents {
    fn serve(&self, url: &str, answer: Result<Fetched, FetchError>) {
        self.answers.lock().unwrap().insert(url.to_owned(), answer);
    }

    fn serve_json(&self, url: &str, document: &Value) {
        let fetched = Fetched::new(document.to_string()).cache_control("max-age=3600");
        self.serve(url, Ok(fetched));
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

impl Outbound for Documents {
    fn post(&self, _: OutboundPost, done: Box<dyn FnOnce(Delivery) + Send>) {
        done(Delivery::Failed);
    }

    fn get(&self, get: OutboundGet) -> FetchFuture<'_> {
        Box::pin(async move {
            self.fetches.fetch_add(1, Ordering::SeqCst);
            let delay = *self.delay.lock().unwrap();
            tokio::time::sleep(delay).await;
            let answers = self.answers.lock().unwrap();
            answers
                .get(&get.url)
                .cloned()
                .unwrap_or(Err(FetchError::Status(404)))
        })
    }
}

fn document(url: &str) -> Value {
    json!({
        "client_id": url,
        "client_name": "Tool Runner",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    })
}

fn with_documents(settings: ClientIdDocuments) -> (Fixture, Arc<Documents>) {
    let documents = Arc::new(Documents::default());
    let outbound: Arc<dyn Outbound> = documents.clone();
    let settings = settings.scope("profile email");
    let f = fixture_with(|b| b.outbound(outbound).client_id_metadata_documents(settings));
    (f, documents)
}

fn query(client_id: &str) -> String {
    let id: String = url::form_urlencoded::byte_serialize(client_id.as_bytes()).collect();
    format!(
        "response_type=code&client_id={id}&redirect_uri={REDIRECT_ENCODED}&state=s1\
         &scope=profile&code_challenge={CHALLENGE}&code_challenge_method=S256"
    )
}

async fn authorize(f: &Fixture, client_id: &str) -> Authorize {
    f.server
        .authorize(&authorize_request(&query(client_id)))
        .await
}

/// The error page of a refused authorization request: never a redirect.
fn refused(answer: Authorize) -> OAuthError {
    match answer {
        Authorize::Reject(error) => error,
        other => panic!("expected an error page, got {other:?}"),
    }
}

fn pending(answer: Authorize) -> PendingAuthorization {
    match answer {
        Authorize::SignIn(pending) => pending,
        other => panic!("expected the sign-in, got {other:?}"),
    }
}

#[tokio::test]
async fn the_metadata_says_documents_are_taken() {
    let (f, _) = with_documents(ClientIdDocuments::new());
    let metadata = json(&f.server.metadata());
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    let plain = fixture();
    assert!(json(&plain.server.metadata())["client_id_metadata_document_supported"].is_null());
}

#[tokio::test]
async fn a_document_client_signs_in_is_always_asked_and_redeems_its_code() {
    let (f, documents) = with_documents(ClientIdDocuments::new());
    documents.serve_json(DOC, &document(DOC));
    let pending = pending(authorize(&f, DOC).await);
    assert_eq!(pending.client().name(), "Tool Runner");
    assert!(pending.client().is_from_metadata_document());
    assert!(
        pending.needs_approval(),
        "a document's client is always asked"
    );
    let response = f
        .server
        .decide(pending, f.alice.id(), Decision::Approve)
        .await;
    let code = redirect(&response).query["code"].clone();
    let id: String = url::form_urlencoded::byte_serialize(DOC.as_bytes()).collect();
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &client_id={id}&code_verifier={VERIFIER}"
    );
    let tokens = assert_tokens(&f.token(None, &body).await);
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    assert_eq!(documents.fetches(), 1, "kept after the first fetch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_requests_for_a_new_document_fetch_it_once() {
    let (f, documents) = with_documents(ClientIdDocuments::new());
    documents.serve_json(DOC, &document(DOC));
    *documents.delay.lock().unwrap() = Duration::from_millis(200);
    let f = Arc::new(f);
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let f = Arc::clone(&f);
            tokio::spawn(async move { matches!(authorize(&f, DOC).await, Authorize::SignIn(_)) })
        })
        .collect();
    for task in tasks {
        assert!(task.await.unwrap(), "every request gets the client");
    }
    assert_eq!(documents.fetches(), 1);
}

#[tokio::test]
async fn a_failed_fetch_is_not_kept_and_the_next_request_fetches_again() {
    for failure in [
        FetchError::Timeout,
        FetchError::Unreachable,
        FetchError::Status(500),
        FetchError::Status(503),
    ] {
        let (f, documents) = with_documents(ClientIdDocuments::new());
        documents.serve(DOC, Err(failure));
        let error = refused(authorize(&f, DOC).await);
        assert_eq!(error.code(), ErrorCode::InvalidRequest);
        assert!(
            error.description().contains("could not be fetched"),
            "{error:?}"
        );
        documents.serve_json(DOC, &document(DOC));
        pending(authorize(&f, DOC).await);
        assert_eq!(documents.fetches(), 2, "{failure:?}");
    }
}

#[tokio::test]
async fn a_refusal_by_the_documents_host_is_remembered_for_a_minute() {
    for (name, answer) in [
        ("not-found", Err(FetchError::Status(404))),
        ("redirect", Err(FetchError::Redirected)),
        ("large", Err(FetchError::TooLarge)),
        ("html", Ok(Fetched::new("<html>"))),
        (
            "secret",
            Ok(Fetched::new(
                json!({"client_id": DOC, "redirect_uris": [REDIRECT], "client_secret": "s"})
                    .to_string(),
            )),
        ),
    ] {
        let (f, documents) = with_documents(ClientIdDocuments::new());
        documents.serve(DOC, answer);
        let first = refused(authorize(&f, DOC).await).description().to_owned();
        // Naming it again within the minute fetches nothing, and says the same.
        documents.serve_json(DOC, &document(DOC));
        f.clock.advance(Duration::from_secs(59));
        let again = refused(authorize(&f, DOC).await);
        assert_eq!(again.description(), first, "{name}");
        assert_eq!(documents.fetches(), 1, "{name}");
        f.clock
            .advance(ClientIdDocuments::FAILURE_CACHE - Duration::from_secs(58));
        pending(authorize(&f, DOC).await);
        assert_eq!(documents.fetches(), 2, "{name}");
    }
}

#[tokio::test]
async fn a_flood_of_failing_urls_never_evicts_a_kept_document() {
    let (f, documents) = with_documents(ClientIdDocuments::new().capacity(2));
    documents.serve_json(DOC, &document(DOC));
    pending(authorize(&f, DOC).await);
    // More refusals than are remembered: the oldest go, the document stays.
    let flood = ClientIdDocuments::MAX_FAILURES + 10;
    for n in 0..flood {
        let url = format!("https://flood.example/{n}.json");
        refused(authorize(&f, &url).await);
    }
    assert_eq!(documents.fetches(), 1 + flood);
    pending(authorize(&f, DOC).await);
    assert_eq!(documents.fetches(), 1 + flood, "the document is still kept");
    // The most recent refusals are remembered, the first ones forgotten.
    refused(authorize(&f, &format!("https://flood.example/{}.json", flood - 1)).await);
    assert_eq!(documents.fetches(), 1 + flood);
    refused(authorize(&f, "https://flood.example/0.json").await);
    assert_eq!(documents.fetches(), 2 + flood);
}

#[tokio::test]
async fn an_outbound_too_busy_for_the_server_is_temporarily_unavailable() {
    let (f, documents) = with_documents(ClientIdDocuments::new());
    documents.serve(DOC, Err(FetchError::Busy));
    let error = refused(authorize(&f, DOC).await);
    assert_eq!(error.code(), ErrorCode::TemporarilyUnavailable, "{error:?}");
    // Not remembered: the next request fetches.
    documents.serve_json(DOC, &document(DOC));
    pending(authorize(&f, DOC).await);
    assert_eq!(documents.fetches(), 2);
}

#[tokio::test]
async fn a_document_client_gets_no_more_scope_than_a_self_registered_one_by_default() {
    let supported = Scope::parse("profile email admin").unwrap();
    for (policy, allowed) in [(None, ""), (Some("profile"), "profile")] {
        let documents = Arc::new(Documents::default());
        documents.serve_json(DOC, &document(DOC));
        let outbound: Arc<dyn Outbound> = documents.clone();
        let f = fixture_with(|b| {
            let b = b
                .scopes_supported(&supported)
                .outbound(outbound)
                .client_id_metadata_documents(ClientIdDocuments::new());
            match policy {
                Some(scope) => {
                    b.registration(RegistrationPolicy::new().scope(&Scope::parse(scope).unwrap()))
                }
                None => b,
            }
        });
        for asked in ["profile", "admin", "profile admin", "email"] {
            let query = query(DOC).replace("scope=profile", &format!("scope={asked}"));
            let query = query.replace(' ', "%20");
            let answer = f.server.authorize(&authorize_request(&query)).await;
            let granted = asked.split(' ').all(|s| allowed.split(' ').any(|a| a == s));
            match answer {
                Authorize::SignIn(_) => assert!(granted, "{policy:?} gave {asked}"),
                Authorize::Redirect(redirect) => {
                    assert!(!granted, "{policy:?} refused {asked}: {redirect:?}");
                    assert_eq!(redirect.error().code(), ErrorCode::InvalidScope);
                }
                Authorize::Reject(error) => panic!("{policy:?}, {asked}: {error:?}"),
            }
        }
    }
}

#[tokio::test]
async fn a_document_is_kept_for_its_cache_control_within_five_minutes_and_a_day() {
    let (f, documents) = with_documents(ClientIdDocuments::new());
    let short = "https://app.example/short.json";
    let fetched = Fetched::new(document(short).to_string()).cache_control("max-age=10");
    documents.serve(short, Ok(fetched));
    documents.serve_json(DOC, &document(DOC));
    pending(authorize(&f, short).await);
    pending(authorize(&f, DOC).await);
    // Ten seconds asked, five minutes kept.
    f.clock.advance(Duration::from_secs(200));
    pending(authorize(&f, short).await);
    assert_eq!(documents.fetches(), 2);
    f.clock.advance(Duration::from_secs(200));
    pending(authorize(&f, short).await);
    pending(authorize(&f, DOC).await);
    assert_eq!(documents.fetches(), 3, "the hour-long one is still kept");
}

#[tokio::test]
async fn documents_breaking_a_rule_are_refused_on_an_error_page_saying_why() {
    let (f, documents) = with_documents(ClientIdDocuments::new());
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "other-id",
            json!({"client_id": "https://app.example/other", "redirect_uris": [REDIRECT]}),
            "client_id",
        ),
        (
            "secret",
            json!({"client_id": "", "redirect_uris": [REDIRECT], "client_secret": "s"}),
            "secret",
        ),
        (
            "basic",
            json!({"client_id": "", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"}),
            "token_endpoint_auth_method",
        ),
        (
            "no-keys",
            json!({"client_id": "", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}),
            "jwks",
        ),
        ("no-uris", json!({"client_id": ""}), "redirect_uris"),
        (
            "plain-http",
            json!({"client_id": "", "redirect_uris": ["http://app.example/cb"]}),
            "redirect_uris",
        ),
        (
            "implicit",
            json!({"client_id": "", "redirect_uris": [REDIRECT], "grant_types": ["implicit"]}),
            "grant_types",
        ),
        ("array", json!(["not", "an", "object"]), "JSON object"),
        (
            "bidi",
            json!({"client_id": "", "redirect_uris": [REDIRECT], "client_name": "Demo \u{202e}tneilC"}),
            "bidi",
        ),
        (
            "invisible",
            json!({"client_id": "", "redirect_uris": [REDIRECT], "client_name": "Demo\u{200b}Client"}),
            "invisible",
        ),
    ];
    for (name, mut body, why) in cases {
        let url = format!("https://app.example/{name}.json");
        if body.get("client_id") == Some(&json!("")) {
            body["client_id"] = json!(url);
        }
        documents.serve_json(&url, &body);
        let error = refused(authorize(&f, &url).await);
        assert!(error.description().contains(why), "{name}: {error:?}");
    }
    // A redirect URI the document does not list.
    let listed_elsewhere = "https://app.example/elsewhere.json";
    let mut body = document(listed_elsewhere);
    body["redirect_uris"] = json!(["https://app.example/cb"]);
    documents.serve_json(listed_elsewhere, &body);
    let error = refused(authorize(&f, listed_elsewhere).await);
    assert!(error.description().contains("redirect_uri"), "{error:?}");
    // Not JSON, too large, a redirect, another status: one generic reason, which tells a
    // caller nothing of what the URL answered.
    let generic = "the client metadata document could not be fetched as a JSON object";
    for (name, answer) in [
        ("html", Ok(Fetched::new("<html>"))),
        ("large", Err(FetchError::TooLarge)),
        ("redirect", Err(FetchError::Redirected)),
        ("gone", Err(FetchError::Status(410))),
        ("down", Err(FetchError::Status(503))),
        ("slow", Err(FetchError::Timeout)),
    ] {
        let url = format!("https://app.example/broken-{name}.json");
        documents.serve(&url, answer);
        let error = refused(authorize(&f, &url).await);
        assert_eq!(error.description(), generic, "{name}");
    }
}

#[tokio::test]
async fn urls_breaking_a_rule_are_refused_before_any_fetch() {
    let (f, documents) = with_documents(ClientIdDocuments::new().deny_hosts(["evil.example"]));
    for (url, why) in [
        ("https://app.example/c.json?v=1", "query"),
        ("https://app.example/c.json#x", "fragment"),
        ("https://app.example/", "path"),
        ("https://user@app.example/c.json", "userinfo"),
        ("https://app.example/a/%2E%2E/c.json", "dot segment"),
        ("https://evil.example/c.json", "host"),
        // A trailing dot names the same host: denied too.
        ("https://evil.example./c.json", "host"),
    ] {
        let error = refused(authorize(&f, url).await);
        assert!(error.description().contains(why), "{url}: {error:?}");
    }
    assert_eq!(documents.fetches(), 0);
    // An allow list refuses every other host.
    let (f, documents) = with_documents(ClientIdDocuments::new().allow_hosts(["tools.example"]));
    let error = refused(authorize(&f, DOC).await);
    assert!(error.description().contains("host"), "{error:?}");
    assert_eq!(documents.fetches(), 0);
    // A host listed with a trailing dot or in capitals is the same host.
    let tools = "https://tools.example./c.json";
    let (f, documents) = with_documents(ClientIdDocuments::new().allow_hosts(["Tools.Example."]));
    documents.serve_json(tools, &document(tools));
    pending(authorize(&f, tools).await);
    let (f, documents) = with_documents(ClientIdDocuments::new().deny_hosts(["EVIL.example."]));
    refused(authorize(&f, "https://evil.example/c.json").await);
    assert_eq!(documents.fetches(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_slow_host_holds_at_most_its_share_of_fetches() {
    let (f, documents) = with_documents(ClientIdDocuments::new());
    *documents.delay.lock().unwrap() = Duration::from_millis(500);
    let f = Arc::new(f);
    let urls: Vec<String> = (0..8)
        .map(|n| format!("https://slow.example/client-{n}.json"))
        .collect();
    for url in &urls {
        documents.serve_json(url, &document(url));
    }
    documents.serve_json(DOC, &document(DOC));
    let tasks: Vec<_> = urls
        .iter()
        .cloned()
        .map(|url| {
            let f = Arc::clone(&f);
            tokio::spawn(async move { authorize(&f, &url).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Another host is not held up by the slow one.
    pending(authorize(&f, DOC).await);
    let mut busy = 0;
    for task in tasks {
        if let Authorize::Reject(error) = task.await.unwrap() {
            assert_eq!(error.code(), ErrorCode::TemporarilyUnavailable, "{error:?}");
            busy += 1;
        }
    }
    assert_eq!(busy, 8 - ClientIdDocuments::MAX_FETCHES_PER_HOST);
}

#[tokio::test]
async fn registered_clients_are_never_fetched() {
    let (f, documents) = with_documents(ClientIdDocuments::new());
    let fast = f.fast_id.clone();
    let query = format!(
        "response_type=code&client_id={fast}&redirect_uri={REDIRECT_ENCODED}\
         &code_challenge={CHALLENGE}&code_challenge_method=S256"
    );
    pending(f.server.authorize(&authorize_request(&query)).await);
    // An http URL is no document: an unknown client.
    let error = refused(authorize(&f, "http://app.example/client.json").await);
    assert!(error.description().contains("unknown"), "{error:?}");
    assert_eq!(documents.fetches(), 0);
}

/// A document client that authenticates with `private_key_jwt` and the keys of its document.
#[cfg(feature = "private-key-jwt")]
mod keyed {
    use super::*;

    use super::dpop_proofs::ProofKey;

    const TOKEN_URL: &str = "http://127.0.0.1:8080/api/oauth/token";

    /// A code for the document client `url`, approved by Alice.
    async fn approved_code(f: &Fixture, url: &str) -> String {
        let pending = pending(authorize(f, url).await);
        let response = f
            .server
            .decide(pending, f.alice.id(), Decision::Approve)
            .await;
        redirect(&response).query["code"].clone()
    }

    use grantor::client_assertion::ASSERTION_TYPE as ASSERTION;

    #[tokio::test]
    async fn a_keyed_document_client_redeems_its_code_with_an_assertion_only() {
        let (f, documents) = with_documents(ClientIdDocuments::new());
        let url = "https://app.example/keyed.json";
        let key = ProofKey::es256(41);
        let mut jwk = serde_json::to_value(&key.jwk).unwrap();
        jwk["kid"] = json!("k1");
        let mut body = document(url);
        body["token_endpoint_auth_method"] = json!("private_key_jwt");
        body["jwks"] = json!({ "keys": [jwk] });
        documents.serve_json(url, &body);
        let exchange = |code: &str| {
            format!(
                "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
                 &code_verifier={VERIFIER}"
            )
        };
        // The client's id alone does not authenticate it.
        let id: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
        let first = approved_code(&f, url).await;
        let alone = f
            .token(None, &format!("{}&client_id={id}", exchange(&first)))
            .await;
        assert_error(&alone, 401, "invalid_client");
        // An assertion signed with the document's key does.
        let claims = json!({
            "iss": url, "sub": url, "aud": TOKEN_URL, "exp": START + 60, "iat": START,
            "jti": "keyed-1",
        });
        let assertion = key.sign_with(&claims, |header| {
            header.typ = Some("JWT".to_owned());
            header.jwk = None;
            header.kid = Some("k1".to_owned());
        });
        let second = approved_code(&f, url).await;
        let body = format!(
            "{}&client_assertion_type={ASSERTION}&client_assertion={assertion}",
            exchange(&second)
        );
        assert_tokens(&f.token(None, &body).await);
    }
}

#[tokio::test]
async fn the_cache_keeps_at_most_its_capacity_the_least_recently_used_going_first() {
    let (f, documents) = with_documents(ClientIdDocuments::new().capacity(2));
    let urls: Vec<String> = (0..3)
        .map(|n| format!("https://app.example/client-{n}.json"))
        .collect();
    for url in &urls {
        documents.serve_json(url, &document(url));
    }
    pending(authorize(&f, &urls[0]).await);
    pending(authorize(&f, &urls[1]).await);
    pending(authorize(&f, &urls[0]).await);
    assert_eq!(documents.fetches(), 2, "both kept");
    // A third pushes out the one used longest ago (client-1), not the one just used.
    pending(authorize(&f, &urls[2]).await);
    pending(authorize(&f, &urls[0]).await);
    assert_eq!(documents.fetches(), 3);
    pending(authorize(&f, &urls[1]).await);
    assert_eq!(documents.fetches(), 4, "the evicted one is fetched again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_goes_away_mid_fetch_frees_its_url_for_the_next() {
    let (f, documents) = with_documents(ClientIdDocuments::new());
    documents.serve_json(DOC, &document(DOC));
    *documents.delay.lock().unwrap() = Duration::from_millis(400);
    let f = Arc::new(f);
    let gone = {
        let f = Arc::clone(&f);
        tokio::spawn(async move { authorize(&f, DOC).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    gone.abort();
    let _ = gone.await;
    // Not stuck waiting for a fetch nobody finishes: this request fetches itself.
    *documents.delay.lock().unwrap() = Duration::ZERO;
    let next = tokio::time::timeout(Duration::from_secs(5), authorize(&f, DOC)).await;
    pending(next.expect("the URL was freed, not left waiting on the gone fetch"));
    assert_eq!(documents.fetches(), 2);
}
