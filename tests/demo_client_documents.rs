//! Client ID metadata documents against `axum_server` and `actix_server` (examples/README.md part 3),
//! served over https from a loopback server whose certificate a CA made here signs (the demo
//! trusts it through `--fetch-ca-file`, and reaches loopback through
//! `--fetch-allow-loopback 1`): a document client signs in through the approval page, which
//! names its host as unverified, and redeems its code; 20 concurrent authorizations for a new
//! document fetch it once; a failed fetch is answered on an error page and retried on the next
//! request; a document breaking a rule is refused on an error page saying why.

mod demo;
#[path = "demo/documents.rs"]
mod documents;

use std::sync::atomic::Ordering;
use std::time::Duration;

use demo::http::*;
use documents::DocumentServer;
use serde_json::json;

each_framework! {
    a_document_client_is_fetched_once_approved_as_unverified_and_redeems_its_code => flow;
    failed_fetches_and_broken_documents_get_error_pages_and_are_not_kept => refusals;
}

fn authorization(client_id: &str) -> Vec<(&str, &str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "profile"),
        ("state", "s-doc"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
}

async fn flow(framework: &str) {
    let documents = DocumentServer::start(framework).await;
    let server = documents.demo(framework);
    let base = &server.base;
    let metadata = metadata_document(base).await;
    assert_eq!(metadata["client_id_metadata_document_supported"], true);

    let url = documents.document("/tools/client.json", "Tool Runner");
    let http = browser();
    let approval = sign_in_via_authorize(&http, base, &authorization(&url), ALICE).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    assert!(approval.body.contains("Tool Runner"), "{}", approval.body);
    assert!(approval.body.contains("Unverified"), "{}", approval.body);
    assert!(approval.body.contains("localhost"), "{}", approval.body);
    let code = callback_query(&decide(&http, base, &approval, "approve").await)
        .remove("code")
        .expect("a code");
    let tokens = token(
        base,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("client_id", &url),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    let tokens = assert_tokens(&tokens);
    assert_scope(&tokens["scope"], "profile");
    assert_eq!(
        documents.requests("/tools/client.json"),
        1,
        "kept after one fetch"
    );

    // Twenty browsers at once for a document nobody asked for yet: one fetch.
    *documents.delay.lock().unwrap() = Duration::from_millis(300);
    let fresh = documents.document("/tools/fresh.json", "Fresh Tool");
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let url = authorize_url(base, &authorization(&fresh));
            tokio::spawn(async move { get(&browser(), &url).await })
        })
        .collect();
    for task in tasks {
        let page = task.await.unwrap();
        assert_eq!(page.status, 200, "{}", page.body);
    }
    assert_eq!(documents.requests("/tools/fresh.json"), 1);
    server.assert_alive_and_calm();
}

async fn refusals(framework: &str) {
    let documents = DocumentServer::start(framework).await;
    let server = documents.demo(framework);
    let base = &server.base;
    // A fetch that fails (500) is an error page, never a redirect, and is not kept: the next
    // request fetches again, and then succeeds.
    let url = documents.url("/flaky.json");
    documents.serve("/flaky.json", 500, "");
    let page = get(&browser(), &authorize_url(base, &authorization(&url))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.location().is_none());
    assert!(page.body.contains("could not be fetched"), "{}", page.body);
    documents.document("/flaky.json", "Flaky Tool");
    let page = get(&browser(), &authorize_url(base, &authorization(&url))).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(documents.requests("/flaky.json"), 2);

    // A document with a secret, or naming another client_id: refused, saying why.
    let secret = documents.url("/secret.json");
    let body = json!({"client_id": secret, "redirect_uris": [CALLBACK], "client_secret": "x"});
    documents.serve("/secret.json", 200, &body.to_string());
    let page = get(&browser(), &authorize_url(base, &authorization(&secret))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("secret"), "{}", page.body);
    let other = documents.url("/other.json");
    let body = json!({"client_id": documents.url("/else.json"), "redirect_uris": [CALLBACK]});
    documents.serve("/other.json", 200, &body.to_string());
    let page = get(&browser(), &authorize_url(base, &authorization(&other))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("client_id"), "{}", page.body);
    // A URL with a query is refused before any fetch.
    let query = format!("{}?v=2", documents.url("/tools/client.json"));
    let page = get(&browser(), &authorize_url(base, &authorization(&query))).await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert_eq!(documents.requests("/tools/client.json?v=2"), 0);
    assert!(documents.served.load(Ordering::SeqCst) >= 4);
    server.assert_alive_and_calm();
}
