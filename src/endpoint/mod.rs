//! The wire: parsing requests into typed values ([`crate::request`]) and rendering outcomes
//! into responses. The only place grantor knows HTTP, JSON and form encoding. Parsing and
//! rendering are pure and synchronous; each endpoint's function reads, hands the typed request
//! to `grant`, and renders what it answers.

pub(crate) mod authorize;
pub(crate) mod basic;
pub(crate) mod bearer;
pub(crate) mod device;
pub(crate) mod form;
pub(crate) mod introspect;
pub(crate) mod json;
pub(crate) mod logout;
pub(crate) mod metadata;
pub(crate) mod par;
pub(crate) mod parse;
pub(crate) mod registration;
pub(crate) mod render;
pub(crate) mod resource_metadata;
pub(crate) mod revoke;
pub(crate) mod span;
pub(crate) mod token;
pub(crate) mod userinfo;

use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, Request, Response, StatusCode};

use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::settings::Limits;
use crate::settings::Settings;
use form::{Form, FormError};

/// What every endpoint reads and renders with: the server's settings, the headers rendered
/// from them once at build, and the time the request is served at. An endpoint takes this and
/// the grant contexts it uses, never the server's state.
///
/// Endpoints borrow it, kept once in the server method's frame. Taken by value, a copy sat in
/// each of an endpoint's nested futures and the compiler moved those futures (kilobytes each)
/// more often: ~1,000 more instructions per token request.
#[derive(Clone, Copy)]
pub(crate) struct Wire<'a> {
    pub(crate) settings: &'a Settings,
    pub(crate) rendered: &'a Rendered,
    pub(crate) now: UnixTime,
}

impl Wire<'_> {
    /// `error` as a JSON error response, with the Basic challenge where it is `invalid_client`.
    pub(crate) fn error(&self, error: &OAuthError) -> Response<String> {
        render::error(error, &self.rendered.basic_challenge)
    }
}

/// What the endpoints send that depends only on the settings, rendered once when the server is
/// built: the challenges and the form-encoded issuer.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    /// The issuer form-urlencoded, as the `iss` parameter of every authorization response.
    pub(crate) issuer_encoded: String,
    /// `Basic realm="…"`, for `invalid_client` answers.
    pub(crate) basic_challenge: HeaderValue,
    /// The Bearer challenges that carry no request-specific part.
    pub(crate) bearer_refusals: bearer::Refusals,
    /// The metadata of each resource the server knows (RFC 9728).
    pub(crate) resource_documents: resource_metadata::ResourceDocuments,
}

impl Rendered {
    /// `None` when the realm cannot be written into a challenge: it must be printable ASCII
    /// without '"' or '\\'.
    pub(crate) fn new(settings: &Settings) -> Option<Self> {
        let realm = &settings.realm;
        if realm
            .chars()
            .any(|c| c == '"' || c == '\\' || !(' '..='~').contains(&c))
        {
            return None;
        }
        let resource_documents = resource_metadata::ResourceDocuments::new(settings);
        Some(Self {
            issuer_encoded: url::form_urlencoded::byte_serialize(settings.issuer.as_bytes())
                .collect(),
            basic_challenge: HeaderValue::from_str(&format!("Basic realm=\"{realm}\"")).ok()?,
            bearer_refusals: bearer::Refusals::new(realm, &resource_documents)?,
            resource_documents,
        })
    }
}

/// Whether a `Content-Type` is `application/x-www-form-urlencoded`, parameters (such as
/// `charset`) allowed.
pub(crate) fn is_form_content_type(value: Option<&HeaderValue>) -> bool {
    const FORM: &[u8] = b"application/x-www-form-urlencoded";
    let Some(value) = value else {
        return false;
    };
    // The value nearly every client sends, checked without splitting.
    if value.as_bytes().eq_ignore_ascii_case(FORM) {
        return true;
    }
    let Ok(value) = value.to_str() else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

/// The checks every `POST`-only, form-encoded endpoint (token, revocation, introspection) makes
/// before anything is looked up: method, Content-Type, size, encoding, repeated parameters.
pub(crate) fn read_post_form<'r, B: AsRef<[u8]>>(
    limits: Limits,
    request: &'r Request<B>,
) -> Result<Form<'r>, OAuthError> {
    if request.method() != Method::POST {
        return Err(
            OAuthError::invalid_request("this endpoint accepts POST only")
                .with_status(StatusCode::METHOD_NOT_ALLOWED),
        );
    }
    if !is_form_content_type(request.headers().get(CONTENT_TYPE)) {
        return Err(OAuthError::invalid_request(
            "Content-Type must be application/x-www-form-urlencoded",
        ));
    }
    let form = form::parse(request.body().as_ref(), limits).map_err(|e| {
        let error = OAuthError::invalid_request(e.description());
        if e == FormError::TooLarge {
            error.with_status(StatusCode::PAYLOAD_TOO_LARGE)
        } else {
            error
        }
    })?;
    if let Some(name) = form.repeated() {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    Ok(form)
}

/// The 413 `invalid_request` answer for a body over the server's limit.
pub(crate) fn payload_too_large(rendered: &Rendered) -> http::Response<String> {
    let error = OAuthError::invalid_request("the request is larger than this server accepts")
        .with_status(StatusCode::PAYLOAD_TOO_LARGE);
    let mut response = render::error(&error, &rendered.basic_challenge);
    // The rest of the body is unread: the connection cannot carry another request (RFC 9112
    // §9.6), and saying so keeps a client from sending its next one on it.
    response.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    response
}

/// The JWKS document (RFC 7517 §5) of the access-token and ID-token signing keys, each once,
/// cacheable for five minutes; 404 when the server signs nothing, 503 when the keys cannot be
/// read.
pub(crate) async fn jwks(
    wire: &Wire<'_>,
    format: Option<&dyn crate::token_format::AccessTokenFormat>,
    id_tokens: Option<&dyn crate::oidc::IdTokenSigner>,
) -> http::Response<String> {
    if format.is_none() && id_tokens.is_none() {
        let mut response = http::Response::new(String::new());
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    let mut keys = Vec::new();
    if let Some(format) = format {
        match format.published(wire.now).await {
            Ok(published) => keys.extend(published),
            Err(error) => return wire.error(&error.into()),
        }
    }
    if let Some(id_tokens) = id_tokens {
        match id_tokens.published(wire.now).await {
            Ok(published) => keys.extend(published),
            Err(error) => return wire.error(&error.into()),
        }
    }
    // With one algorithm and period, access tokens and ID tokens share a key.
    let mut seen = std::collections::HashSet::new();
    keys.retain(|key| seen.insert(key.get("kid").cloned()));
    let document = serde_json::json!({ "keys": keys }).to_string();
    let mut response = render::json_text(StatusCode::OK, document);
    let headers = response.headers_mut();
    headers.remove(http::header::PRAGMA);
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("public, max-age=300"),
    );
    response
}
