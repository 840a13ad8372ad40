//! The framework glue (features `axum` and `actix`): the endpoints mounted in one call answer
//! as grantor does (tokens, 405 for another method, 413 for a body over the limit, metadata),
//! and the bearer extractors hand a live token's grant to the handler and refuse the rest as
//! RFC 6750 says (401 with the `Bearer` challenge, 403 `insufficient_scope`).

mod common;

use common::*;
use grantor::RequiredScope;

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
    use grantor::axum::{Bearer, ScopedBearer};
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
    use grantor::actix::{Bearer, ScopedBearer};

    async fn any(Bearer(grant): Bearer) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.client_id.as_str().to_owned())
    }

    async fn profile(ScopedBearer(grant, ..): ScopedBearer<Profile>) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.scope.as_str().to_owned())
    }

    async fn email(ScopedBearer(grant, ..): ScopedBearer<Email>) -> HttpResponse {
        HttpResponse::Ok().body(grant.authorization.scope.as_str().to_owned())
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
