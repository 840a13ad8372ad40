//! The client registration endpoint (RFC 7591 §3) and the client configuration endpoint (RFC
//! 7592 §2) on the wire: method, `Authorization: Bearer`, `Content-Type: application/json`,
//! size, and the client id in the path are read here; `grant::registration` decides; the
//! client information response (RFC 7591 §3.2.1, RFC 7592 §3) and the errors (RFC 7591 §3.2.2,
//! RFC 6750 §3) are rendered here.

use http::header::{ALLOW, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use serde::Serialize;

use super::{Wire, bearer, render};
use crate::client::{Client, ClientKeys, GrantType};
use crate::client_metadata::{self, Source};
use crate::error::{ErrorCode, OAuthError};
use crate::grant::bearer::Refusal as BearerRefusal;
use crate::grant::registration::{Refusal, Registered, Registrar};
use crate::request::{AuthMethod, ClientMetadata};
use crate::secret::AccessToken;

const ALLOW_REGISTER: HeaderValue = HeaderValue::from_static("POST");
const ALLOW_CONFIGURATION: HeaderValue = HeaderValue::from_static("GET, PUT, DELETE");
const INVALID_TOKEN: &str = "a valid access token for client registration is required";

/// `POST {registration path}`: registers a client (RFC 7591 §3.1) and answers 201 with its
/// credentials and metadata (§3.2.1).
/// `registrar` is `None` when the server has no registration policy.
pub(crate) async fn register<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    registrar: Option<Registrar<'_>>,
    request: &Request<B>,
) -> Response<String> {
    let Some(registrar) = registrar else {
        return not_enabled();
    };
    match handle_register(wire, registrar, request).await {
        Ok(registered) => information(wire, StatusCode::CREATED, &registered),
        Err(refusal) => refuse(wire, refusal, ALLOW_REGISTER),
    }
}

async fn handle_register<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    registrar: Registrar<'_>,
    request: &Request<B>,
) -> Result<Registered, Refusal> {
    if request.method() != Method::POST {
        return Err(method_not_allowed());
    }
    // The Authorization header matters only when an initial access token is required.
    let token = match registrar.policy.initial_access_token_digest() {
        Some(_) => presented_token(request.headers())?,
        None => None,
    };
    registrar.check_initial_token(token.as_ref())?;
    let metadata = read_metadata(wire, request)?;
    registrar.register(metadata, wire.now).await
}

/// `GET`, `PUT` or `DELETE {registration path}/{client_id}` with the client's registration
/// access token (RFC 7592 §2.1, §2.2, §2.3).
pub(crate) async fn configuration<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    registrar: Option<Registrar<'_>>,
    request: &Request<B>,
) -> Response<String> {
    let Some(registrar) = registrar else {
        return not_enabled();
    };
    match handle_configuration(wire, registrar, request).await {
        Ok(Some(registered)) => information(wire, StatusCode::OK, &registered),
        Ok(None) => {
            let mut response = Response::new(String::new());
            *response.status_mut() = StatusCode::NO_CONTENT;
            response
        }
        Err(refusal) => refuse(wire, refusal, ALLOW_CONFIGURATION),
    }
}

async fn handle_configuration<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    registrar: Registrar<'_>,
    request: &Request<B>,
) -> Result<Option<Registered>, Refusal> {
    let method = request.method();
    if ![Method::GET, Method::PUT, Method::DELETE].contains(method) {
        return Err(method_not_allowed());
    }
    let token = presented_token(request.headers())?.ok_or(Refusal::Unauthorized { sent: false })?;
    let registration_path = &wire.settings.endpoints.registration;
    let client_id = client_id_in_path(request.uri().path(), registration_path)
        .ok_or(Refusal::Unauthorized { sent: true })?;
    let client = registrar.find(client_id, &token).await?;
    let (client, client_secret) = match *method {
        Method::GET => (Client::clone(&client), None),
        Method::PUT => {
            let metadata = read_metadata(wire, request)?;
            let now = wire.now;
            registrar.replace(&client, metadata, now).await?
        }
        _ => {
            registrar.delete(&client).await?;
            return Ok(None);
        }
    };
    // The registration access token is not kept, only its digest: the answer carries the one
    // just presented (RFC 7592 §3 requires it in the answer; it is not rotated). A secret is
    // in the answer only when the update rotated it (RFC 7592 §2.2).
    Ok(Some(Registered {
        client,
        client_secret,
        registration_access_token: token,
        issued_at: None,
    }))
}

/// The bearer token of the `Authorization` header (RFC 6750 §2.1), if one was sent; a
/// malformed header is `invalid_request`.
fn presented_token(headers: &HeaderMap) -> Result<Option<AccessToken>, Refusal> {
    match bearer::read_credentials(headers, false) {
        Ok((_, token)) => Ok(Some(token)),
        Err(BearerRefusal::Error(error)) => Err(Refusal::Error(error)),
        Err(_) => Ok(None),
    }
}

/// The client id after `{registration path}/`: one path segment of unreserved characters
/// (RFC 3986 §2.3), which every id grantor mints is; `None` for anything else.
fn client_id_in_path<'p>(path: &'p str, registration_path: &str) -> Option<&'p str> {
    let id = path.strip_prefix(registration_path)?.strip_prefix('/')?;
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
    (!id.is_empty() && id.len() <= 128 && id.bytes().all(unreserved)).then_some(id)
}

/// The body as a client metadata document: `application/json` (RFC 7591 §3.1), within the
/// server's body limit (413 past it).
fn read_metadata<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    request: &Request<B>,
) -> Result<ClientMetadata, OAuthError> {
    if !is_json_content_type(request.headers().get(CONTENT_TYPE)) {
        return Err(OAuthError::invalid_request(
            "Content-Type must be application/json (RFC 7591 section 3.1)",
        ));
    }
    let limits = wire.settings.limits;
    let body = request.body().as_ref();
    if body.len() > limits.max_input {
        return Err(
            OAuthError::invalid_request("the request is larger than this server accepts")
                .with_status(StatusCode::PAYLOAD_TOO_LARGE),
        );
    }
    let source = Source::Registration {
        max_param: limits.max_param,
    };
    Ok(client_metadata::parse(body, source)?)
}

/// Whether a `Content-Type` is `application/json`, parameters (such as `charset`) allowed.
fn is_json_content_type(value: Option<&HeaderValue>) -> bool {
    let Some(Ok(value)) = value.map(HeaderValue::to_str) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

fn method_not_allowed() -> Refusal {
    Refusal::Error(
        OAuthError::invalid_request("this method is not allowed here")
            .with_status(StatusCode::METHOD_NOT_ALLOWED),
    )
}

/// The client information response (RFC 7591 §3.2.1, RFC 7592 §3).
#[derive(Serialize)]
struct Information<'a> {
    client_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id_issued_at: Option<u64>,
    /// Required with a secret; `0`: it does not expire.
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret_expires_at: Option<u64>,
    registration_access_token: &'a str,
    registration_client_uri: String,
    redirect_uris: &'a [String],
    grant_types: Vec<&'static str>,
    response_types: Vec<&'static str>,
    token_endpoint_auth_method: &'static str,
    scope: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_name: Option<&'a str>,
    /// RFC 9449 §5.2, when the client must send DPoP proofs.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    dpop_bound_access_tokens: bool,
    /// RFC 9126 §6, when the client must push its authorization requests.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    require_pushed_authorization_requests: bool,
    /// RFC 7591 §2, for a `private_key_jwt` client: its JWK Set, or where it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    jwks: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jwks_uri: Option<&'a str>,
    /// OIDC Registration §2, when the client registered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    id_token_signed_response_alg: Option<&'static str>,
    /// OIDC Registration §2, when the client registered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    userinfo_signed_response_alg: Option<&'static str>,
    /// JARM §3, when the client registered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    authorization_signed_response_alg: Option<&'static str>,
    /// RFC 9701 §6, when the client registered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    introspection_signed_response_alg: Option<&'static str>,
    /// RFC 9101 §10.2, when the client registered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    request_object_signing_alg: Option<&'static str>,
    /// RP-Initiated Logout 1.0 §3.1, when the client registered some.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    post_logout_redirect_uris: &'a [String],
    /// Back-Channel Logout 1.0 §2.2, when the client registered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    backchannel_logout_uri: Option<&'a str>,
    /// OIDC Registration §2: `web` or `native`.
    application_type: &'static str,
    /// OIDC Registration §2, when the client registered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    default_max_age: Option<u64>,
    /// OIDC Registration §2, when the client registered it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    require_auth_time: bool,
    /// OIDC Registration §2: `public` or `pairwise`.
    subject_type: &'static str,
    /// OIDC Registration §2, when the client registered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    sector_identifier_uri: Option<&'a str>,
    /// RFC 8705 §2.1.2: a `tls_client_auth` client's one subject member.
    #[serde(flatten)]
    tls_client_auth: Option<std::collections::BTreeMap<&'static str, String>>,
}

fn information(wire: &Wire<'_>, status: StatusCode, registered: &Registered) -> Response<String> {
    let client = &registered.client;
    let id = client.id().as_str();
    let issuer = wire.settings.issuer.trim_end_matches('/');
    let path = &wire.settings.endpoints.registration;
    let grant_types = GrantType::ALL
        .into_iter()
        .filter(|g| client.allows(*g))
        .map(GrantType::as_str)
        .collect();
    let mut response_types = Vec::new();
    if client.allows(GrantType::AuthorizationCode) {
        response_types.push("code");
    }
    if client.allows(GrantType::Implicit) {
        response_types.push("token");
    }
    let auth_method = AuthMethod::of(client);
    let (jwks, jwks_uri) = match client.keys() {
        // Checked JSON when the client was built.
        Some(ClientKeys::Jwks(json)) => (serde_json::from_str(json).ok(), None),
        Some(ClientKeys::JwksUri(uri)) => (None, Some(uri.as_str())),
        None => (None, None),
    };
    let secret = registered.client_secret.as_ref();
    let body = Information {
        client_id: id,
        client_secret: secret.map(|s| s.expose_secret()),
        client_id_issued_at: registered.issued_at.map(|t| t.as_secs()),
        client_secret_expires_at: secret.map(|_| 0),
        registration_access_token: registered.registration_access_token.expose_secret(),
        registration_client_uri: format!("{issuer}{path}/{id}"),
        redirect_uris: client.redirect_uris(),
        grant_types,
        response_types,
        token_endpoint_auth_method: auth_method.as_str(),
        scope: client.scopes().as_str(),
        // A client registered without a name is named by its id; none was registered.
        client_name: Some(client.name()).filter(|name| *name != id),
        dpop_bound_access_tokens: client.requires_dpop(),
        require_pushed_authorization_requests: client.requires_pushed_requests(),
        jwks,
        jwks_uri,
        id_token_signed_response_alg: client.id_token_signing_algorithm().map(|a| a.as_str()),
        userinfo_signed_response_alg: client.userinfo_signing_algorithm().map(|a| a.as_str()),
        authorization_signed_response_alg: client
            .authorization_signing_algorithm()
            .map(|a| a.as_str()),
        introspection_signed_response_alg: client
            .introspection_signing_algorithm()
            .map(|a| a.as_str()),
        request_object_signing_alg: client
            .request_object_signing_algorithm()
            .map(|a| a.as_str()),
        post_logout_redirect_uris: client.post_logout_redirect_uris(),
        backchannel_logout_uri: client.backchannel_logout_uri(),
        application_type: if client.is_native_application() {
            "native"
        } else {
            "web"
        },
        default_max_age: client.default_max_age(),
        require_auth_time: client.requires_auth_time(),
        subject_type: match client.pairwise_sector() {
            Some(_) => "pairwise",
            None => "public",
        },
        sector_identifier_uri: client.sector_identifier_uri(),
        tls_client_auth: client
            .tls_subject()
            .map(|subject| [(subject.member(), subject.value())].into()),
    };
    render::json(status, &body)
}

/// Registration is not enabled: 404, as for a path the server does not serve.
fn not_enabled() -> Response<String> {
    let error = OAuthError::invalid_request("client registration is not enabled on this server")
        .with_status(StatusCode::NOT_FOUND);
    render::error(&error, &HeaderValue::from_static("Basic"))
}

fn refuse(wire: &Wire<'_>, refusal: Refusal, allow: HeaderValue) -> Response<String> {
    match refusal {
        Refusal::Unauthorized { sent } => {
            let error = OAuthError::new(ErrorCode::InvalidToken, INVALID_TOKEN);
            let mut response = wire.error(&error);
            let realm = &wire.settings.realm;
            // RFC 6750 §3.1: no error in the challenge when no token was sent.
            let challenge = if sent {
                format!(
                    "Bearer realm=\"{realm}\", error=\"invalid_token\", \
                     error_description=\"{INVALID_TOKEN}\""
                )
            } else {
                format!("Bearer realm=\"{realm}\"")
            };
            // The realm is checked printable ASCII without quotes at build.
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response.headers_mut().insert(WWW_AUTHENTICATE, value);
            }
            response
        }
        Refusal::TooMany { retry_after } => {
            crate::metrics::budget_refused("registration", "server");
            // RFC 7591 defines no code for this; RFC 6585 §4's 429 with Retry-After says it in
            // HTTP, and `temporarily_unavailable` (RFC 6749 §4.1.2.1) in OAuth.
            let error = OAuthError::new(
                ErrorCode::TemporarilyUnavailable,
                "too many clients registered lately; try again later",
            )
            .with_status(StatusCode::TOO_MANY_REQUESTS);
            let mut response = wire.error(&error);
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry_after));
            response
        }
        Refusal::Error(error) => {
            let mut response = wire.error(&error);
            if response.status() == StatusCode::METHOD_NOT_ALLOWED {
                response.headers_mut().insert(ALLOW, allow);
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_id_is_one_unreserved_segment_after_the_registration_path() {
        let base = "/api/oauth/register";
        assert_eq!(
            client_id_in_path("/api/oauth/register/abc-_9", base),
            Some("abc-_9")
        );
        for no in [
            "/api/oauth/register",
            "/api/oauth/register/",
            "/api/oauth/registerabc",
            "/api/oauth/register/a/b",
            "/api/oauth/register/a%20b",
            "/other/abc",
        ] {
            assert_eq!(client_id_in_path(no, base), None, "{no}");
        }
    }

    #[test]
    fn json_content_types_allow_parameters() {
        let yes = |v: &'static str| is_json_content_type(Some(&HeaderValue::from_static(v)));
        assert!(yes("application/json"));
        assert!(yes("Application/JSON; charset=utf-8"));
        assert!(!yes("application/x-www-form-urlencoded"));
        assert!(!yes("application/jsonx"));
        assert!(!is_json_content_type(None));
    }
}
