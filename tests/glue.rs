//! The framework glue (features `axum` and `actix`): the endpoints mounted in one call answer
//! as grantor does (tokens, 405 for another method, 413 for a body over the limit, metadata),
//! and the bearer extractors hand a live token's grant to the handler and refuse the rest as
//! RFC 6750 says (401 with the `Bearer` challenge, 403 `insufficient_scope`), and a sign-in
//! short of a step-up as RFC 9470 says (401 `insufficient_user_authentication`).

mod common;

use std::time::Duration;

use common::*;
use grantor::{RequiredAuthentication, RequiredScope};

/// Handlers needing `profile`.
struct Profile;

impl RequiredScope for Profile {
    const SCOPE: &'static str = "profile";
}

/// Handlers needing `email`, which the tokens below lack.
struct Email;

impl RequiredScope for Email {
    const SCOPE: &'static str = "email";
}

/// Handlers needing a sign-in within five minutes, of any class.
struct Recent;

impl RequiredAuthentication for Recent {
    const MAX_AGE: Option<Duration> = Some(Duration::from_secs(300));
}

/// Handlers needing a sign-in with a second factor within five minutes.
struct Strong;

impl RequiredAuthentication for Strong {
    const ACR_VALUES: &'static [&'static str] = &["urn:grantor:acr:mfa"];
    const MAX_AGE: Option<Duration> = Some(Duration::from_secs(300));
}

/// A handler's mistake: a class that cannot go in a challenge.
struct Malformed;

impl RequiredAuthentication for Malformed {
    const ACR_VALUES: &'static [&'static str] = &["two words"];
}

/// Alice's token from the password grant: signed in now, of no named class.
async fn alice_token(f: &Fixture) -> String {
    let basic = basic(&f.fast_id, &f.fast_secret);
    let body = "grant_type=password&username=alice%40example.com&password=alice-password-1";
    let response = f.token(Some(&basic), body).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let tokens: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    tokens["access_token"].as_str().unwrap().to_owned()
}

/// What each step-up case must answer for Alice's token: status, and a `WWW-Authenticate`
/// that contains the text (none for a pass or the host's mistake).
const STEP_UPS: [(&str, u16, &str); 3] = [
    ("/recent", 200, ""),
    (
        "/strong",
        401,
        "error=\"insufficient_user_authentication\", \
         error_description=\"a different authentication level is required\", \
         acr_values=\"urn:grantor:acr:mfa\", max_age=300",
    ),
    ("/malformed", 500, ""),
];

/// A client-credentials token of the fast client, scope `profile`.
async fn profile_token(f: &Fixture) -> String {
    let basic = basic(&f.fast_id, &f.fast_secret);
    let response = f
        .token(Some(&basic), "grant_type=client_credentials&scope=profile")
        .await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let tokens: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    tokens["access_token"].as_str().unwrap().to_owned()
}

/// What each case must answer: status, and a `WWW-Authenticate` that contains the text.
const REFUSALS: [(&str, u16, &str); 3] = [
    ("/any", 401, "Bearer realm="),
    ("/any", 401, "error=\"invalid_token\""),
    ("/email", 403, "error=\"insufficient_scope\""),
];

/// A client's certificate over mutual TLS (binding hashes the DER bytes and parses nothing).
fn certificate(der: &[u8]) -> grantor::mtls::ClientCertificate {
    grantor::mtls::ClientCertificate::from_der_chain([der.to_vec()]).unwrap()
}

/// A client-credentials token of the fast client bound to `presented` (RFC 8705 §3).
async fn certificate_bound_token(
    f: &Fixture,
    presented: &grantor::mtls::ClientCertificate,
) -> String {
    let basic = basic(&f.fast_id, &f.fast_secret);
    let mut request = token_request(Some(&basic), "grant_type=client_credentials");
    request.extensions_mut().insert(presented.clone());
    let response = f.server.token(&request).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let tokens: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    tokens["access_token"].as_str().unwrap().to_owned()
}

/// The body of a token request over the server's limit.
fn oversized(f: &Fixture) -> String {
    format!(
        "grant_type=client_credentials&scope={}",
        "a".repeat(f.server.max_body_bytes())
    )
}

mod with_axum {
    use super::*;
    use ::axum::Router;
    use ::axum::body::Body;
    use ::axum::routing::get;
    use grantor::axum::{Bearer, ScopedBearer, StepUpBearer};
    use http::Request;
    use tower::ServiceExt as _;

    async fn any(Bearer(grant): Bearer) -> String {
        grant.authorization.client_id.as_str().to_owned()
    }

    async fn profile(ScopedBearer(grant, ..): ScopedBearer<Profile>) -> String {
        grant.authorization.scope.as_str().to_owned()
    }

    async fn email(ScopedBearer(grant, ..): ScopedBearer<Email>) -> String {
        grant.authorization.scope.as_str().to_owned()
    }

    async fn recent(StepUpBearer(grant, ..): StepUpBearer<Recent>) -> String {
        grant.authorization.client_id.as_str().to_owned()
    }

    async fn strong(StepUpBearer(grant, ..): StepUpBearer<Strong>) -> String {
        grant.authorization.client_id.as_str().to_owned()
    }

    async fn malformed(StepUpBearer(grant, ..): StepUpBearer<Malformed>) -> String {
        grant.authorization.client_id.as_str().to_owned()
    }

    #[tokio::test]
    async fn the_step_up_extractor_passes_a_sign_in_that_satisfies_it_and_refuses_the_rest() {
        let f = fixture();
        let token = alice_token(&f).await;
        let app = Router::new()
            .route("/recent", get(recent))
            .route("/strong", get(strong))
            .route("/malformed", get(malformed))
            .with_state(f.server.clone());
        for (path, status, challenge) in STEP_UPS {
            let (got, header, body) = call(&app, path, Some(&token)).await;
            assert_eq!(got, status, "{path}: {body}");
            assert!(header.contains(challenge), "{path}: {header}");
        }
        // A client's own token has no sign-in to satisfy even an age.
        let own = profile_token(&f).await;
        let (got, header, _) = call(&app, "/recent", Some(&own)).await;
        assert_eq!(got, 401);
        assert!(
            header.contains("insufficient_user_authentication"),
            "{header}"
        );
    }

    async fn call(app: &Router, path: &str, token: Option<&str>) -> (u16, String, String) {
        let mut request = Request::get(path);
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let response = app
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get("www-authenticate")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = ::axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, challenge, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn the_extractors_accept_a_live_token_and_refuse_as_rfc_6750_says() {
        let f = fixture();
        let token = profile_token(&f).await;
        let app = Router::new()
            .route("/any", get(any))
            .route("/profile", get(profile))
            .route("/email", get(email))
            .with_state(f.server.clone());

        assert_eq!(
            call(&app, "/any", Some(&token)).await,
            (200, String::new(), f.fast_id.clone())
        );
        assert_eq!(
            call(&app, "/profile", Some(&token)).await,
            (200, String::new(), "profile".to_owned())
        );
        let tokens = [None, Some("not-a-live-token"), Some(token.as_str())];
        for ((path, status, challenge), token) in REFUSALS.into_iter().zip(tokens) {
            let (got, header, _) = call(&app, path, token).await;
            assert_eq!(got, status, "{path} with {token:?}");
            assert!(header.contains(challenge), "{path}: {header}");
        }
    }
}

mod with_axum_certificates {
    use super::*;
    use ::axum::Router;
    use ::axum::body::Body;
    use ::axum::routing::get;
    use grantor::axum::Bearer;
    use http::Request;
    use tower::ServiceExt as _;

    async fn any(Bearer(grant): Bearer) -> String {
        grant.authorization.client_id.as_str().to_owned()
    }

    #[tokio::test]
    async fn the_extractor_honours_a_certificate_bound_token_only_with_its_certificate() {
        let f = fixture_with(|b| b.certificate_bound_tokens(true));
        let presented = certificate(b"client-a");
        let token = certificate_bound_token(&f, &presented).await;
        let app = Router::new()
            .route("/any", get(any))
            .with_state(f.server.clone());
        for (over, status) in [
            (Some(presented), 200),
            (Some(certificate(b"client-b")), 401),
            (None, 401),
        ] {
            let mut request = Request::get("/any")
                .header("authorization", format!("Bearer {token}"))
                .body(Body::empty())
                .unwrap();
            if let Some(over) = over.clone() {
                request.extensions_mut().insert(over);
            }
            let response = app.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status().as_u16(), status, "{over:?}");
            if status == 401 {
                let challenge = response.headers()["www-authenticate"].to_str().unwrap();
                assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
            }
        }
    }
}

mod with_axum_endpoints {
    use super::*;
    use ::axum::body::Body;
    use http::Request;
    use tower::ServiceExt as _;

    async fn send(app: &::axum::Router, request: Request<Body>) -> (u16, String) {
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let body = ::axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    fn token(basic: &str, body: String) -> Request<Body> {
        Request::post("/api/oauth/token")
            .header("authorization", basic)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap()
    }

    #[tokio::test]
    async fn the_endpoints_answer_as_grantor_does() {
        let f = fixture();
        let app: ::axum::Router = grantor::axum::endpoints(&f.server);
        let basic = basic(&f.fast_id, &f.fast_secret);

        let (status, body) =
            send(&app, token(&basic, "grant_type=client_credentials".into())).await;
        assert_eq!(status, 200, "{body}");
        let tokens: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(tokens["access_token"].is_string());

        let get = Request::get("/api/oauth/token")
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(&app, get).await.0, 405);
        let (status, body) = send(&app, token(&basic, oversized(&f))).await;
        assert_eq!(status, 413, "{body}");

        let introspect = Request::post("/api/oauth/introspect")
            .header("authorization", &basic)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from("token=unknown"))
            .unwrap();
        assert_eq!(
            send(&app, introspect).await,
            (200, r#"{"active":false}"#.to_owned())
        );

        let metadata = Request::get("/.well-known/oauth-authorization-server")
            .body(Body::empty())
            .unwrap();
        let (status, body) = send(&app, metadata).await;
        assert_eq!(status, 200);
        let metadata: serde_json::Value = serde_json::from_str(&body).unwrap();
        let expected = format!("{}/api/oauth/token", f.server.issuer());
        assert_eq!(metadata["token_endpoint"], expected.as_str());
    }

    /// `Router::layer` wraps a router's fallback too, and merging hands the fallback on: a
    /// guarded API merged into grantor's (either way round) keeps unknown paths 404, not 401.
    #[tokio::test]
    async fn a_router_layered_with_require_bearer_merged_in_leaves_unknown_paths_404() {
        use ::axum::routing::get;
        use grantor::layer::RequireBearer;
        let f = fixture();
        let api = || {
            ::axum::Router::new()
                .route("/mcp", get(|| async { "tools" }))
                .layer(RequireBearer::new(f.server.clone()))
        };
        let get = |path: &str| Request::get(path).body(Body::empty()).unwrap();
        for app in [
            grantor::axum::endpoints(&f.server).merge(api()),
            api().merge(grantor::axum::endpoints(&f.server)),
        ] {
            let (status, _) = send(&app, get("/mcp")).await;
            assert_eq!(status, 401, "the guarded route still asks for a token");
            for unknown in ["/unknown", "/mcp/other", "/api/oauth/tokens"] {
                let (status, body) = send(&app, get(unknown)).await;
                assert_eq!(status, 404, "{unknown}: {body}");
            }
        }
    }
}

mod with_actix_endpoints {
    use super::*;
    use ::actix_web::{App, test};

    #[actix_web::test]
    async fn the_endpoints_answer_as_grantor_does() {
        let f = fixture();
        let app =
            test::init_service(App::new().configure(grantor::actix::endpoints(&f.server))).await;
        let basic = basic(&f.fast_id, &f.fast_secret);
        let token = |body: String| {
            test::TestRequest::post()
                .uri("/api/oauth/token")
                .insert_header(("authorization", basic.clone()))
                .insert_header(("content-type", "application/x-www-form-urlencoded"))
                .set_payload(body)
                .to_request()
        };

        let response =
            test::call_service(&app, token("grant_type=client_credentials".into())).await;
        assert_eq!(response.status().as_u16(), 200);
        let tokens: serde_json::Value = test::read_body_json(response).await;
        assert!(tokens["access_token"].is_string());

        let get = test::TestRequest::get()
            .uri("/api/oauth/token")
            .to_request();
        assert_eq!(test::call_service(&app, get).await.status().as_u16(), 405);
        let response = test::call_service(&app, token(oversized(&f))).await;
        assert_eq!(response.status().as_u16(), 413);

        let metadata = test::TestRequest::get()
            .uri("/.well-known/oauth-authorization-server")
            .to_request();
        let response = test::call_service(&app, metadata).await;
        assert_eq!(response.status().as_u16(), 200);
        let metadata: serde_json::Value = test::read_body_json(response).await;
        let expected = format!("{}/api/oauth/token", f.server.issuer());
        assert_eq!(metadata["token_endpoint"], expected.as_str());
    }
}

mod with_actix {
    use super::*;
    use ::actix_web::{App, HttpResponse, test, web};
    use grantor::actix::{Bearer, ScopedBearer, StepUpBearer};

    async fn any(Bearer(grant): Bearer) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.client_id.as_str().to_owned())
    }

    async fn profile(ScopedBearer(grant, ..): ScopedBearer<Profile>) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.scope.as_str().to_owned())
    }

    async fn email(ScopedBearer(grant, ..): ScopedBearer<Email>) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.scope.as_str().to_owned())
    }

    async fn recent(StepUpBearer(grant, ..): StepUpBearer<Recent>) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.client_id.as_str().to_owned())
    }

    async fn strong(StepUpBearer(grant, ..): StepUpBearer<Strong>) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.client_id.as_str().to_owned())
    }

    async fn malformed(StepUpBearer(grant, ..): StepUpBearer<Malformed>) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.client_id.as_str().to_owned())
    }

    #[actix_web::test]
    async fn the_step_up_extractor_passes_a_sign_in_that_satisfies_it_and_refuses_the_rest() {
        let f = fixture();
        let token = alice_token(&f).await;
        let own = profile_token(&f).await;
        let app = test::init_service(
            App::new()
                .app_data(web::Data::new(f.server.clone()))
                .route("/recent", web::get().to(recent))
                .route("/strong", web::get().to(strong))
                .route("/malformed", web::get().to(malformed)),
        )
        .await;
        let call = |path: &str, token: &str| {
            test::TestRequest::get()
                .uri(path)
                .insert_header(("authorization", format!("Bearer {token}")))
                .to_request()
        };
        for (path, status, challenge) in STEP_UPS {
            let response = test::call_service(&app, call(path, &token)).await;
            assert_eq!(response.status().as_u16(), status, "{path}");
            let header = response
                .headers()
                .get("www-authenticate")
                .map(|value| value.to_str().unwrap().to_owned())
                .unwrap_or_default();
            assert!(header.contains(challenge), "{path}: {header}");
        }
        let response = test::call_service(&app, call("/recent", &own)).await;
        assert_eq!(response.status().as_u16(), 401);
    }

    #[actix_web::test]
    async fn the_extractors_accept_a_live_token_and_refuse_as_rfc_6750_says() {
        let f = fixture();
        let token = profile_token(&f).await;
        let app = test::init_service(
            App::new()
                .app_data(web::Data::new(f.server.clone()))
                .route("/any", web::get().to(any))
                .route("/profile", web::get().to(profile))
                .route("/email", web::get().to(email)),
        )
        .await;
        let call = |path: &str, token: Option<&str>| {
            let mut request = test::TestRequest::get().uri(path);
            if let Some(token) = token {
                request = request.insert_header(("authorization", format!("Bearer {token}")));
            }
            request.to_request()
        };

        let response = test::call_service(&app, call("/any", Some(&token))).await;
        assert_eq!(response.status().as_u16(), 200);
        let body = test::read_body(response).await;
        assert_eq!(body, f.fast_id.as_bytes());
        let response = test::call_service(&app, call("/profile", Some(&token))).await;
        assert_eq!(test::read_body(response).await, "profile".as_bytes());

        let tokens = [None, Some("not-a-live-token"), Some(token.as_str())];
        for ((path, status, challenge), token) in REFUSALS.into_iter().zip(tokens) {
            let response = test::call_service(&app, call(path, token)).await;
            assert_eq!(response.status().as_u16(), status, "{path} with {token:?}");
            let header = response
                .headers()
                .get("www-authenticate")
                .map(|value| value.to_str().unwrap().to_owned())
                .unwrap_or_default();
            assert!(header.contains(challenge), "{path}: {header}");
        }
    }
}

mod with_actix_certificates {
    use super::*;
    use ::actix_web::{App, HttpMessage as _, HttpResponse, test, web};
    use grantor::actix::Bearer;

    async fn any(Bearer(grant): Bearer) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.client_id.as_str().to_owned())
    }

    #[actix_web::test]
    async fn the_endpoints_bind_to_the_certificate_and_the_extractor_demands_it() {
        let f = fixture_with(|b| b.certificate_bound_tokens(true));
        let app = test::init_service(
            App::new()
                .app_data(web::Data::new(f.server.clone()))
                .configure(grantor::actix::endpoints(&f.server))
                .route("/any", web::get().to(any)),
        )
        .await;
        let presented = certificate(b"client-a");
        let request = test::TestRequest::post()
            .uri("/api/oauth/token")
            .insert_header(("authorization", basic(&f.fast_id, &f.fast_secret)))
            .insert_header(("content-type", "application/x-www-form-urlencoded"))
            .set_payload("grant_type=client_credentials")
            .to_request();
        request.extensions_mut().insert(presented.clone());
        let response = test::call_service(&app, request).await;
        assert_eq!(response.status().as_u16(), 200);
        let tokens: serde_json::Value = test::read_body_json(response).await;
        let token = tokens["access_token"].as_str().unwrap().to_owned();
        for (over, status) in [
            (Some(presented), 200),
            (Some(certificate(b"client-b")), 401),
            (None, 401),
        ] {
            let request = test::TestRequest::get()
                .uri("/any")
                .insert_header(("authorization", format!("Bearer {token}")))
                .to_request();
            if let Some(over) = over.clone() {
                request.extensions_mut().insert(over);
            }
            let response = test::call_service(&app, request).await;
            assert_eq!(response.status().as_u16(), status, "{over:?}");
            if status == 401 {
                let challenge = response.headers().get("www-authenticate").unwrap();
                let challenge = challenge.to_str().unwrap();
                assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
            }
        }
    }
}

/// The probes: `/healthz` and `/readyz`, over grantor's memory store or a client store that is
/// down or never answers.
mod probes {
    use std::sync::Arc;

    use grantor::client::Client;
    use grantor::store::{ClientStore, StoreError};
    use grantor::{AuthorizationServer, MemoryStore, async_trait};

    /// A client store whose database is down: every lookup fails.
    struct Down;

    #[async_trait]
    impl ClientStore for Down {
        async fn find_client(&self, _: &str) -> Result<Option<Arc<Client>>, StoreError> {
            Err(StoreError::unavailable("connection refused"))
        }
    }

    /// A client store that never answers (a database that hangs).
    struct Hung;

    #[async_trait]
    impl ClientStore for Hung {
        async fn find_client(&self, _: &str) -> Result<Option<Arc<Client>>, StoreError> {
            std::future::pending().await
        }
    }

    fn server(clients: Option<Arc<dyn ClientStore>>) -> AuthorizationServer {
        let builder = AuthorizationServer::builder().issuer("https://auth.example");
        let builder = match clients {
            Some(clients) => builder.clients(clients),
            None => builder,
        };
        builder.store(MemoryStore::new()).build().unwrap()
    }

    #[tokio::test]
    async fn ready_answers_once_the_stores_answer_and_refuses_past_the_deadline() {
        let ready = server(None).ready(std::future::pending()).await;
        assert!(ready.is_ok(), "{ready:?}");
        // A store that hangs: the deadline (here already past) decides.
        let hung = server(Some(Arc::new(Hung)));
        let refused = hung.ready(std::future::ready(())).await.unwrap_err();
        assert_eq!(refused.kind(), grantor::store::StoreErrorKind::Unavailable);
        let down = server(Some(Arc::new(Down)));
        assert!(down.ready(std::future::pending()).await.is_err());
    }

    /// A client store that counts its lookups.
    #[derive(Default)]
    struct Counting(std::sync::atomic::AtomicUsize);

    #[async_trait]
    impl ClientStore for Counting {
        async fn find_client(&self, _: &str) -> Result<Option<Arc<Client>>, StoreError> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(None)
        }
    }

    #[tokio::test]
    async fn a_flood_of_readiness_probes_reads_the_stores_about_once_a_second() {
        let counting = Arc::new(Counting::default());
        let server = server(Some(counting.clone()));
        for _ in 0..200 {
            assert!(server.ready(std::future::pending()).await.is_ok());
        }
        // One read, or two should this loop straddle the second an answer is reused for.
        let reads = counting.0.load(std::sync::atomic::Ordering::Relaxed);
        assert!((1..=2).contains(&reads), "{reads} reads for 200 probes");
    }

    mod with_axum {
        use ::axum::body::Body;
        use http::Request;
        use tower::ServiceExt as _;

        use super::*;

        async fn probe(server: &AuthorizationServer, path: &str) -> (u16, String, String) {
            let app: ::axum::Router = grantor::axum::health(server);
            let request = Request::get(path).body(Body::empty()).unwrap();
            let response = app.oneshot(request).await.unwrap();
            let status = response.status().as_u16();
            let cache = response.headers()["cache-control"]
                .to_str()
                .unwrap()
                .to_owned();
            let body = ::axum::body::to_bytes(response.into_body(), 1024)
                .await
                .unwrap();
            (status, String::from_utf8(body.to_vec()).unwrap(), cache)
        }

        #[tokio::test]
        async fn healthz_answers_200_and_readyz_200_while_the_stores_answer() {
            let server = server(None);
            let (status, body, cache) = probe(&server, "/healthz").await;
            assert_eq!(
                (status, body.as_str(), cache.as_str()),
                (200, "ok", "no-store")
            );
            let (status, body, _) = probe(&server, "/readyz").await;
            assert_eq!((status, body.as_str()), (200, "ready"));
        }

        #[tokio::test]
        async fn readyz_answers_503_when_a_store_is_down_and_healthz_still_200() {
            let server = server(Some(Arc::new(Down)));
            let (status, body, _) = probe(&server, "/readyz").await;
            assert_eq!((status, body.as_str()), (503, "not ready"));
            assert_eq!(probe(&server, "/healthz").await.0, 200);
        }
    }

    mod with_actix {
        use ::actix_web::{App, test};

        use super::*;

        #[actix_web::test]
        async fn readyz_answers_503_when_a_store_is_down_and_200_when_it_answers() {
            for (clients, expected) in [
                (None, (200, "ready")),
                (
                    Some(Arc::new(Down) as Arc<dyn ClientStore>),
                    (503, "not ready"),
                ),
            ] {
                let server = server(clients);
                let app =
                    test::init_service(App::new().configure(grantor::actix::health(&server))).await;
                let healthz = test::TestRequest::get().uri("/healthz").to_request();
                assert_eq!(
                    test::call_service(&app, healthz).await.status().as_u16(),
                    200
                );
                let readyz = test::TestRequest::get().uri("/readyz").to_request();
                let response = test::call_service(&app, readyz).await;
                let status = response.status().as_u16();
                let body = test::read_body(response).await;
                assert_eq!((status, std::str::from_utf8(&body).unwrap()), expected);
            }
        }
    }
}
