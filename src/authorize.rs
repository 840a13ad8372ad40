//! The authorization endpoint (RFC 6749 §3.1, §4.1.1, §4.2.1): validate the request, hand the
//! host a pending authorization for its sign-in page, and turn the user's decision into the
//! redirect back to the client.

use std::fmt;
use std::sync::Arc;

use http::header::CONTENT_TYPE;
use http::{Method, Request, Response};

use crate::client::{Approval, Client, GrantType};
use crate::clock::UnixTime;
use crate::endpoint::form::{self, Form, FormError};
use crate::endpoint::render;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::{self, authorization_code, implicit};
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::server::{Inner, PkcePolicy};
use crate::store::{User, UserId};

/// What the authorization endpoint decided about a request.
#[derive(Debug)]
#[must_use = "the host must act on the outcome: show the sign-in page, send the redirect, or show the error"]
pub enum Authorize {
    /// The request is valid: keep the pending authorization server-side and show the sign-in
    /// page (and the approval page when [`PendingAuthorization::needs_approval`]).
    SignIn(PendingAuthorization),
    /// An error for the client, already rendered as a redirect to its redirect URI: send it as
    /// it is.
    Redirect(Response<String>),
    /// An error the host shows to the user without redirecting: the client is unknown or the
    /// redirect URI is missing, malformed or not registered (RFC 6749 §4.1.2.1).
    Reject(OAuthError),
}

/// The user's answer on the approval page (or the host's, for clients without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The user approves: the client gets a code or a token.
    Approve,
    /// The user denies: the client gets `access_denied`.
    Deny,
}

/// Which response the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseType {
    /// `code`: the authorization code grant, answered in the redirect's query.
    Code,
    /// `token`: the implicit grant, answered in the redirect's fragment.
    Token,
}

/// A validated authorization request waiting for the user to sign in.
///
/// Only [`AuthorizationServer::authorize`](crate::AuthorizationServer::authorize) makes one,
/// and it cannot be changed: the host keeps it server-side (as [`SignInFlow`](crate::SignInFlow)
/// does, under a random session id) while its sign-in page runs, then hands it to
/// [`AuthorizationServer::decide`](crate::AuthorizationServer::decide). Nothing the browser
/// sends afterwards can alter the client, redirect URI, scope or PKCE challenge it carries.
pub struct PendingAuthorization {
    pub(crate) client: Arc<Client>,
    pub(crate) response_type: ResponseType,
    pub(crate) redirect_uri: String,
    pub(crate) scope: Scope,
    pub(crate) state: Option<String>,
    pub(crate) code_challenge: Option<CodeChallenge>,
    pub(crate) created_at: UnixTime,
}

impl PendingAuthorization {
    /// The client asking.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The scope that will be granted on approval.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Whether the user must see an approval page naming the client and the scope.
    pub fn needs_approval(&self) -> bool {
        self.client.approval() == Approval::Required
    }

    /// `code` or `token`.
    pub fn response_type(&self) -> ResponseType {
        self.response_type
    }

    /// The redirect URI the answer will go to.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }
}

impl fmt::Debug for PendingAuthorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingAuthorization")
            .field("client_id", self.client.id())
            .field("response_type", &self.response_type)
            .field("redirect_uri", &self.redirect_uri)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

pub(crate) async fn authorize<B: AsRef<[u8]>>(inner: &Inner, request: &Request<B>) -> Authorize {
    let form = match read_request(inner, request) {
        Ok(form) => form,
        Err(error) => return Authorize::Reject(error),
    };
    let client = match find_client_and_redirect(inner, &form).await {
        Ok(client) => client,
        Err(error) => {
            render::log(&error);
            return Authorize::Reject(error);
        }
    };
    // From here on the redirect URI is trusted: errors go back to the client.
    let redirect_uri = form.get("redirect_uri").unwrap_or_default().to_owned();
    let state = form.get("state").map(str::to_owned);
    let mode = match form.get("response_type") {
        Some("token") => ResponseType::Token,
        _ => ResponseType::Code,
    };
    match validate(inner, &form, &client) {
        Ok((response_type, scope, code_challenge)) => Authorize::SignIn(PendingAuthorization {
            client,
            response_type,
            redirect_uri,
            scope,
            state,
            code_challenge,
            created_at: inner.clock.now(),
        }),
        Err(error) => Authorize::Redirect(error_redirect(
            inner,
            &redirect_uri,
            mode,
            state.as_deref(),
            &error,
        )),
    }
}

/// `GET` with a query, or `POST` with a form body (RFC 6749 §3.1).
fn read_request<'r, B: AsRef<[u8]>>(
    inner: &Inner,
    request: &'r Request<B>,
) -> Result<Form<'r>, OAuthError> {
    let limits = inner.config.limits;
    let parsed = if request.method() == Method::GET {
        form::parse(request.uri().query().unwrap_or("").as_bytes(), limits)
    } else if request.method() == Method::POST {
        if !grant::is_form_content_type(request.headers().get(CONTENT_TYPE)) {
            return Err(OAuthError::invalid_request(
                "a POST to the authorization endpoint must be application/x-www-form-urlencoded",
            ));
        }
        form::parse(request.body().as_ref(), limits)
    } else {
        return Err(OAuthError::invalid_request(
            "the authorization endpoint accepts GET and POST only",
        )
        .with_status(http::StatusCode::METHOD_NOT_ALLOWED));
    };
    parsed.map_err(|e| {
        let error = OAuthError::invalid_request(e.description());
        if e == FormError::TooLarge && request.method() == Method::POST {
            error.with_status(http::StatusCode::PAYLOAD_TOO_LARGE)
        } else {
            error
        }
    })
}

/// The checks that decide whether errors may be redirected at all (RFC 6749 §4.1.2.1).
async fn find_client_and_redirect(
    inner: &Inner,
    form: &Form<'_>,
) -> Result<Arc<Client>, OAuthError> {
    if let Some(name @ ("client_id" | "redirect_uri")) = form.repeated() {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    let client_id = form
        .get("client_id")
        .ok_or_else(|| OAuthError::invalid_request("client_id is missing"))?;
    let client = inner
        .clients
        .find_client(client_id)
        .await?
        .ok_or_else(|| OAuthError::invalid_request("the client is unknown"))?;
    let redirect_uri = form
        .get("redirect_uri")
        .ok_or_else(|| OAuthError::invalid_request("redirect_uri is missing"))?;
    if !client.has_redirect_uri(redirect_uri) {
        return Err(OAuthError::invalid_request(
            "redirect_uri is not registered for this client",
        ));
    }
    Ok(client)
}

/// Every other check; failures are redirected to the client.
fn validate(
    inner: &Inner,
    form: &Form<'_>,
    client: &Client,
) -> Result<(ResponseType, Scope, Option<CodeChallenge>), OAuthError> {
    if let Some(name) = form.repeated() {
        return Err(OAuthError::invalid_request(format!("{name} is repeated")));
    }
    let (response_type, grant) = match form.get("response_type") {
        Some("code") => (ResponseType::Code, GrantType::AuthorizationCode),
        Some("token") => (ResponseType::Token, GrantType::Implicit),
        Some(_) => {
            return Err(OAuthError::new(
                ErrorCode::UnsupportedResponseType,
                "response_type must be code or token",
            ));
        }
        None => return Err(OAuthError::invalid_request("response_type is missing")),
    };
    if !client.allows(grant) {
        return Err(OAuthError::unauthorized_client(
            "the client is not allowed this response_type",
        ));
    }
    let scope = grant::resolve_scope(form.get("scope"), client)?;
    let code_challenge = match response_type {
        ResponseType::Code => pkce(inner, form, client)?,
        // PKCE binds a code to its redemption; the implicit grant has no redemption.
        ResponseType::Token => None,
    };
    Ok((response_type, scope, code_challenge))
}

fn pkce(
    inner: &Inner,
    form: &Form<'_>,
    client: &Client,
) -> Result<Option<CodeChallenge>, OAuthError> {
    let config = &inner.config;
    match (
        form.get("code_challenge"),
        form.get("code_challenge_method"),
    ) {
        (Some(challenge), method) => {
            CodeChallenge::new(challenge, method, config.allow_plain_pkce).map(Some)
        }
        (None, Some(_)) => Err(OAuthError::invalid_request(
            "code_challenge_method was sent without code_challenge",
        )),
        (None, None) if client.is_public() || config.pkce == PkcePolicy::AllClients => Err(
            OAuthError::invalid_request("code_challenge is required (PKCE, RFC 7636)"),
        ),
        (None, None) => Ok(None),
    }
}

pub(crate) async fn decide(
    inner: &Inner,
    pending: PendingAuthorization,
    user: &UserId,
    decision: Decision,
) -> Response<String> {
    let mode = pending.response_type;
    let state = pending.state.as_deref();
    match approve(inner, &pending, user, decision).await {
        Ok(Approved::Redirect(response)) => response,
        Ok(Approved::NotRedirectable(error)) => {
            render::error(&error, &inner.config.basic_challenge)
        }
        Err(error) => error_redirect(inner, &pending.redirect_uri, mode, state, &error),
    }
}

enum Approved {
    Redirect(Response<String>),
    /// The client or its redirect URI went away while the user signed in.
    NotRedirectable(OAuthError),
}

async fn approve(
    inner: &Inner,
    pending: &PendingAuthorization,
    user: &UserId,
    decision: Decision,
) -> Result<Approved, OAuthError> {
    let now = inner.clock.now();
    let current = inner
        .clients
        .find_client(pending.client.id().as_str())
        .await?;
    let Some(current) = current.filter(|c| c.has_redirect_uri(&pending.redirect_uri)) else {
        return Ok(Approved::NotRedirectable(OAuthError::invalid_request(
            "the client or its redirect URI is no longer registered",
        )));
    };
    // The registration may have changed while the user signed in; what is issued follows the
    // registration as it is now.
    let grant = match pending.response_type {
        ResponseType::Code => GrantType::AuthorizationCode,
        ResponseType::Token => GrantType::Implicit,
    };
    if !current.allows(grant) {
        return Err(OAuthError::unauthorized_client(
            "the client is no longer allowed this response_type",
        ));
    }
    if !pending.scope.is_subset_of(current.scopes()) {
        return Err(OAuthError::invalid_scope(
            "the requested scope exceeds what the client may now be granted",
        ));
    }
    if pending
        .created_at
        .plus(inner.config.authorization_request_lifetime)
        <= now
    {
        return Err(OAuthError::new(
            ErrorCode::AccessDenied,
            "the authorization request expired before the user answered",
        ));
    }
    if decision == Decision::Deny {
        return Err(OAuthError::new(
            ErrorCode::AccessDenied,
            "the user denied the request",
        ));
    }
    let user: User = inner.users.find_user(user).await?.ok_or_else(|| {
        OAuthError::new(ErrorCode::AccessDenied, "the user account is not available")
    })?;
    let redirect_uri = &pending.redirect_uri;
    let state = pending.state.as_deref();
    let location = match pending.response_type {
        ResponseType::Code => {
            let code = authorization_code::issue_code(inner, pending, user, now).await?;
            let params = [("code", code.expose_secret())];
            redirect_location(inner, redirect_uri, ResponseType::Code, &params, state)
        }
        ResponseType::Token => {
            let token = implicit::issue_token(inner, pending, user, now).await?;
            let expires_in = token.expires_in.to_string();
            let params = [
                ("access_token", token.access_token.as_str()),
                ("token_type", token.token_type),
                ("expires_in", &expires_in),
                ("scope", token.scope.as_str()),
                ("jti", token.jti.as_str()),
            ];
            redirect_location(inner, redirect_uri, ResponseType::Token, &params, state)
        }
    };
    render::redirect(location).map(Approved::Redirect)
}

/// The error redirect of RFC 6749 §4.1.2.1 / §4.2.2.1, with `iss` (RFC 9207).
fn error_redirect(
    inner: &Inner,
    redirect_uri: &str,
    mode: ResponseType,
    state: Option<&str>,
    error: &OAuthError,
) -> Response<String> {
    render::log(error);
    let params = [
        ("error", error.code().as_str()),
        ("error_description", error.description()),
    ];
    render::redirect(redirect_location(inner, redirect_uri, mode, &params, state))
        .unwrap_or_else(|e| render::error(&e, &inner.config.basic_challenge))
}

/// Adds `params`, then `state` and `iss`, to the redirect URI: to its query for `code`, as its
/// fragment for `token` (RFC 6749 §4.2.2: never the query, where tokens leak into logs and
/// `Referer`). Registered URIs are printable ASCII without a fragment, so appending keeps them
/// exactly as registered. Written into one buffer of the exact length, which becomes the
/// `Location` header without a copy.
fn redirect_location(
    inner: &Inner,
    redirect_uri: &str,
    mode: ResponseType,
    params: &[(&'static str, &str)],
    state: Option<&str>,
) -> String {
    let separator = match mode {
        ResponseType::Token => "#",
        ResponseType::Code if !redirect_uri.contains('?') => "?",
        ResponseType::Code if redirect_uri.ends_with(['?', '&']) => "",
        ResponseType::Code => "&",
    };
    let issuer = inner.config.issuer_encoded.as_str();
    let state = state.map(|state| ("state", state));
    let pairs = || params.iter().copied().chain(state);
    // Each pair is `name=value&`; `iss=` ends the list without an `&`.
    let length = redirect_uri.len()
        + separator.len()
        + pairs()
            .map(|(name, value)| name.len() + 2 + form::encoded_len(value))
            .sum::<usize>()
        + "iss=".len()
        + issuer.len();
    let mut location = String::with_capacity(length);
    location.push_str(redirect_uri);
    location.push_str(separator);
    for (name, value) in pairs() {
        location.push_str(name);
        location.push('=');
        form::push_encoded(&mut location, value);
        location.push('&');
    }
    location.push_str("iss=");
    location.push_str(issuer);
    debug_assert_eq!(location.len(), length);
    location
}
