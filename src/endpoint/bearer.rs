//! Bearer tokens on the wire (RFC 6750 §2.1, §3): reading `Authorization: Bearer`, and the
//! 400/401/403 refusals with their `WWW-Authenticate` challenges, a step-up's among them (RFC
//! 9470 §3). With DPoP on, also `Authorization: DPoP` and its proofs (RFC 9449 §7), in
//! [`dpop`]; a token bound to a client certificate needs the same certificate (RFC 8705 §3).

use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, Uri};
use serde::Serialize;

use super::resource_metadata::ResourceDocuments;
use super::{Wire, render};
use crate::error::{ErrorCode, OAuthError};
use crate::grant::bearer::{self, Demand, Refusal};
use crate::grant::proof::{NONCE_HEADER, ProofOfPossession};
use crate::mtls::ClientCertificate;
use crate::scope::Scope;
use crate::secret::AccessToken;
use crate::step_up::{ShortFall, StepUp};
use crate::store::seam::TokenSeam;
use crate::store::{AccessGrant, TokenBinding, UserStore};
use crate::token_format::AccessTokenFormat;

mod dpop;

/// Every request header [`check`] reads (`Authorization`, and `DPoP` for a proof): a glue that
/// has to copy a request's headers into `http` types copies these alone.
#[cfg(feature = "actix")]
pub(crate) const READ_HEADERS: [http::HeaderName; 2] =
    [AUTHORIZATION, http::HeaderName::from_static("dpop")];

/// The request a protected resource received: its method and URI (for a DPoP proof's `htm` and
/// `htu`), when the host passed them, its headers, and the client certificate of its
/// connection (for a certificate-bound token), when it had one.
#[derive(Clone, Copy)]
pub(crate) struct Presented<'a> {
    pub(crate) target: Option<(&'a Method, &'a Uri)>,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) certificate: Option<&'a ClientCertificate>,
}

impl<'a> Presented<'a> {
    /// What bearer validation reads of `request`: its method and URI (for DPoP proofs), its
    /// headers, and the [`ClientCertificate`] in its extensions.
    pub(crate) fn of<B>(request: &'a http::Request<B>) -> Self {
        Self {
            target: Some((request.method(), request.uri())),
            headers: request.headers(),
            certificate: request.extensions().get(),
        }
    }
}

/// What a resource requires of a token besides its audience: every token of `scope`, and a
/// sign-in that satisfies `step_up` (RFC 9470). Checked in that order, once the token's
/// binding is.
#[derive(Clone, Copy, Default)]
pub(crate) struct Required<'a> {
    pub(crate) scope: Option<&'a Scope>,
    pub(crate) step_up: Option<&'a StepUp>,
}

impl<'a> Required<'a> {
    /// Every token of `scope` (none: any scope), and nothing of the sign-in.
    pub(crate) fn scope(scope: Option<&'a Scope>) -> Self {
        Self {
            scope,
            step_up: None,
        }
    }
}

/// What finding the grant behind a token needs: the token store, the user store (for a JWT's
/// user), and the feature's verifiers where they are on.
#[derive(Clone, Copy)]
pub(crate) struct Validation<'a> {
    pub(crate) tokens: TokenSeam<'a>,
    pub(crate) users: &'a dyn UserStore,
    /// Set when access tokens are self-contained (JWTs).
    pub(crate) format: Option<&'a dyn AccessTokenFormat>,
    /// Set when DPoP proofs are accepted.
    pub(crate) proofs: Option<&'a dyn ProofOfPossession>,
}

/// Validates the request's `Authorization: Bearer` token (or, with DPoP on, `Authorization:
/// DPoP` with its proof): meant for `audience` (the server's default audience when `None`)
/// and, if asked, carrying every token of the `required` scope from a sign-in that satisfies
/// its step-up. The grant, or the ready refusal.
pub(crate) async fn check(
    wire: &Wire<'_>,
    validation: Validation<'_>,
    request: Presented<'_>,
    audience: Option<&str>,
    required: Required<'_>,
) -> Result<AccessGrant, BearerRefusal> {
    let default = &wire.settings.resources.default;
    let audience = audience.unwrap_or(default.as_str());
    let at = wire.rendered.bearer_refusals.at(audience);
    let (scheme, token) = match read_credentials(request.headers, wire.settings.dpop.is_some()) {
        Ok(credentials) => credentials,
        Err(refusal) => return Err(refused(wire, at, refusal, Scheme::Bearer)),
    };
    let demand = Demand { audience, default };
    // From the store, or verified as a self-contained token (a JWT). The latter is boxed, so
    // an opaque token's validation does not carry its state.
    let found = match validation.format {
        Some(format) if format.recognizes(token.expose_secret()) => {
            let check = bearer::SelfContainedCheck {
                format,
                issuer: &wire.settings.issuer,
                store: validation.tokens,
                users: validation.users,
            };
            Box::pin(bearer::check_self_contained(
                check, &token, demand, wire.now,
            ))
            .await
        }
        _ => bearer::check(validation.tokens, &token, demand, wire.now).await,
    };
    let grant = match found {
        Ok(grant) => grant,
        Err(refusal) => return Err(refused(wire, at, refusal, scheme)),
    };
    let grant = match (scheme, grant.binding) {
        (Scheme::Bearer, None) => grant,
        (Scheme::Bearer, Some(TokenBinding::Certificate(_))) => {
            bearer::require_certificate(&grant, request.certificate)
                .map_err(|r| refused(wire, at, r, scheme))?;
            grant
        }
        // Boxed: a bearer token's validation does not carry the proof check's state.
        (Scheme::Dpop, _) => {
            let proofs = validation.proofs;
            Box::pin(dpop::check(
                wire, at, proofs, request, audience, &token, grant,
            ))
            .await?
        }
        (Scheme::Bearer, Some(TokenBinding::Dpop(_))) => {
            return Err(refused(wire, at, Refusal::BoundAsBearer, Scheme::Bearer));
        }
    };
    bearer::require_scope(&grant, required.scope).map_err(|r| refused(wire, at, r, scheme))?;
    bearer::require_authentication(&grant, required.step_up, wire.now)
        .map_err(|r| refused(wire, at, r, scheme))?;
    Ok(grant)
}

/// How the token was presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `Authorization: Bearer` (RFC 6750 §2.1).
    Bearer,
    /// `Authorization: DPoP` (RFC 9449 §7.1), read only with DPoP on.
    Dpop,
}

/// The scheme and token of `Authorization: Bearer <b64token>` (or with `dpop`, `DPoP
/// <b64token>`); schemes are case-insensitive.
pub(crate) fn read_credentials(
    headers: &HeaderMap,
    dpop: bool,
) -> Result<(Scheme, AccessToken), Refusal> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Refusal::NoCredentials);
    };
    let malformed = |why: &'static str| Refusal::Error(OAuthError::invalid_request(why));
    if values.next().is_some() {
        return Err(malformed("more than one Authorization header was sent"));
    }
    // The well-formed header, `Bearer <b64token>`, read in one pass over its bytes; anything
    // else takes the careful path below, which says what is wrong.
    if let Some(token) = value
        .as_bytes()
        .get(7..)
        .filter(|_| value.as_bytes()[..7].eq_ignore_ascii_case(b"bearer "))
        && is_b64token(token)
        && let Ok(token) = std::str::from_utf8(token)
    {
        return Ok((Scheme::Bearer, AccessToken::hashed(token)));
    }
    let value = value
        .to_str()
        .map_err(|_| malformed("the Authorization header is not ASCII"))?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if dpop && scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        return Err(Refusal::NoCredentials);
    };
    let token = token.trim_matches(' ');
    if !is_b64token(token.as_bytes()) {
        return Err(malformed(
            "the Authorization header does not carry a token (RFC 6750 section 2.1, RFC 9449 section 7.1)",
        ));
    }
    Ok((scheme, AccessToken::hashed(token)))
}

/// RFC 6750 §2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &[u8]) -> bool {
    let padding = token.iter().rev().take_while(|&&b| b == b'=').count();
    let body = &token[..token.len() - padding];
    !body.is_empty() && body.iter().all(|&b| B64TOKEN[usize::from(b)])
}

/// The characters of a b64token before its padding, as a table: one load per byte.
const B64TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'+' | b'/');
        b += 1;
    }
    table
};

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'static str,
    error_description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'a str>,
}

/// The two refusals answered most, built once with the configuration for each resource the
/// server knows (their challenges name its metadata, RFC 9728 §5.1), and once naming none.
#[derive(Debug, Clone)]
pub(crate) struct Refusals {
    /// By resource: as registered (the default audience first), with its challenges.
    by_resource: Vec<(String, At)>,
    /// For a resource with no metadata document, and for userinfo.
    pub(crate) plain: At,
    invalid_token_body: String,
}

/// The challenges of one resource.
#[derive(Debug, Clone)]
pub(crate) struct At {
    /// `, resource_metadata="…"` (RFC 9728 §5.1), or nothing.
    metadata: String,
    bare: HeaderValue,
    invalid_token: HeaderValue,
}

const INVALID_TOKEN: &str = "the access token is invalid, expired or revoked";

impl At {
    fn new(realm: &str, metadata_url: Option<&str>) -> Option<Self> {
        // A URL from `url`'s serializer: printable ASCII, no '"' or '\\'.
        let metadata = metadata_url.map_or(String::new(), |url| {
            format!(", resource_metadata=\"{url}\"")
        });
        let invalid_token = challenge(realm, ErrorCode::InvalidToken, INVALID_TOKEN, &metadata);
        Some(Self {
            bare: HeaderValue::from_str(&format!("Bearer realm=\"{realm}\"{metadata}")).ok()?,
            invalid_token: HeaderValue::from_str(&invalid_token).ok()?,
            metadata,
        })
    }
}

impl Refusals {
    /// `realm` is printable ASCII without '"' or '\\' (checked by the builder).
    pub(crate) fn new(realm: &str, documents: &ResourceDocuments) -> Option<Self> {
        let body = ErrorBody {
            error: ErrorCode::InvalidToken.as_str(),
            error_description: INVALID_TOKEN,
            scope: None,
        };
        let mut by_resource = Vec::new();
        for document in documents.iter() {
            by_resource.push((
                document.resource.clone(),
                At::new(realm, Some(&document.url))?,
            ));
        }
        Some(Self {
            by_resource,
            plain: At::new(realm, None)?,
            invalid_token_body: serde_json::to_string(&body).ok()?,
        })
    }

    /// The challenges of `resource` (matched as registered: the spelling a host's resource
    /// names itself by; another names no metadata).
    pub(crate) fn at(&self, resource: &str) -> &At {
        self.by_resource
            .iter()
            .find(|(known, _)| known == resource)
            .map_or(&self.plain, |(_, at)| at)
    }
}

/// A challenge with an error. Descriptions hold no '"' or '\\' (RFC 6749 §5.2), so they quote
/// as they are.
fn challenge(realm: &str, code: ErrorCode, description: &str, metadata: &str) -> String {
    challenge_as(Scheme::Bearer, realm, code, description, "", "", metadata)
}

/// A challenge in `scheme`, with the error's own `parameters` (`, scope="…"`, RFC 6750 §3; `,
/// acr_values="…", max_age=…`, RFC 9470 §3: values that quote as they are); a DPoP challenge
/// names the proof algorithms (RFC 9449 §7.1), and either names the resource's metadata when
/// `metadata` is its parameter.
fn challenge_as(
    scheme: Scheme,
    realm: &str,
    code: ErrorCode,
    description: &str,
    parameters: &str,
    algs: &str,
    metadata: &str,
) -> String {
    let name = match scheme {
        Scheme::Bearer => "Bearer",
        Scheme::Dpop => "DPoP",
    };
    let mut challenge =
        format!("{name} realm=\"{realm}\", error=\"{code}\", error_description=\"{description}\"");
    challenge.push_str(parameters);
    if scheme == Scheme::Dpop {
        challenge.push_str(&format!(", algs=\"{algs}\""));
    }
    challenge.push_str(metadata);
    challenge
}

/// The proof algorithms verified, space-separated (empty without DPoP).
fn dpop_algorithms(wire: &Wire<'_>) -> String {
    wire.settings.dpop.unwrap_or_default().join(" ")
}

/// Why a protected resource refused a request: the typed reason a host can match, with the
/// RFC 6750 §3 (or RFC 9449 §7.1) answer, challenge and all, ready to send as it is.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use grantor::{BearerRefusalReason, MemoryStore};
///
/// # let server = grantor::AuthorizationServer::builder().issuer("https://auth.example")
/// #     .store(MemoryStore::new()).build().unwrap();
/// let request = http::Request::get("/api/me")
///     .header("authorization", "Bearer not-a-live-token")
///     .body(())
///     .unwrap();
/// let refusal = server.bearer(&request, None).await.unwrap_err();
/// assert_eq!(refusal.reason(), BearerRefusalReason::InvalidToken);
/// assert_eq!(refusal.status(), 401);
/// let response: http::Response<String> = refusal.into_response();
/// assert!(response.headers()["www-authenticate"].to_str().unwrap().contains("invalid_token"));
/// # }
/// ```
pub struct BearerRefusal {
    reason: BearerRefusalReason,
    response: Response<String>,
}

/// What was wrong with the token a request presented, as [`BearerRefusal::reason`] tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BearerRefusalReason {
    /// No credentials, or another scheme (401 with a bare challenge, RFC 6750 §3.1).
    NoCredentials,
    /// A malformed `Authorization` header (400 `invalid_request`).
    InvalidRequest,
    /// The token is unknown, expired, revoked, meant for another audience, bound to a DPoP
    /// key and presented as a bearer token, or bound to a client certificate the request's
    /// connection did not present (401 `invalid_token`, RFC 8705 §3).
    InvalidToken,
    /// The token lacks a scope the resource requires (403 `insufficient_scope`).
    InsufficientScope,
    /// The sign-in behind the token is not what the resource demands: no user sign-in,
    /// another authentication context class, or too long ago (401
    /// `insufficient_user_authentication`, RFC 9470 §3, the challenge naming the `acr_values`
    /// and `max_age` demanded).
    InsufficientUserAuthentication,
    /// The DPoP proof is missing, malformed, replayed or not of the token's key (401
    /// `invalid_dpop_proof`, RFC 9449 §7.1).
    InvalidDpopProof,
    /// The DPoP proof lacks the server's current nonce, sent in `DPoP-Nonce` (401
    /// `use_dpop_nonce`, RFC 9449 §9).
    UseDpopNonce,
    /// The server could not check the token (a store failure): 5xx, the cause in the logs.
    ServerError,
}

impl BearerRefusal {
    /// Why the token was refused.
    pub fn reason(&self) -> BearerRefusalReason {
        self.reason
    }

    /// The answer's status: 400, 401, 403, or 5xx for a store failure.
    pub fn status(&self) -> http::StatusCode {
        self.response.status()
    }

    /// The answer's headers, `WWW-Authenticate` among them.
    pub fn headers(&self) -> &http::HeaderMap {
        self.response.headers()
    }

    /// The answer's JSON body (empty without credentials).
    pub fn body(&self) -> &str {
        self.response.body()
    }

    /// The answer to send.
    pub fn into_response(self) -> Response<String> {
        self.response
    }
}

impl From<BearerRefusal> for Response<String> {
    fn from(refusal: BearerRefusal) -> Self {
        refusal.response
    }
}

impl std::fmt::Debug for BearerRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerRefusal")
            .field("reason", &self.reason)
            .field("status", &self.response.status())
            .finish_non_exhaustive()
    }
}

/// A token that verified but does not stand for a user where one is needed (userinfo):
/// 401 `invalid_token` with a Bearer challenge.
pub(crate) fn not_a_users_token(wire: &Wire<'_>) -> BearerRefusal {
    let error = OAuthError::new(
        ErrorCode::InvalidToken,
        "the access token was not issued for a user, or the user is gone",
    );
    let plain = &wire.rendered.bearer_refusals.plain;
    refused(wire, plain, Refusal::Error(error), Scheme::Bearer)
}

/// `refusal` typed and rendered with its challenge in `scheme`, for the resource `at`.
fn refused(wire: &Wire<'_>, at: &At, refusal: Refusal, scheme: Scheme) -> BearerRefusal {
    let reason = match &refusal {
        Refusal::NoCredentials => BearerRefusalReason::NoCredentials,
        Refusal::InvalidToken | Refusal::BoundAsBearer | Refusal::OtherCertificate => {
            BearerRefusalReason::InvalidToken
        }
        Refusal::InsufficientScope(_) => BearerRefusalReason::InsufficientScope,
        Refusal::InsufficientUserAuthentication(..) => {
            BearerRefusalReason::InsufficientUserAuthentication
        }
        Refusal::DpopNonce(_) => BearerRefusalReason::UseDpopNonce,
        Refusal::Error(error) => match error.code() {
            ErrorCode::InvalidRequest => BearerRefusalReason::InvalidRequest,
            ErrorCode::InvalidToken => BearerRefusalReason::InvalidToken,
            ErrorCode::InvalidDpopProof => BearerRefusalReason::InvalidDpopProof,
            ErrorCode::UseDpopNonce => BearerRefusalReason::UseDpopNonce,
            ErrorCode::InsufficientScope => BearerRefusalReason::InsufficientScope,
            ErrorCode::InsufficientUserAuthentication => {
                BearerRefusalReason::InsufficientUserAuthentication
            }
            _ => BearerRefusalReason::ServerError,
        },
    };
    BearerRefusal {
        reason,
        response: refuse_as(wire, at, refusal, scheme),
    }
}

/// The 400/401/403 with its challenge in `scheme` (RFC 6750 §3, RFC 9449 §7.1).
fn refuse_as(wire: &Wire<'_>, at: &At, refusal: Refusal, scheme: Scheme) -> Response<String> {
    let refusals = &wire.rendered.bearer_refusals;
    let (error, scope, demanded) = match refusal {
        Refusal::NoCredentials => {
            let mut response = Response::new(String::new());
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            let headers = response.headers_mut();
            headers.insert(WWW_AUTHENTICATE, at.bare.clone());
            if wire.settings.dpop.is_some() {
                // Either scheme will do (RFC 9449 §7.1).
                let dpop = format!(
                    "DPoP realm=\"{}\", algs=\"{}\"{}",
                    wire.settings.realm,
                    dpop_algorithms(wire),
                    at.metadata
                );
                if let Ok(value) = HeaderValue::from_str(&dpop) {
                    headers.append(WWW_AUTHENTICATE, value);
                }
            }
            return response;
        }
        Refusal::InvalidToken if scheme == Scheme::Bearer => {
            let body = refusals.invalid_token_body.clone();
            let mut response = render::json_text(StatusCode::UNAUTHORIZED, body);
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, at.invalid_token.clone());
            return response;
        }
        Refusal::InvalidToken => (
            OAuthError::new(ErrorCode::InvalidToken, INVALID_TOKEN),
            None,
            None,
        ),
        Refusal::BoundAsBearer => {
            let error = OAuthError::new(
                ErrorCode::InvalidToken,
                "the access token is bound to a DPoP key: present it as Authorization: DPoP \
                 with a proof (RFC 9449)",
            );
            return refuse_as(wire, at, Refusal::Error(error), Scheme::Dpop);
        }
        Refusal::OtherCertificate => (
            OAuthError::new(
                ErrorCode::InvalidToken,
                "the access token is bound to a client certificate: present it over a \
                 connection with that certificate (RFC 8705 section 3)",
            ),
            None,
            None,
        ),
        Refusal::DpopNonce(nonce) => {
            let error = OAuthError::new(
                ErrorCode::UseDpopNonce,
                "the DPoP proof must carry the nonce of the DPoP-Nonce header",
            )
            .with_status(StatusCode::UNAUTHORIZED);
            let mut response = refuse_as(wire, at, Refusal::Error(error), Scheme::Dpop);
            if let Ok(value) = HeaderValue::from_str(&nonce) {
                response.headers_mut().insert(NONCE_HEADER, value);
            }
            return response;
        }
        Refusal::Error(error) => (error, None, None),
        Refusal::InsufficientScope(scope) => (
            OAuthError::new(
                ErrorCode::InsufficientScope,
                "the access token lacks the scope this resource requires",
            ),
            Some(scope),
            None,
        ),
        Refusal::InsufficientUserAuthentication(step_up, short) => {
            let error = OAuthError::new(ErrorCode::InsufficientUserAuthentication, short_of(short));
            (error, None, Some(step_up))
        }
    };
    render::log(&error);
    let scope = scope.as_ref().map(Scope::as_str);
    let mut parameters = scope.map_or(String::new(), |scope| format!(", scope=\"{scope}\""));
    if let Some(step_up) = &demanded {
        // RFC 9470 §3: what a new token's sign-in must satisfy.
        parameters.push_str(&step_up.challenge_parameters());
    }
    let body = ErrorBody {
        error: error.code().as_str(),
        error_description: error.description(),
        scope,
    };
    let mut response = render::json(error.status(), &body);
    if matches!(
        error.code(),
        ErrorCode::ServerError | ErrorCode::TemporarilyUnavailable
    ) {
        // A store failure is not the token's fault: no challenge to answer.
        render::retry_after(&mut response);
        return response;
    }
    let realm = &wire.settings.realm;
    let algs = match scheme {
        Scheme::Dpop => dpop_algorithms(wire),
        Scheme::Bearer => String::new(),
    };
    let text = challenge_as(
        scheme,
        realm,
        error.code(),
        error.description(),
        &parameters,
        &algs,
        &at.metadata,
    );
    insert_challenge(&mut response, text);
    response
}

/// What a refusal of step-up says (RFC 9470 §3 leaves the words to the server).
fn short_of(short: ShortFall) -> &'static str {
    match short {
        ShortFall::NoSignIn => "the access token was not issued for a user's sign-in",
        ShortFall::Class => "a different authentication level is required",
        ShortFall::Age => "a more recent authentication is required",
    }
}

fn insert_challenge(response: &mut Response<String>, challenge: String) {
    // Every part is printable ASCII (checked realm, RFC-restricted description, scope and acr
    // values).
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b64token_syntax() {
        assert!(is_b64token(b"abc-._~+/=="));
        assert!(is_b64token(b"AZaz09"));
        assert!(!is_b64token(b""));
        assert!(!is_b64token(b"=="));
        assert!(!is_b64token(b"a b"));
        assert!(!is_b64token(b"a=b"));
        assert!(!is_b64token(b"a\"b"));
        assert!(!is_b64token("\u{e9}".as_bytes()));
    }
}
