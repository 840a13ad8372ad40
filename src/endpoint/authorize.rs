//! The authorization endpoint on the wire (RFC 6749 §3.1): reading `GET` queries and `POST`
//! forms, and writing authorization responses as redirects (RFC 6749 §4.1.2, §4.2.2) with `iss`
//! (RFC 9207), as form_post pages, or inside a signed JWT (JARM).

use http::header::CONTENT_TYPE;
use http::{Method, Request, Response, StatusCode};

use super::Wire;
use super::form::{self, Form, FormError};
use super::{is_form_content_type, parse, render};
use crate::error::{ErrorCode, OAuthError};
use crate::grant::authorize;
use crate::grant::authorize::Rules;
use crate::grant::authorize::{ReplyTo, ResponseMode, ResponseType, Validated};
use crate::grant::decide::{Answer, Decide, Refused};
use crate::grant::issue::Issued;
use crate::grant::issue::TOKEN_TYPE;
use crate::grant::pending::{Decision, PendingAuthorization};
use crate::grant::pushed::Pushes;
use crate::grant::request_object::RequestObjects;
use crate::grant::response;
use crate::oidc::IdTokenSigner;
use crate::request::AuthorizationRequest;
use crate::settings::PushedRequests;
use crate::store::UserId;
use crate::store::seam::ClientSeam;

/// What the authorization endpoint decided about a request.
#[must_use = "the host must act on the outcome: show the sign-in page, send the redirect, or show the error"]
pub enum Authorize {
    /// The request is valid: keep the pending authorization where the browser cannot alter it
    /// ([`AuthorizationServer::begin_sign_in`](crate::AuthorizationServer::begin_sign_in) seals it into the form) and show the sign-in
    /// page (and the approval page when [`PendingAuthorization::needs_approval`]).
    SignIn(PendingAuthorization),
    /// An error for the client, as a redirect to its redirect URI: its typed error, and the
    /// redirect ready to send ([`ErrorRedirect::into_response`]).
    Redirect(ErrorRedirect),
    /// An error the host shows to the user without redirecting: the client is unknown or the
    /// redirect URI is missing, malformed or not registered (RFC 6749 §4.1.2.1).
    Reject(OAuthError),
}

impl std::fmt::Debug for Authorize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SignIn(pending) => f.debug_tuple("SignIn").field(pending).finish(),
            // The `Location` carries the client's `state`, which the client may treat as secret.
            Self::Redirect(redirect) => f.debug_tuple("Redirect").field(redirect).finish(),
            Self::Reject(error) => f.debug_tuple("Reject").field(error).finish(),
        }
    }
}

/// What the authorization endpoint decides with: the client store, the server's rules and,
/// when pushed requests are taken, what redeeming one needs.
pub(crate) struct Authorization<'a> {
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) rules: Rules<'a>,
    pub(crate) pushes: Option<Pushes<'a>>,
    /// The server's signing keys, when it has them: the JWT response modes (JARM) sign with
    /// them.
    pub(crate) signer: Option<&'a dyn IdTokenSigner>,
}

/// An authorization request's error for the client (RFC 6749 §4.1.2.1, §4.2.2.1): the typed
/// error, and the redirect to the client's registered redirect URI with `error`,
/// `error_description`, `state` and `iss` (RFC 9207), ready to send (for a request with
/// `response_mode=form_post`, a 200 page that posts them there instead; in a JWT response mode,
/// the one `response` parameter, a signed JWT holding them).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use grantor::{Authorize, ErrorCode};
///
/// # let (server, _) = grantor::doc_fixture::server().await;
/// let request = http::Request::get(
///     "/api/oauth/authorize?response_type=code&client_id=app\
///      &redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=xyz&scope=admin",
/// )
/// .body("")
/// .unwrap();
/// let Authorize::Redirect(redirect) = server.authorize(&request).await else { panic!() };
/// assert_eq!(redirect.error().code(), ErrorCode::InvalidScope);
/// let response = redirect.into_response();
/// assert_eq!(response.status(), 303);
/// assert!(response.headers()["location"].to_str().unwrap().contains("error=invalid_scope"));
/// # }
/// ```
pub struct ErrorRedirect {
    error: OAuthError,
    response: Response<String>,
}

impl ErrorRedirect {
    /// The error the client is sent.
    pub fn error(&self) -> &OAuthError {
        &self.error
    }

    /// The answer's status: 303 (200 for a page in Form Post Response Mode), or the error's
    /// own when no redirect could be written.
    pub fn status(&self) -> http::StatusCode {
        self.response.status()
    }

    /// The answer's headers, `Location` among them (marked sensitive: it carries `state`).
    pub fn headers(&self) -> &http::HeaderMap {
        self.response.headers()
    }

    /// The redirect, to read.
    pub(crate) fn response(&self) -> &Response<String> {
        &self.response
    }

    /// The redirect to send.
    pub fn into_response(self) -> Response<String> {
        self.response
    }
}

impl From<ErrorRedirect> for Response<String> {
    fn from(redirect: ErrorRedirect) -> Self {
        redirect.response
    }
}

impl std::fmt::Debug for ErrorRedirect {
    // The `Location` carries the client's `state`, which the client may treat as secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErrorRedirect")
            .field("error", &self.error)
            .field("status", &self.response.status())
            .finish_non_exhaustive()
    }
}

pub(crate) async fn authorize<B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    authorization: &Authorization<'_>,
    request: &Request<B>,
) -> Authorize {
    let form = match read_request(wire, request) {
        Ok(form) => form,
        Err(error) => return Authorize::Reject(error),
    };
    let request = parse::authorization_request(&form);
    let now = wire.now;
    let Authorization { clients, rules, .. } = *authorization;
    if let Some(request_uri) = request.request_uri {
        let pushes = authorization
            .pushes
            .filter(|_| request_uri.starts_with(PushedRequests::REQUEST_URI_PREFIX));
        if let Some(pushes) = pushes {
            return pushed(pushes, request.client_id, request_uri, now).await;
        }
        // RFC 9101 §6.2: grantor fetches no request object by reference. The answer goes to
        // the client when the client and redirect URI sent beside it are good, else it is shown.
        let error = OAuthError::new(
            ErrorCode::RequestUriNotSupported,
            "request_uri is taken only as the reference to a pushed request (RFC 9126)",
        );
        let refused = authorize::refuse(clients, rules, &request, error, now).await;
        return answer(wire, authorization, refused).await;
    }
    let mut object_form = None;
    let request = match (request.openid.request, rules.objects) {
        (Some(_), Some(_)) if form.repeats("request") => {
            // Which object stands for the request would be a guess (RFC 6749 §3.1).
            let repeated = OAuthError::invalid_request("request is repeated");
            let refused = authorize::refuse(clients, rules, &request, repeated, now).await;
            return answer(wire, authorization, refused).await;
        }
        (Some(jws), Some(objects)) => {
            let object = from_object(
                wire,
                authorization,
                objects,
                &request,
                jws,
                &mut object_form,
            );
            match object.await {
                Ok(object) => object,
                Err(refused) => return answer(wire, authorization, refused).await,
            }
        }
        _ => request,
    };
    let validated = authorize::validate(clients, rules, &request, now).await;
    answer(wire, authorization, validated).await
}

/// The request a request object `jws` stands for (RFC 9101 §5), read into `slot`: verified
/// with the keys of the client named beside it, its parameters agreeing with those sent
/// beside it, its `jti` spent. A refusal goes where [`authorize::refuse`] sends it: by the
/// request as sent until the object verifies, by the object's own parameters after.
async fn from_object<'x>(
    wire: &Wire<'_>,
    authorization: &Authorization<'_>,
    objects: RequestObjects<'_>,
    outside: &AuthorizationRequest<'x>,
    jws: &str,
    slot: &'x mut Option<Form<'static>>,
) -> Result<AuthorizationRequest<'x>, Validated<'x>> {
    let Authorization { clients, rules, .. } = *authorization;
    let now = wire.now;
    let (client, verified) =
        authorize::verify_object(objects, clients, rules, outside, jws, now).await?;
    let form = match parse::request_object(&verified.claims, wire.settings.limits.max_param) {
        Ok(form) => slot.insert(form),
        Err(error) => return Err(authorize::refuse(clients, rules, outside, error, now).await),
    };
    let object = parse::authorization_request(form);
    match objects
        .accept(&client, outside, object.clone(), &verified, now)
        .await
    {
        Ok(object) => Ok(object),
        Err(error) => Err(authorize::refuse(clients, rules, &object, error, now).await),
    }
}

/// The authorization endpoint's answer to what validation decided.
async fn answer(
    wire: &Wire<'_>,
    authorization: &Authorization<'_>,
    validated: Validated<'_>,
) -> Authorize {
    match validated {
        Validated::SignIn(pending) => Authorize::SignIn(pending),
        Validated::Redirect(error, reply_to) => {
            let reply = Reply {
                wire,
                signer: authorization.signer,
                to: reply_to,
            };
            Authorize::Redirect(ErrorRedirect {
                response: reply.error(&error).await,
                error,
            })
        }
        Validated::Reject(error) => {
            render::log(&error);
            Authorize::Reject(error)
        }
    }
}

/// A request by reference to a pushed one (RFC 9126 §4): the pushed request stands for every
/// other parameter, until the sign-in it starts is answered.
async fn pushed(
    pushes: Pushes<'_>,
    client_id: Option<&str>,
    request_uri: &str,
    now: crate::clock::UnixTime,
) -> Authorize {
    match pushes.redeem(client_id, request_uri, now).await {
        Ok(pending) => Authorize::SignIn(pending),
        Err(error) => {
            render::log(&error);
            Authorize::Reject(error)
        }
    }
}

/// `GET` with a query, or `POST` with a form body (RFC 6749 §3.1).
fn read_request<'r, B: AsRef<[u8]>>(
    wire: &Wire<'_>,
    request: &'r Request<B>,
) -> Result<Form<'r>, OAuthError> {
    let limits = wire.settings.limits;
    let parsed = if request.method() == Method::GET {
        form::parse(request.uri().query().unwrap_or("").as_bytes(), limits)
    } else if request.method() == Method::POST {
        if !is_form_content_type(request.headers().get(CONTENT_TYPE)) {
            return Err(OAuthError::invalid_request(
                "a POST to the authorization endpoint must be application/x-www-form-urlencoded",
            ));
        }
        form::parse(request.body().as_ref(), limits)
    } else {
        return Err(OAuthError::invalid_request(
            "the authorization endpoint accepts GET and POST only",
        )
        .with_status(StatusCode::METHOD_NOT_ALLOWED));
    };
    parsed.map_err(|e| {
        let error = OAuthError::invalid_request(e.description());
        if e == FormError::TooLarge && request.method() == Method::POST {
            error.with_status(StatusCode::PAYLOAD_TOO_LARGE)
        } else {
            error
        }
    })
}

pub(crate) async fn decide(
    wire: &Wire<'_>,
    decide: &Decide<'_>,
    pending: PendingAuthorization,
    user: &UserId,
    decision: Decision,
) -> Response<String> {
    let answer = decide.decide(&pending, user, decision, wire.now).await;
    let reply = Reply {
        wire,
        signer: decide.issuer.id_tokens.map(|id_tokens| id_tokens.signer),
        to: pending.reply_to(),
    };
    if pending.response_type() == ResponseType::Device {
        return match answer {
            Ok(Answer::Device(decision)) => device_answered(decision),
            Ok(_) => wire.error(&OAuthError::invalid_request(
                "the device authorization is not valid",
            )),
            Err(Refused::Redirect(error) | Refused::NotRedirectable(error)) => wire.error(&error),
        };
    }
    match answer {
        Ok(Answer::Code(code)) => reply.send(&[("code", code.expose_secret())]).await,
        Ok(Answer::Token(issued)) => fragment(reply, &issued).await,
        Ok(Answer::IdToken(id_token)) => reply.send(&[("id_token", id_token.as_str())]).await,
        Ok(Answer::Device(_)) => {
            let error = OAuthError::invalid_request("not a device authorization");
            wire.error(&error)
        }
        Err(Refused::Redirect(error)) => reply.error(&error).await,
        Err(Refused::NotRedirectable(error)) => wire.error(&error),
    }
}

/// A device flow's decision, recorded: a plain page for a host without its own (RFC 8628
/// §3.3 leaves the wording to the host; [`AuthorizationServer::answer_approval`](crate::AuthorizationServer::answer_approval) hands the decision
/// over instead).
fn device_answered(decision: Decision) -> Response<String> {
    let text = match decision {
        Decision::Approve => "The device is approved. You may return to it.",
        Decision::Deny => "The device's request is denied.",
    };
    let mut response = Response::new(text.to_owned());
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    response
}

/// The implicit grant's answer (RFC 6749 §4.2.2): the token response's members in the
/// fragment, and the ID token of `id_token token` (OIDC Core §3.2.2.5).
async fn fragment(reply: Reply<'_>, issued: &Issued) -> Response<String> {
    let expires_in = itoa::Buffer::new().format(issued.expires_in).to_owned();
    let params = [
        ("access_token", issued.access_token()),
        ("token_type", TOKEN_TYPE),
        ("expires_in", &expires_in),
        ("scope", issued.scope.as_str()),
        ("jti", issued.jti.as_str()),
    ];
    match &issued.id_token {
        None => reply.send(&params).await,
        Some(id_token) => {
            let mut with_id_token = params.to_vec();
            with_id_token.push(("id_token", id_token));
            reply.send(&with_id_token).await
        }
    }
}

/// The error redirect of RFC 6749 §4.1.2.1 / §4.2.2.1 for a validated request (one whose
/// redirect URI is registered): `prompt=none` answered `login_required`, say. `signer` signs
/// it for a request in a JWT mode.
pub(crate) async fn redirect_error(
    wire: &Wire<'_>,
    signer: Option<&dyn IdTokenSigner>,
    pending: &PendingAuthorization,
    error: &OAuthError,
) -> Response<String> {
    let reply = Reply {
        wire,
        signer,
        to: pending.reply_to(),
    };
    reply.error(error).await
}

/// An authorization response on its way: where it goes, and the server's signing keys for a
/// JWT mode.
#[derive(Clone, Copy)]
struct Reply<'a> {
    wire: &'a Wire<'a>,
    signer: Option<&'a dyn IdTokenSigner>,
    to: ReplyTo<'a>,
}

impl Reply<'_> {
    /// The error response of RFC 6749 §4.1.2.1 / §4.2.2.1.
    async fn error(self, error: &OAuthError) -> Response<String> {
        render::log(error);
        let params = [
            ("error", error.code().as_str()),
            ("error_description", error.description()),
        ];
        let mut response = self.send(&params).await;
        render::mark(&mut response, error.code());
        response
    }

    /// The authorization response carrying `params`, then `state` and `iss` (RFC 9207), as
    /// the request's response mode says: a redirect, or a page that posts them (Form Post
    /// Response Mode); in a JWT mode (JARM §2.3), all of them inside the one `response`.
    async fn send(self, params: &[(&'static str, &str)]) -> Response<String> {
        let Reply { wire, signer, to } = self;
        if !to.mode.is_jwt() {
            let state = to.state.map(|state| ("state", state));
            return deliver(wire, to, params.iter().copied().chain(state), true);
        }
        let signed = match signer {
            Some(signer) => {
                let issuer = wire.settings.issuer.as_str();
                response::response_jwt(signer, issuer, to, params, wire.now).await
            }
            // A request kept while the server had keys, answered after they went away.
            None => Err(OAuthError::new(
                ErrorCode::ServerError,
                "this server has no keys to sign the authorization response with",
            )),
        };
        match signed {
            Ok(jwt) => deliver(wire, to, std::iter::once(("response", jwt.as_str())), false),
            Err(error) => wire.error(&error),
        }
    }
}

/// `pairs`, and `iss` when `with_issuer`, to the redirect URI as `to.mode` carries them.
fn deliver<'p>(
    wire: &'p Wire<'_>,
    to: ReplyTo<'_>,
    pairs: impl Iterator<Item = (&'p str, &'p str)> + Clone,
    with_issuer: bool,
) -> Response<String> {
    if to.mode.carrier() == ResponseMode::FormPost {
        let issuer = with_issuer.then_some(("iss", wire.settings.issuer.as_str()));
        return render::form_post(to.redirect_uri, pairs.chain(issuer));
    }
    let issuer = with_issuer.then_some(wire.rendered.issuer_encoded.as_str());
    render::redirect(redirect_location(to, pairs, issuer)).unwrap_or_else(|e| wire.error(&e))
}

/// Adds `pairs`, then `iss` (already encoded) when given, to the redirect URI: to its query for
/// `code`, as its fragment for `token` (RFC 6749 §4.2.2: never the query, where tokens leak
/// into logs and `Referer`). Registered URIs are printable ASCII without a fragment, so
/// appending keeps them exactly as registered. Written into one buffer of the exact length,
/// which becomes the `Location` header without a copy.
fn redirect_location<'p>(
    to: ReplyTo<'_>,
    pairs: impl Iterator<Item = (&'p str, &'p str)> + Clone,
    issuer: Option<&str>,
) -> String {
    let redirect_uri = to.redirect_uri;
    let separator = match to.mode.carrier() {
        ResponseMode::Fragment => "#",
        _ if !redirect_uri.contains('?') => "?",
        _ if redirect_uri.ends_with(['?', '&']) => "",
        _ => "&",
    };
    let issuer = issuer.map(|issuer| ("iss", issuer));
    let items = pairs.clone().count() + usize::from(issuer.is_some());
    // `name=value` each, joined by `&`; the issuer is encoded already.
    let length = redirect_uri.len()
        + separator.len()
        + items.saturating_sub(1)
        + pairs
            .clone()
            .map(|(name, value)| name.len() + 1 + form::encoded_len(value))
            .sum::<usize>()
        + issuer.map_or(0, |(name, issuer)| name.len() + 1 + issuer.len());
    let mut location = String::with_capacity(length);
    location.push_str(redirect_uri);
    location.push_str(separator);
    for (index, (name, value)) in pairs.enumerate() {
        if index > 0 {
            location.push('&');
        }
        location.push_str(name);
        location.push('=');
        form::push_encoded(&mut location, value);
    }
    if let Some((name, issuer)) = issuer {
        if items > 1 {
            location.push('&');
        }
        location.push_str(name);
        location.push('=');
        location.push_str(issuer);
    }
    debug_assert_eq!(location.len(), length);
    location
}
