//! The implicit grant (RFC 6749 §4.2): on approval, an access token for the redirect's
//! fragment, never a refresh token (RFC 6749 §4.2.2); and OpenID Connect's implicit flow (Core
//! §3.2): `id_token` alone, or `id_token token`.

use super::authorize::ResponseType;
use super::id_token::{Beside, IdTokens, Subject};
use super::issue::{Issued, Issuer};
use super::pending::PendingAuthorization;
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::store::{Authorization, SignInFacts, User};

/// What an approved implicit request gets.
#[derive(Debug)]
pub(crate) enum Implicit {
    /// `token`, or `id_token token` with [`Issued::id_token`] set.
    Token(Issued),
    /// `id_token` alone (OIDC Core §3.2.2.5): the ID token. Never log it.
    IdToken(String),
}

/// Issues what the approved `pending` authorization asked for.
pub(crate) async fn issue(
    issuer: &Issuer<'_>,
    pending: &PendingAuthorization,
    user: User,
    facts: Option<SignInFacts>,
    now: UnixTime,
) -> Result<Implicit, OAuthError> {
    let id_token = match (
        pending.response_type.has_id_token(),
        issuer.id_tokens,
        &facts,
    ) {
        (false, _, _) => None,
        (true, Some(id_tokens), Some(facts)) => Some((id_tokens, facts)),
        (true, _, _) => {
            return Err(OAuthError::invalid_request(
                "response_type id_token needs an OpenID Connect request",
            ));
        }
    };
    if let (ResponseType::IdToken, Some((id_tokens, facts))) = (pending.response_type, id_token) {
        // OIDC Core §5.4: with no access token to fetch them, the claims ride in the ID token.
        let claims = id_tokens
            .released(user.id(), Some(&pending.scope), &facts.id_token_claims)
            .await?;
        let subject = subject(pending, &user, facts);
        let token = id_tokens
            .sign(subject, Beside::default(), claims, now)
            .await?;
        return Ok(Implicit::IdToken(token));
    }
    let authorization = Authorization::new(
        pending.client.id().clone(),
        Some(user.clone()),
        pending.scope.clone(),
    )
    .with_audience(pending.audience.clone())
    .with_authentication(Some(pending.authentication(now)));
    let mut issued = issuer
        .issue(
            crate::client::GrantType::Implicit,
            authorization,
            None,
            false,
            now,
        )
        .await?;
    if let Some((id_tokens, facts)) = id_token {
        issued.id_token =
            Some(with_access_token(id_tokens, pending, &user, facts, &issued, now).await?);
    }
    Ok(Implicit::Token(issued))
}

/// `id_token token`: the ID token with `at_hash` of the access token beside it (§3.2.2.10).
async fn with_access_token(
    id_tokens: IdTokens<'_>,
    pending: &PendingAuthorization,
    user: &User,
    facts: &SignInFacts,
    issued: &Issued,
    now: UnixTime,
) -> Result<String, OAuthError> {
    let beside = Beside {
        access_token: Some(issued.access_token()),
        code: None,
    };
    let claims = id_tokens
        .released(user.id(), None, &facts.id_token_claims)
        .await?;
    let subject = subject(pending, user, facts);
    id_tokens.sign(subject, beside, claims, now).await
}

fn subject<'a>(
    pending: &'a PendingAuthorization,
    user: &'a User,
    facts: &'a SignInFacts,
) -> Subject<'a> {
    Subject {
        client: &pending.client,
        user: user.id(),
        facts,
    }
}
