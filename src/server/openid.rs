//! The OpenID Connect endpoints (feature `oidc`): userinfo and the discovery document.

use http::{Method, Request, Response, StatusCode};

use super::{AuthorizationServer, LogoutPage, Step};
use crate::clock::UnixTime;
use crate::endpoint::userinfo::{self, UserInfo};
use crate::endpoint::{logout as logout_form, metadata, render, span};
use crate::error::OAuthError;
use crate::grant::logout::{CheckedLogout, Logout};

impl AuthorizationServer {
    /// The UserInfo endpoint (OpenID Connect Core §5.3), `GET` or `POST` at
    /// [`EndpointPaths::userinfo`](crate::settings::EndpointPaths::userinfo): with an access
    /// token whose scope holds `openid` (in `Authorization: Bearer`, `Authorization: DPoP` with
    /// its proof, or a `POST` form's `access_token`), the user's `sub` and the claims the
    /// token's scopes release (§5.4) as JSON; else an RFC 6750 challenge (401 `invalid_token`,
    /// 403 `insufficient_scope`). 404 unless the server serves
    /// OpenID Connect (`AuthorizationServerBuilder::openid_connect`,
    /// feature `oidc`).
    pub async fn userinfo<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let inner = &*self.inner;
        let Some(id_tokens) = inner.id_tokens() else {
            return not_found();
        };
        let info = UserInfo {
            validation: inner.validation(),
            users: &*inner.users,
            clients: inner.client_seam(),
            id_tokens,
        };
        let wire = inner.wire();
        let call = || userinfo::userinfo(&wire, &info, request);
        span::traced("userinfo", call).await
    }

    /// The OpenID Connect Discovery 1.0 document (§4), for
    /// `GET /.well-known/openid-configuration` (after the issuer's path, when it has one): the
    /// [RFC 8414 metadata](Self::metadata), which with OpenID Connect carries every member
    /// Discovery requires (`userinfo_endpoint`, `jwks_uri`, `subject_types_supported`,
    /// `id_token_signing_alg_values_supported`, …). 404 unless the server serves
    /// OpenID Connect (`AuthorizationServerBuilder::openid_connect`,
    /// feature `oidc`).
    pub fn openid_configuration(&self) -> Response<String> {
        if self.inner.id_tokens.is_none() {
            return not_found();
        }
        metadata::document(&self.inner.config)
    }
}

impl AuthorizationServer {
    /// The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0), `GET` or `POST` at
    /// [`EndpointPaths::end_session`](crate::settings::EndpointPaths::end_session), for the
    /// host's pages ([`Site`](crate::signin::Site) serves it). A request with a valid
    /// `id_token_hint` (an ID token of this server, expired or not, for the signed-in user)
    /// from a browser signed in as that user logs it out at once; any other (a browser with
    /// no session among them) asks the person first ([`Step::ConfirmLogout`],
    /// whose form posts back here). Logging out ends the browser's single sign-on session:
    /// clients issued tokens in it that registered a `backchannel_logout_uri` get a logout
    /// token and lose the refresh tokens of the session. Then the browser goes to the
    /// client's `post_logout_redirect_uri` (registered, matched exactly) with its `state`
    /// ([`Step::Respond`], the cookie cleared), or is told it is logged out
    /// ([`Step::LoggedOut`]). An invalid request is an error page, never a redirect.
    pub async fn logout<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Step {
        let Some(logout) = self.inner.logout() else {
            let error = OAuthError::invalid_request("this server does not serve logout");
            return Step::Error(error.with_status(StatusCode::NOT_FOUND));
        };
        let form = match logout_form::read(self.inner.config.limits, request) {
            Ok(form) => form,
            Err(error) => return Step::Error(error),
        };
        let now = self.inner.now();
        let cookie = self.sign_on_cookie(request.headers());
        if form.get("logout").is_some() {
            // The confirmation page's answer.
            if request.method() != Method::POST {
                return Step::Error(OAuthError::invalid_request("confirm a logout with POST"));
            }
            let csrf = form.get("csrf").unwrap_or_default();
            return match logout.confirmed(csrf, cookie, now).await {
                Ok(checked) => self.log_out(&logout, checked, cookie, now).await,
                Err(error) => Step::Error(error),
            };
        }
        let checked = match logout.check(logout_form::request(&form), now).await {
            Ok(checked) => checked,
            Err(error) => return Step::Error(error),
        };
        match self.proven(&logout, &checked, cookie, now).await {
            Ok(true) => self.log_out(&logout, checked, cookie, now).await,
            Ok(false) => match logout.confirmation(&checked, cookie, now).await {
                Ok(csrf) => Step::ConfirmLogout(LogoutPage {
                    csrf,
                    client_name: checked.client_name,
                }),
                Err(error) => Step::Error(error),
            },
            Err(error) => Step::Error(error),
        }
    }

    /// Whether a logout request proved itself: its `id_token_hint` names the user the browser
    /// is signed in as. A browser with no session to end is asked first: otherwise anyone
    /// holding one of their own ID tokens could send any browser through this endpoint to
    /// their client's `post_logout_redirect_uri` without a click (an open redirector).
    async fn proven(
        &self,
        logout: &Logout<'_>,
        checked: &CheckedLogout,
        cookie: &str,
        now: UnixTime,
    ) -> Result<bool, OAuthError> {
        if checked.hinted_user.is_none() || cookie.is_empty() {
            return Ok(false);
        }
        let digest = crate::secret::SecretDigest::of(cookie);
        let session = self
            .inner
            .user_sessions
            .find_user_session(&digest, now)
            .await?;
        Ok(session.is_some_and(|session| logout.hint_names(checked, session.user.id())))
    }

    /// Ends the browser's session, then the redirect back to the client or the logged-out page.
    async fn log_out(
        &self,
        logout: &Logout<'_>,
        checked: CheckedLogout,
        cookie: &str,
        now: UnixTime,
    ) -> Step {
        if let Err(error) = logout.end(cookie, now).await {
            return Step::Error(error);
        }
        let Some((uri, state)) = checked.redirect else {
            return Step::LoggedOut;
        };
        let mut location = uri;
        if let Some(state) = state {
            location.push(if location.contains('?') { '&' } else { '?' });
            location.push_str("state=");
            crate::endpoint::form::push_encoded(&mut location, &state);
        }
        let mut response = match render::redirect(location) {
            Ok(response) => response,
            Err(error) => return Step::Error(error),
        };
        if let Ok(clear) = http::HeaderValue::from_str(&self.clear_sign_on_cookie()) {
            response
                .headers_mut()
                .append(http::header::SET_COOKIE, clear);
        }
        Step::Respond(response)
    }
}

fn not_found() -> Response<String> {
    let mut response = Response::new(String::new());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}
