//! The rows of codes, tokens and their families, and the grants rebuilt from them.

use super::{corrupt, family_id, time, user};
use crate::audience::Audience;
use crate::client::ClientId;
use crate::error::StoreError;
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::store::{
    AccessGrant, Actor, Authorization, CodeGrant, FamilyId, JwkThumbprint, RefreshGrant,
    SignInFacts, TokenBinding, UserAuthentication,
};

/// Who authorized what: a family's columns, or a code's own copy of them.
#[derive(Clone)]
pub(in crate::sql) struct AuthorizationRow {
    client_id: String,
    user_id: Option<String>,
    username: Option<String>,
    scope: String,
    audience: String,
    /// How the user signed in, a JSON object (NULL: no sign-in, or kept before migration 17).
    authentication: Option<String>,
}

by_column_name!(AuthorizationRow {
    client_id,
    user_id,
    username,
    scope,
    audience,
    authentication
});

impl AuthorizationRow {
    fn into_authorization(self) -> Result<Authorization, StoreError> {
        let authentication = self
            .authentication
            .map(|stored| {
                UserAuthentication::from_stored(&stored).ok_or_else(|| corrupt("authentication"))
            })
            .transpose()?;
        Ok(Authorization::new(
            ClientId::new(&self.client_id).map_err(|_| corrupt("client id"))?,
            user(self.user_id, self.username)?,
            Scope::parse(&self.scope).map_err(|_| corrupt("scope"))?,
        )
        .with_audience(Audience::from_stored(&self.audience).ok_or_else(|| corrupt("audience"))?)
        .with_authentication(authentication))
    }
}

/// An authorization code this caller just redeemed.
pub(in crate::sql) struct CodeRow {
    family_id: Vec<u8>,
    authorization: AuthorizationRow,
    redirect_uri: String,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    issued_at: i64,
    expires_at: i64,
    openid: Option<String>,
    jkt: Option<String>,
}

by_column_name!(CodeRow {
    family_id,
    redirect_uri,
    code_challenge,
    code_challenge_method,
    issued_at,
    expires_at,
    openid,
    jkt;
    authorization
});

impl CodeRow {
    pub(in crate::sql) fn into_grant(self) -> Result<(FamilyId, CodeGrant), StoreError> {
        let code_challenge = match (self.code_challenge, self.code_challenge_method) {
            (None, None) => None,
            (Some(challenge), Some(method)) => Some(
                CodeChallenge::new(&challenge, Some(&method), true)
                    .map_err(|_| corrupt("code challenge"))?,
            ),
            _ => return Err(corrupt("code challenge")),
        };
        let grant = CodeGrant::new(
            self.authorization.into_authorization()?,
            self.redirect_uri,
            code_challenge,
            time(self.issued_at),
            time(self.expires_at),
        )
        .with_openid(
            self.openid
                .map(|stored| {
                    SignInFacts::from_stored(&stored).ok_or_else(|| corrupt("sign-in facts"))
                })
                .transpose()?,
        )
        .bound_to(thumbprint(self.jkt.as_deref())?);
        Ok((family_id(&self.family_id)?, grant))
    }
}

/// A code another caller redeemed, or that could not be redeemed.
pub(in crate::sql) struct CodeStateRow {
    family_id: Vec<u8>,
    pub(in crate::sql) redeemed: bool,
}

by_column_name!(CodeStateRow {
    family_id,
    redeemed
});

impl CodeStateRow {
    pub(in crate::sql) fn family(&self) -> Result<FamilyId, StoreError> {
        family_id(&self.family_id)
    }
}

/// An active access token and its family's authorization.
#[derive(Clone)]
pub(in crate::sql) struct AccessRow {
    family_id: Vec<u8>,
    authorization: AuthorizationRow,
    issued_at: i64,
    expires_at: i64,
    jkt: Option<String>,
    /// The RFC 8693 §4.1 `act` claim as JSON text (NULL: no actor).
    act: Option<String>,
}

by_column_name!(AccessRow { family_id, issued_at, expires_at, jkt, act; authorization });

impl AccessRow {
    /// When the token expires, in seconds since the epoch.
    #[cfg(feature = "postgres")]
    pub(in crate::sql) fn expires_at(&self) -> i64 {
        self.expires_at
    }

    pub(in crate::sql) fn into_grant(self) -> Result<AccessGrant, StoreError> {
        Ok(AccessGrant::new(
            self.authorization.into_authorization()?,
            family_id(&self.family_id)?,
            time(self.issued_at),
            time(self.expires_at),
        )
        .bound_to(binding(self.jkt.as_deref())?)
        .acting(
            self.act
                .map(|act| Actor::from_stored(&act).ok_or_else(|| corrupt("actor")))
                .transpose()?,
        ))
    }
}

/// A code's DPoP key thumbprint as the `jkt` column holds it (NULL: unbound).
fn thumbprint(jkt: Option<&str>) -> Result<Option<JwkThumbprint>, StoreError> {
    jkt.map(|text| JwkThumbprint::parse(text).ok_or_else(|| corrupt("key thumbprint")))
        .transpose()
}

/// A token's binding as the `jkt` column holds it ([`TokenBinding::to_stored`]; NULL:
/// unbound). The column kept DPoP keys alone before certificates could bind, in the same text.
fn binding(jkt: Option<&str>) -> Result<Option<TokenBinding>, StoreError> {
    jkt.map(|text| TokenBinding::from_stored(text).ok_or_else(|| corrupt("token binding")))
        .transpose()
}

/// A live refresh token, its generation and its family's current one.
pub(in crate::sql) struct RefreshRow {
    family_id: Vec<u8>,
    authorization: AuthorizationRow,
    generation: i64,
    current_generation: i64,
    issued_at: i64,
    expires_at: i64,
    family_ends_at: Option<i64>,
    jkt: Option<String>,
}

by_column_name!(RefreshRow {
    family_id,
    generation,
    current_generation,
    issued_at,
    expires_at,
    family_ends_at,
    jkt;
    authorization
});

impl RefreshRow {
    pub(in crate::sql) fn family(&self) -> Result<FamilyId, StoreError> {
        family_id(&self.family_id)
    }

    /// Whether the token was rotated: its family has moved past its generation.
    pub(in crate::sql) fn rotated(&self) -> bool {
        self.generation != self.current_generation
    }

    pub(in crate::sql) fn into_grant(self) -> Result<RefreshGrant, StoreError> {
        let rotated = self.rotated();
        Ok(RefreshGrant::new(
            self.authorization.into_authorization()?,
            family_id(&self.family_id)?,
            rotated,
            time(self.issued_at),
            time(self.expires_at),
        )
        .with_family_end(self.family_ends_at.map(time))
        .bound_to(binding(self.jkt.as_deref())?))
    }
}

/// A refresh token's generation and its family's last rotation.
pub(in crate::sql) struct LastRotationRow {
    generation: i64,
    replaced_generation: Option<i64>,
    rotated_at: Option<i64>,
    current_access: Option<Vec<u8>>,
}

by_column_name!(LastRotationRow {
    generation,
    replaced_generation,
    rotated_at,
    current_access
});

impl LastRotationRow {
    /// The access token the last rotation issued, if the token is the one that rotation
    /// replaced and it happened at or after `since`: what a retry must revoke.
    pub(in crate::sql) fn retry_of(self, since: i64) -> Option<Vec<u8>> {
        let replaced = self.replaced_generation == Some(self.generation);
        let recent = self.rotated_at.is_some_and(|at| at >= since);
        self.current_access.filter(|_| replaced && recent)
    }
}

/// A family's refresh generation.
pub(in crate::sql) struct GenerationRow {
    pub(in crate::sql) generation: i64,
}

by_column_name!(GenerationRow { generation });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binding_column_reads_a_bare_key_a_prefixed_certificate_and_nothing_else() {
        let key = JwkThumbprint::from_bytes([3; 32]);
        let bare = key.to_string();
        assert_eq!(
            binding(Some(&bare)).ok(),
            Some(Some(TokenBinding::Dpop(key)))
        );
        let certificate = format!("x5t#S256:{bare}");
        assert!(matches!(
            binding(Some(&certificate)),
            Ok(Some(TokenBinding::Certificate(_)))
        ));
        assert_eq!(binding(None).ok(), Some(None));
        for corrupt in ["x5t#S256:", "x5t#S256:short", "short", "jkt:{bare}"] {
            assert!(binding(Some(corrupt)).is_err(), "{corrupt:?}");
        }
    }
}
