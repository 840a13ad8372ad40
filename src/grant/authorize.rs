//! The authorization endpoint's decisions (RFC 6749 §3.1, §4.1.1, §4.2.1): whether a request is
//! valid and where its errors may go. A valid one becomes a [`PendingAuthorization`] for the
//! sign-in.

use std::sync::Arc;

use super::checks;
use super::pending::PendingAuthorization;
use super::request_object::{RequestObjects, VerifiedObject};
pub use super::response::ResponseType;
pub(crate) use super::response::{MAX_STATE_BYTES, ReplyTo, ResponseMode, is_kept_state};
use crate::audience::Audience;
use crate::client::Client;
use crate::client_documents::{DocumentError, Documents, is_document_id};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::oidc::Prompt;
use crate::oidc::{AcrRequest, ClaimsRequest, OPENID, OpenIdRequest};
use crate::pkce::CodeChallenge;
use crate::request::AuthorizationRequest;
use crate::scope::Scope;
use crate::settings::Resources;
use crate::settings::{PkcePolicy, Profile};
use crate::store::JwkThumbprint;
use crate::store::seam::ClientSeam;

/// What the authorization endpoint decided about a request.
#[derive(Debug)]
pub(crate) enum Validated<'a> {
    /// Valid: the user signs in next.
    SignIn(PendingAuthorization),
    /// Invalid, answered at the client's redirect URI (already known to be registered).
    Redirect(OAuthError, ReplyTo<'a>),
    /// Invalid without a trustworthy redirect URI: the host shows it (RFC 6749 §4.1.2.1).
    Reject(OAuthError),
}

/// The server's rules for authorization requests: PKCE (RFC 7636, RFC 9700 §2.1.1), the
/// profile, which decides whether the implicit grant is offered at all, and the resources
/// tokens may be for (RFC 8707).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules<'a> {
    pub(crate) policy: PkcePolicy,
    pub(crate) profile: Profile,
    pub(crate) resources: &'a Resources,
    /// Whether every client must push its requests (RFC 9126 §5).
    pub(crate) require_pushed: bool,
    /// Whether the request being validated was pushed (RFC 9126 §2.1), as clients that must
    /// push need.
    pub(crate) pushed: bool,
    /// Whether the server serves OpenID Connect: the scope `openid` then makes a request an
    /// OpenID one.
    pub(crate) openid: bool,
    /// Whether the server has keys to sign authorization responses with: the JWT response
    /// modes (JARM) are then offered, else refused as unknown modes.
    pub(crate) jwt_responses: bool,
    /// Whether browsers stay signed in (single sign-on): `prompt=none` is then answered by the
    /// sign-in step, which knows the browser; without it nobody is ever signed in already.
    pub(crate) sign_on: bool,
    /// Whether DPoP is on: `dpop_jkt` then binds a code to a key (RFC 9449 §10); without it
    /// the parameter is unknown, so ignored.
    pub(crate) dpop: bool,
    /// Set when client ID metadata documents are taken: a `client_id` that is an `https` URL
    /// is looked up there, and a refusal says why.
    pub(crate) documents: Option<&'a Documents>,
    /// Set when request objects are taken (RFC 9101).
    pub(crate) objects: Option<RequestObjects<'a>>,
    /// Set when self-registered clients expire: an authorization request is a use.
    pub(crate) idle: Option<super::idle::IdleClients<'a>>,
}

/// Checks an authorization request against its client's registration.
pub(crate) async fn validate<'r>(
    clients: ClientSeam<'_>,
    rules: Rules<'_>,
    request: &AuthorizationRequest<'r>,
    now: UnixTime,
) -> Validated<'r> {
    let (client, reply_to) = match trusted_reply_to(clients, rules, request, now).await {
        Ok(trusted) => trusted,
        Err(error) => return Validated::Reject(error),
    };
    if let Some(idle) = rules.idle
        && let Err(error) = idle.used(&client, now).await
    {
        // Shown, not redirected: the client is gone, and its redirect URIs with it.
        return Validated::Reject(match error.code() {
            ErrorCode::InvalidClient => OAuthError::invalid_request(
                "the client is unknown (a self-registered client unused for too long is \
                 deleted; it registers again)",
            ),
            _ => error,
        });
    }
    let redirect_uri = reply_to.redirect_uri;
    match check(rules, request, &client) {
        Ok(checked) => Validated::SignIn(PendingAuthorization {
            client,
            response_type: checked.response_type,
            redirect_uri: redirect_uri.to_owned(),
            scope: checked.scope,
            audience: checked.audience,
            state: request.state.map(str::to_owned),
            response_mode: checked.response_mode,
            code_challenge: checked.code_challenge,
            dpop_jkt: checked.dpop_jkt,
            created_at: now,
            device: None,
            openid: checked.openid.map(Box::new),
            authenticated: None,
            acr: checked.acr.map(Box::new),
            pushed: None,
        }),
        Err(error) => Validated::Redirect(error, reply_to),
    }
}

/// At the authorization endpoint: the request object `jws` of the request `outside` (as
/// sent), verified with the keys of the client its `client_id` names. The object's own
/// `redirect_uri` cannot be trusted until it verifies, so a refusal is answered as the
/// outside request's errors are: redirected to its `redirect_uri` if that one is registered
/// for the client, else shown ([`refuse`]).
pub(crate) async fn verify_object<'r>(
    objects: RequestObjects<'_>,
    clients: ClientSeam<'_>,
    rules: Rules<'_>,
    outside: &AuthorizationRequest<'r>,
    jws: &str,
    now: UnixTime,
) -> Result<(Arc<Client>, VerifiedObject), Validated<'r>> {
    let Some(client_id) = outside.client_id else {
        return Err(Validated::Reject(OAuthError::invalid_request(
            "client_id is missing: it must be sent beside the request object \
             (RFC 9101 section 5)",
        )));
    };
    let client = find_client(clients, rules.documents, client_id, now)
        .await
        .map_err(Validated::Reject)?;
    match objects.verifier.verify(&client, jws, now).await {
        Ok(verified) => Ok((client, verified)),
        Err(error) => Err(refuse(clients, rules, outside, error, now).await),
    }
}

/// `error` for `request`, answered where its errors go: redirected to the client when its
/// client and redirect URI are known good, else shown (with `error`, not why the redirect URI
/// is not trusted: the request's own fault is the more useful answer).
pub(crate) async fn refuse<'r>(
    clients: ClientSeam<'_>,
    rules: Rules<'_>,
    request: &AuthorizationRequest<'r>,
    error: OAuthError,
    now: UnixTime,
) -> Validated<'r> {
    match trusted_reply_to(clients, rules, request, now).await {
        Ok((_, reply_to)) => Validated::Redirect(error, reply_to),
        Err(_) => Validated::Reject(error),
    }
}

/// The client of `request` and where its errors go, once they may be redirected at all (RFC
/// 6749 §4.1.2.1): the client is known, the redirect URI registered for it, the `state` one
/// the answer can carry.
async fn trusted_reply_to<'r>(
    clients: ClientSeam<'_>,
    rules: Rules<'_>,
    request: &AuthorizationRequest<'r>,
    now: UnixTime,
) -> Result<(Arc<Client>, ReplyTo<'r>), OAuthError> {
    let client = find_client_and_redirect(clients, rules.documents, request, now).await?;
    if let Some(state) = request.state
        && !is_kept_state(state)
    {
        // Shown, not redirected: the client could not match an answer without its state.
        return Err(OAuthError::invalid_request(format!(
            "state must be 1 to {MAX_STATE_BYTES} printable ASCII characters (RFC 6749 \
             appendix A.5)"
        )));
    }
    // From here on the redirect URI is trusted: errors go back to the client.
    let redirect_uri = request.redirect_uri.unwrap_or_default();
    // Errors go where the response would have: as the request's mode says, else the
    // fragment for the implicit types a server serves, else the query.
    let response_type = match request.response_type.and_then(ResponseType::read) {
        Some(ResponseType::Device) | None => ResponseType::Code,
        Some(read) if read.has_id_token() && !rules.openid => ResponseType::Code,
        Some(read) => read,
    };
    let mode = ResponseMode::read(request.response_mode, response_type, rules.jwt_responses)
        .unwrap_or(ResponseMode::default_for(response_type));
    let reply_to = ReplyTo {
        redirect_uri,
        mode,
        state: request.state,
        client_id: request.client_id.unwrap_or_default(),
        signing: client.authorization_signing_algorithm(),
    };
    Ok((client, reply_to))
}

/// The checks that decide whether errors may be redirected at all (RFC 6749 §4.1.2.1).
async fn find_client_and_redirect(
    clients: ClientSeam<'_>,
    documents: Option<&Documents>,
    request: &AuthorizationRequest<'_>,
    now: UnixTime,
) -> Result<Arc<Client>, OAuthError> {
    if let Some(name @ ("client_id" | "redirect_uri")) = request.repeated {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    let client_id = request
        .client_id
        .ok_or_else(|| OAuthError::invalid_request("client_id is missing"))?;
    let client = find_client(clients, documents, client_id, now).await?;
    let redirect_uri = request
        .redirect_uri
        .ok_or_else(|| OAuthError::invalid_request("redirect_uri is missing"))?;
    if !client.has_redirect_uri(redirect_uri) {
        return Err(OAuthError::invalid_request(
            "redirect_uri is not registered for this client",
        ));
    }
    Ok(client)
}

/// The client `client_id` names: a document's (when documents are taken and it is a
/// document URL), else the store's; unknown is `invalid_request`, shown, never redirected.
pub(crate) async fn find_client(
    clients: ClientSeam<'_>,
    documents: Option<&Documents>,
    client_id: &str,
    now: UnixTime,
) -> Result<Arc<Client>, OAuthError> {
    let client = match documents {
        // A document's client, or why there is none (an error page: its redirect URIs are
        // not known to be the client's).
        Some(documents) if is_document_id(client_id) => documents
            .client(client_id, now)
            .await
            .map_err(document_refusal)?,
        _ => clients
            .find_client(client_id)
            .await?
            .ok_or_else(|| OAuthError::invalid_request("the client is unknown"))?,
    };
    Ok(client)
}

/// Why a document URL names no client, as the authorization endpoint answers it (never a
/// redirect).
fn document_refusal(error: DocumentError) -> OAuthError {
    match error {
        DocumentError::Busy => {
            OAuthError::new(ErrorCode::TemporarilyUnavailable, error.to_string())
                .with_status(http::StatusCode::SERVICE_UNAVAILABLE)
        }
        error => OAuthError::invalid_request(error.to_string()),
    }
}

/// Why `response_mode` was refused: the modes a request of `response_type` may name here.
fn unsupported_mode(response_type: ResponseType, jwt_responses: bool) -> OAuthError {
    OAuthError::invalid_request(match (response_type.in_fragment(), jwt_responses) {
        (true, false) => {
            "response_mode must be fragment or form_post for a response that carries tokens"
        }
        (true, true) => {
            "response_mode must be fragment, form_post, jwt, fragment.jwt or form_post.jwt for \
             a response that carries tokens"
        }
        (false, false) => "response_mode must be query, fragment or form_post",
        (false, true) => {
            "response_mode must be query, fragment, form_post, jwt, query.jwt, fragment.jwt or \
             form_post.jwt"
        }
    })
}

/// What passed the checks a redirectable error may come from.
struct Checked {
    response_type: ResponseType,
    response_mode: ResponseMode,
    scope: Scope,
    audience: Audience,
    code_challenge: Option<CodeChallenge>,
    dpop_jkt: Option<JwkThumbprint>,
    openid: Option<OpenIdRequest>,
    acr: Option<AcrRequest>,
}

/// Every other check; failures are redirected to the client.
fn check(
    rules: Rules<'_>,
    request: &AuthorizationRequest<'_>,
    client: &Client,
) -> Result<Checked, OAuthError> {
    // OpenID Connect's parameters are unknown to a server that does not serve it, and unknown
    // parameters may repeat (RFC 6749 §3.1).
    let repeated = if rules.openid {
        request.repeated
    } else {
        request.repeated_oauth
    };
    if let Some(name) = repeated {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    if !rules.pushed && (rules.require_pushed || client.requires_pushed_requests()) {
        return Err(OAuthError::invalid_request(
            "this client must push its authorization requests first (RFC 9126 section 5)",
        ));
    }
    if rules.openid && request.openid.request.is_some() {
        // OIDC Core §6.1: a server that takes no request object (where `rules.objects` is
        // set, the object's parameters stand in for the request before it gets here) says so
        // rather than act on a request whose real parameters it did not read.
        return Err(OAuthError::new(
            ErrorCode::RequestNotSupported,
            "request objects (the request parameter) are not supported",
        ));
    }
    let response_type = match request.response_type.map(ResponseType::read) {
        Some(Some(read)) if rules.openid || !read.has_id_token() => read,
        Some(_) => {
            return Err(OAuthError::new(
                ErrorCode::UnsupportedResponseType,
                if rules.openid {
                    "response_type must be code, token, id_token or id_token token"
                } else {
                    "response_type must be code or token"
                },
            ));
        }
        None => return Err(OAuthError::invalid_request("response_type is missing")),
    };
    if rules.profile.is_fapi2() && response_type != ResponseType::Code {
        return Err(OAuthError::new(
            ErrorCode::UnsupportedResponseType,
            "FAPI 2.0 takes only response_type=code",
        ));
    }
    let response_mode =
        ResponseMode::read(request.response_mode, response_type, rules.jwt_responses)
            .ok_or_else(|| unsupported_mode(response_type, rules.jwt_responses))?;
    let grant = response_type.grant();
    if !checks::offered(rules.profile, grant) {
        return Err(OAuthError::new(
            ErrorCode::UnsupportedResponseType,
            "the implicit grant (response_type token or id_token) is not offered under OAuth 2.1 \
             (nor FAPI 2.0)",
        ));
    }
    if !client.allows(grant) {
        return Err(OAuthError::unauthorized_client(
            "the client is not allowed this response_type",
        ));
    }
    let (scope, openid) = checks::resolve_openid_scope(request.scope, client, rules.openid)?;
    let openid = match openid {
        true => Some(OpenIdRequest {
            claims: ClaimsRequest::read(request.claims)?,
            ..OpenIdRequest::read(request.openid)?
        }),
        false if response_type.has_id_token() => {
            return Err(OAuthError::invalid_scope(
                "response_type id_token needs the scope openid (OpenID Connect Core section 3.2.2.1)",
            ));
        }
        false => None,
    };
    if let Some(openid) = &openid {
        if response_type.has_id_token() && openid.nonce.is_none() {
            return Err(OAuthError::invalid_request(
                "nonce is required with response_type id_token (OpenID Connect Core section 3.2.2.1)",
            ));
        }
        if openid.prompt == Prompt::None && !rules.sign_on {
            // OIDC Core §3.1.2.6: nothing may be asked, and there is no session to answer from.
            return Err(OAuthError::new(
                ErrorCode::LoginRequired,
                "prompt=none, and the user is not signed in",
            ));
        }
    }
    // RFC 9470 §4: `acr_values` and `max_age` ask a plain OAuth request's sign-in too.
    let max_age = match openid {
        Some(_) => None,
        None => request.openid.max_age,
    };
    let acr = AcrRequest::read(request.acr_values, request.claims, max_age)?;
    let audience = rules.resources.resolve(&request.resources, client)?;
    let (code_challenge, dpop_jkt) = match response_type {
        ResponseType::Code => (
            code_challenge(rules, request, client)?,
            dpop_jkt(rules, request)?,
        ),
        // PKCE and DPoP bind a code to its redemption; the implicit grant has no redemption.
        _ => (None, None),
    };
    Ok(Checked {
        response_type,
        response_mode,
        scope,
        audience,
        code_challenge,
        dpop_jkt,
        openid,
        acr,
    })
}

/// Whether `scope` is within what `client` may be granted, `openid` aside for an OpenID
/// Connect request (see [`checks::resolve_openid_scope`]).
pub(crate) fn within_client_scope(scope: &Scope, client: &Client, openid: bool) -> bool {
    scope
        .iter()
        .all(|token| (openid && token == OPENID) || client.scopes().contains(token))
}

/// The key `dpop_jkt` binds the code to (RFC 9449 §10), when DPoP is on.
fn dpop_jkt(
    rules: Rules<'_>,
    request: &AuthorizationRequest<'_>,
) -> Result<Option<JwkThumbprint>, OAuthError> {
    match request.dpop_jkt {
        Some(text) if rules.dpop => JwkThumbprint::parse(text).map(Some).ok_or_else(|| {
            OAuthError::invalid_request(
                "dpop_jkt must be a SHA-256 JWK thumbprint in base64url (RFC 9449 section 10)",
            )
        }),
        _ => Ok(None),
    }
}

fn code_challenge(
    pkce: Rules<'_>,
    request: &AuthorizationRequest<'_>,
    client: &Client,
) -> Result<Option<CodeChallenge>, OAuthError> {
    match (request.code_challenge, request.code_challenge_method) {
        (Some(challenge), method) => {
            CodeChallenge::new(challenge, method, pkce.policy.allows_plain()).map(Some)
        }
        (None, Some(_)) => Err(OAuthError::invalid_request(
            "code_challenge_method was sent without code_challenge",
        )),
        (None, None) if client.is_public() || pkce.policy.required_of_all() => Err(
            OAuthError::invalid_request("code_challenge is required (PKCE, RFC 7636)"),
        ),
        (None, None) => Ok(None),
    }
}
