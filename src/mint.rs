//! Minting: every code, token, `jti`, family id, user id, session id, CSRF token and
//! self-registered client's credentials grantor hands out is made here, from [`random_bytes`], the one function over the operating system's
//! CSPRNG. Stores receive digests and records; they never generate anything.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::StoreError;
use crate::id::{FamilyId, Jti, UserId};
use crate::secret::{
    AccessToken, AuthorizationCode, ClientSecret, RefreshToken, SecretDigest, TIMED_TOKEN_RANDOM,
    base64url, base64url_into, base64url_len, random_bytes, timed_token,
};

// Each operation draws once from `random_bytes` (a per-thread ChaCha12 generator seeded from
// the OS) and cuts what it mints from that one draw.

/// A new authorization code (256 bits, its digest computed at once: it is stored next) and the
/// id of the family it starts, whose random part is cut from the second half of the code's
/// SHA-256 digest, as random as the code and revealing nothing of it, so the draw stays at 32
/// bytes.
pub(crate) fn code() -> Result<(AuthorizationCode, FamilyId), StoreError> {
    let code = AuthorizationCode::hashed(base64url(&random_bytes::<32>()?));
    let family = family_id(&code.digest().as_bytes()[16..]);
    Ok((code, family))
}

/// What issuing tokens mints, from one draw of the CSPRNG.
pub(crate) struct Tokens {
    /// Its issue time and 216 random bits, digest computed.
    pub(crate) access: AccessToken,
    /// Its issue time and 216 random bits, digest computed; when asked for.
    pub(crate) refresh: Option<RefreshToken>,
    /// When the tokens start a family of their own (see `family_id`).
    pub(crate) family: Option<FamilyId>,
}

/// A new access token, a refresh token when `with_refresh`, and a family id when
/// `new_family`. The draw is 64 bytes except for a refresh token in a new family, which takes
/// 80.
pub(crate) fn tokens(with_refresh: bool, new_family: bool) -> Result<Tokens, StoreError> {
    if with_refresh && new_family {
        let draw = random_bytes::<80>()?;
        return Ok(cut(&draw[..64], true, Some(&draw[64..])));
    }
    let draw = random_bytes::<64>()?;
    // Without a refresh token its half of the draw is free for the family id.
    let family = new_family.then(|| &draw[32..48]);
    Ok(cut(&draw, with_refresh, family))
}

/// `draw` is 64 bytes: the access token's random part from the first 32, the refresh token's
/// from the second. Both tokens begin with the time they are issued (see
/// [`SecretDigest::of_token`]).
fn cut(draw: &[u8], with_refresh: bool, family: Option<&[u8]>) -> Tokens {
    let millis = now_millis();
    let random = |from: usize| {
        let mut random = [0u8; TIMED_TOKEN_RANDOM];
        random.copy_from_slice(&draw[from..from + TIMED_TOKEN_RANDOM]);
        random
    };
    let (access, digest) = timed_token(millis, &random(0));
    Tokens {
        access: AccessToken::with_digest(access, digest),
        refresh: with_refresh.then(|| {
            let (refresh, digest) = timed_token(millis, &random(32));
            RefreshToken::with_digest(refresh, digest)
        }),
        family: family.map(family_id),
    }
}

/// The time in milliseconds since the epoch (0 before it).
fn now_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis())
}

/// A family id: the time in milliseconds (48 bits, laid out as in a UUIDv7) and then 80 bits of
/// `random`, so that ids minted later sort later. Databases then add each new family at the end
/// of their indexes on family ids, where the last page is already being written, instead of on a
/// random page of each (with random ids, a SQLite commit of a few dozen tokens wrote a random page
/// per family to disk in each of three indexes).
fn family_id(random: &[u8]) -> FamilyId {
    let millis = now_millis();
    let mut id = [0u8; 16];
    id[..6].copy_from_slice(&millis.to_be_bytes()[10..]);
    id[6..].copy_from_slice(&random[..10]);
    FamilyId::from_bytes(id)
}

/// An access token's `jti`: the second half of its digest ([`SecretDigest::of_token`], that
/// half always from SHA-256), in base64url (22 characters). As unique and unpredictable as the
/// token, it reveals nothing of the token nor of the first half; and since it is a function of the token,
/// grantor derives it again whenever the token is presented and no store has to keep it.
pub(crate) fn jti(access_token: &SecretDigest) -> Jti {
    let mut text = [0u8; base64url_len(16)];
    Jti::new(base64url_into(&access_token.as_bytes()[16..], &mut text))
}

/// The `jti` of a signed assertion grantor issues and keeps no record of (an ID-JAG): 128
/// random bits in base64url, unique as the redeeming server's replay check needs.
pub(crate) fn assertion_jti() -> Result<Jti, StoreError> {
    Ok(Jti::new(base64url(&random_bytes::<16>()?)))
}

/// A new user id: 128 random bits in base64url.
pub(crate) fn user_id() -> Result<UserId, StoreError> {
    Ok(UserId::new(base64url(&random_bytes::<16>()?)))
}

/// A new client id (128 bits) and client secret (256 bits), in base64url, from one draw.
pub(crate) fn client_credentials() -> Result<(String, String), StoreError> {
    let draw = random_bytes::<48>()?;
    Ok((base64url(&draw[..16]), base64url(&draw[16..])))
}

/// A new client secret for a rotation: 256 bits in base64url.
pub(crate) fn client_secret() -> Result<ClientSecret, StoreError> {
    Ok(ClientSecret::new(base64url(&random_bytes::<32>()?)))
}

/// What a client that registers itself gets (RFC 7591 §3.2.1), in the clear to show it once.
pub(crate) struct Registration {
    /// 128 bits, base64url.
    pub(crate) client_id: String,
    /// 256 bits; only its digest is kept, and only a confidential client is handed it.
    pub(crate) client_secret: ClientSecret,
    /// 256 bits, digest computed (it is stored next): the RFC 7592 registration access token.
    pub(crate) registration_access_token: AccessToken,
}

/// A new client id, client secret and registration access token, from one draw (80 bytes).
pub(crate) fn registration() -> Result<Registration, StoreError> {
    let draw = random_bytes::<80>()?;
    Ok(Registration {
        client_id: base64url(&draw[..16]),
        client_secret: ClientSecret::new(base64url(&draw[16..48])),
        registration_access_token: AccessToken::hashed(base64url(&draw[48..])),
    })
}

/// The reference part of a pushed request's `request_uri` (RFC 9126 §2.2): 256 bits in
/// base64url, so it cannot be guessed within its lifetime.
pub(crate) fn request_reference() -> Result<String, StoreError> {
    Ok(base64url(&random_bytes::<32>()?))
}

/// A browser's cookie for an unsigned sign-in form: 128 bits in base64url.
pub(crate) fn cookie() -> Result<String, StoreError> {
    Ok(base64url(&random_bytes::<16>()?))
}

/// A new sign-in session id and CSRF token: 128 bits each in base64url, from one draw.
pub(crate) fn session() -> Result<(String, String), StoreError> {
    let draw = random_bytes::<32>()?;
    Ok((base64url(&draw[..16]), base64url(&draw[16..])))
}

/// A signed-in browser's cookie (256 bits) and the session's public `sid` (128 bits), in
/// base64url, from one draw.
pub(crate) fn user_session() -> Result<(String, String), StoreError> {
    let draw = random_bytes::<48>()?;
    Ok((base64url(&draw[..32]), base64url(&draw[32..])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_values_are_distinct_and_of_their_shape() {
        let minted = tokens(true, true).unwrap();
        let refresh = minted.refresh.unwrap();
        assert_eq!(minted.access.expose_secret().len(), 44);
        assert_eq!(refresh.expose_secret().len(), 44);
        assert_ne!(minted.access.expose_secret(), refresh.expose_secret());
        let again = tokens(false, true).unwrap();
        assert!(again.refresh.is_none());
        assert!(again.family.is_some() && again.family != minted.family);
        let existing = tokens(true, false).unwrap();
        assert!(existing.refresh.is_some() && existing.family.is_none());
        let (code, family) = code().unwrap();
        assert_eq!(code.expose_secret().len(), 43);
        assert_ne!(Some(family), minted.family);
        assert_eq!(&family.to_bytes()[6..], &code.digest().as_bytes()[16..26]);
        // The family id starts with the time in milliseconds, so later ids sort later.
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let mut stamp = [0u8; 8];
        stamp[2..].copy_from_slice(&family.to_bytes()[..6]);
        let stamp = u128::from(u64::from_be_bytes(stamp));
        assert!(
            stamp <= millis && millis - stamp < 60_000,
            "{stamp} vs {millis}"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
        let later = tokens(false, true).unwrap().family.unwrap();
        assert!(later > family, "a later family id sorts later");
        let (session, csrf) = session().unwrap();
        assert_eq!((session.len(), csrf.len()), (22, 22));
        assert_ne!(session, csrf);
    }

    /// The issue time (milliseconds) a digest of a minted token begins with.
    fn issued(digest: &SecretDigest) -> u128 {
        let mut stamp = [0u8; 16];
        stamp[10..].copy_from_slice(&digest.as_bytes()[..6]);
        u128::from_be_bytes(stamp)
    }

    #[test]
    fn token_digests_begin_with_the_issue_time_so_later_tokens_sort_later() {
        let before = now_millis();
        let first = tokens(true, true).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = tokens(true, false).unwrap();
        let after = now_millis();
        for digest in [first.access.digest(), first.refresh.unwrap().digest()] {
            assert!((before..=after).contains(&issued(&digest)));
        }
        let (earlier, later) = (first.access.digest(), second.access.digest());
        assert!(
            earlier.as_bytes() < later.as_bytes(),
            "appended, not scattered"
        );
        assert!(issued(&later) >= issued(&earlier) + 2);
        // The rest of the digest is SHA-256 of the whole token: the random part stays hidden.
        let hash = SecretDigest::of(second.access.expose_secret());
        assert_eq!(&later.as_bytes()[6..], &hash.as_bytes()[..26]);
        assert_eq!(
            AccessToken::new(second.access.expose_secret()).digest(),
            later,
            "a presented token is looked up under the digest it was kept under"
        );
    }

    #[test]
    fn any_other_token_is_digested_whole_with_sha256() {
        // A token minted before tokens carried their issue time (43 characters), a JWT, and
        // 44 characters outside base64url: each is looked up under its plain SHA-256 digest,
        // so tokens issued by an earlier build stay valid.
        let old = base64url(&[7u8; 32]);
        let not_base64 = format!("{}!", "a".repeat(43));
        for token in [
            old.as_str(),
            "eyJhbGciOiJFUzI1NiJ9.e30.sig",
            not_base64.as_str(),
        ] {
            assert_eq!(
                AccessToken::new(token).digest(),
                SecretDigest::of(token),
                "{token}"
            );
            assert_eq!(RefreshToken::new(token).digest(), SecretDigest::of(token));
        }
    }

    #[test]
    fn generated_client_secrets_carry_256_bits_in_base64url() {
        let (id, secret) = client_credentials().unwrap();
        let (_, other) = client_credentials().unwrap();
        assert_eq!((id.len(), secret.len()), (22, 43));
        assert_ne!(secret, other);
        let alphabet = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
        assert!(secret.bytes().all(alphabet) && id.bytes().all(alphabet));
    }

    #[test]
    fn a_registration_mints_three_distinct_values_of_their_shape() {
        let minted = registration().unwrap();
        let token = minted.registration_access_token.expose_secret();
        let secret = minted.client_secret.expose_secret();
        assert_eq!(
            (minted.client_id.len(), secret.len(), token.len()),
            (22, 43, 43)
        );
        assert_ne!(secret, token);
        let again = registration().unwrap();
        assert_ne!(again.client_id, minted.client_id);
        assert_ne!(again.registration_access_token.expose_secret(), token);
    }

    #[test]
    fn the_jti_is_the_second_half_of_the_digest_and_not_the_token() {
        let token = AccessToken::new("a token");
        let jti = jti(&token.digest());
        assert_eq!(jti.as_str().len(), 22);
        assert_eq!(jti, super::jti(&AccessToken::new("a token").digest()));
        assert_ne!(jti, super::jti(&AccessToken::new("another").digest()));
    }
}
