//! The authorization code grant (RFC 6749 §4.1): a single-use code on approval, exchanged at
//! the token endpoint by the client it was issued to, with the same redirect URI and, where
//! the request carried a challenge, the PKCE verifier (RFC 7636).

use super::TokenResponse;
use crate::authorize::PendingAuthorization;
use crate::client::Client;
use crate::clock::UnixTime;
use crate::endpoint::form::Form;
use crate::error::OAuthError;
use crate::mint;
use crate::pkce;
use crate::secret::AuthorizationCode;
use crate::server::Inner;
use crate::store::{Authorization, CodeGrant, CodeRedemption, User};

/// Issues the code for the redirect's query (`state` and `iss` are added by the caller).
pub(crate) async fn issue_code(
    inner: &Inner,
    pending: &PendingAuthorization,
    user: User,
    now: UnixTime,
) -> Result<AuthorizationCode, OAuthError> {
    let grant = CodeGrant::new(
        Authorization::new(pending.client.id().clone(), Some(user), pending.scope.clone()),
        pending.redirect_uri.clone(),
        pending.code_challenge.clone(),
        now,
        now.plus(inner.config.code_lifetime),
    );
    let code = mint::code()?;
    let family = mint::family_id()?;
    inner.tokens.insert_code(&code.digest(), family, grant).await?;
    Ok(code)
}

/// The token request of RFC 6749 §4.1.3.
pub(crate) async fn exchange(
    inner: &Inner,
    client: &Client,
    form: &Form<'_>,
    now: UnixTime,
) -> Result<TokenResponse, OAuthError> {
    let code = form
        .get("code")
        .map(AuthorizationCode::hashed)
        .ok_or_else(|| OAuthError::invalid_request("code is missing"))?;
    let redirect_uri = form
        .get("redirect_uri")
        .ok_or_else(|| OAuthError::invalid_request("redirect_uri is missing"))?;
    let verifier = form.get("code_verifier");
    if verifier.is_some_and(|v| !pkce::is_verifier_syntax(v)) {
        return Err(OAuthError::invalid_request(
            "code_verifier must be 43 to 128 unreserved characters (RFC 7636 §4.1)",
        ));
    }
    // Consumed before any other check: a code presented once is spent, whoever presented it.
    let (grant, family) = match inner.tokens.redeem_code(&code.digest(), now).await? {
        CodeRedemption::Redeemed { grant, family } => (grant, family),
        CodeRedemption::Replayed { family } => {
            // RFC 6749 §4.1.2: a code used twice revokes what it was exchanged for.
            super::revoke_after_replay(inner, family).await?;
            return Err(OAuthError::invalid_grant(
                "the authorization code was already used; tokens issued for it are revoked",
            ));
        }
        _ => {
            return Err(OAuthError::invalid_grant(
                "the authorization code is invalid or expired",
            ));
        }
    };
    if grant.authorization.client_id != *client.id() {
        return Err(OAuthError::invalid_grant(
            "the authorization code was issued to another client",
        ));
    }
    if grant.redirect_uri != redirect_uri {
        return Err(OAuthError::invalid_grant(
            "redirect_uri does not match the authorization request",
        ));
    }
    match (&grant.code_challenge, verifier) {
        (Some(challenge), Some(verifier)) if challenge.verify(verifier) => {}
        (Some(_), Some(_)) => {
            return Err(OAuthError::invalid_grant(
                "code_verifier does not match the code_challenge",
            ));
        }
        (Some(_), None) => {
            return Err(OAuthError::invalid_grant("code_verifier is missing"));
        }
        // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a downgrade.
        (None, Some(_)) => {
            return Err(OAuthError::invalid_grant(
                "code_verifier was sent but the authorization request had no code_challenge",
            ));
        }
        (None, None) => {}
    }
    let refresh = client.issues_refresh_tokens();
    super::issue(inner, grant.authorization, Some(family), refresh, now).await
}
