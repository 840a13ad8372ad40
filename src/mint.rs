//! Minting: every code, token, `jti`, family id, user id, session id and CSRF token grantor
//! hands out is made here, from [`random_bytes`], the one function over the operating system's
//! CSPRNG. Stores receive digests and records; they never generate anything.

use crate::error::StoreError;
use crate::secret::{
    AccessToken, AuthorizationCode, RefreshToken, SecretDigest, base64url, base64url_into,
    base64url_len, random_bytes,
};
use crate::store::{FamilyId, Jti, UserId};

/// A new authorization code: 256 bits, its digest computed at once (it is stored next).
pub(crate) fn code() -> Result<AuthorizationCode, StoreError> {
    Ok(AuthorizationCode::hashed(base64url(&random_bytes::<32>()?)))
}

/// A new access token and, when asked, a refresh token: 256 bits each, cut from one draw of the
/// CSPRNG (one `getrandom` call), their digests computed at once.
pub(crate) fn tokens(
    with_refresh: bool,
) -> Result<(AccessToken, Option<RefreshToken>), StoreError> {
    let draw = random_bytes::<64>()?;
    let access = AccessToken::hashed(base64url(&draw[..32]));
    let refresh = with_refresh.then(|| RefreshToken::hashed(base64url(&draw[32..])));
    Ok((access, refresh))
}

/// A new family id: 128 random bits.
pub(crate) fn family_id() -> Result<FamilyId, StoreError> {
    Ok(FamilyId::from_bytes(random_bytes::<16>()?))
}

/// An access token's `jti`: the second half of its SHA-256 digest, in base64url (22
/// characters). As unique and unpredictable as the token, it reveals nothing of the token nor
/// of the first half, under which stores may key it; and since it is a function of the token,
/// grantor derives it again whenever the token is presented and no store has to keep it.
pub(crate) fn jti(access_token: &SecretDigest) -> Jti {
    let mut text = [0u8; base64url_len(16)];
    Jti::new(base64url_into(&access_token.as_bytes()[16..], &mut text))
}

/// A new user id: 128 random bits in base64url.
pub(crate) fn user_id() -> Result<UserId, StoreError> {
    Ok(UserId::new(base64url(&random_bytes::<16>()?)))
}

/// A new sign-in session id and CSRF token: 128 bits each in base64url, from one draw.
pub(crate) fn session() -> Result<(String, String), StoreError> {
    let draw = random_bytes::<32>()?;
    Ok((base64url(&draw[..16]), base64url(&draw[16..])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_values_are_distinct_and_of_their_shape() {
        let (access, refresh) = tokens(true).unwrap();
        let refresh = refresh.unwrap();
        assert_eq!(access.expose_secret().len(), 43);
        assert_ne!(access.expose_secret(), refresh.expose_secret());
        assert!(tokens(false).unwrap().1.is_none());
        assert_ne!(family_id().unwrap(), family_id().unwrap());
        let (session, csrf) = session().unwrap();
        assert_eq!((session.len(), csrf.len()), (22, 22));
        assert_ne!(session, csrf);
    }

    #[test]
    fn the_jti_is_the_second_half_of_the_digest_and_not_the_token() {
        let token = AccessToken::new("a token");
        let jti = jti(&token.digest());
        assert_eq!(jti.as_str().len(), 22);
        assert_eq!(jti, super::jti(&AccessToken::new("a token").digest()));
        assert_ne!(jti, super::jti(&AccessToken::new("another").digest()));
        assert!(!jti.as_str().contains("token"));
    }
}
