//! How an authorization response goes back (RFC 6749 §4.1.2, §4.2.2; OAuth 2.0 Multiple
//! Response Types; Form Post Response Mode; JARM): what the client asked for, how it reaches
//! the redirect URI, the `state` it carries, and the signed JWT it travels in when asked.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::client::GrantType;
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::oidc::{ID_TOKEN_TYP, IdTokenSigner};
use crate::signing::SigningAlgorithm;

/// Which response the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseType {
    /// `code`: the authorization code grant, answered in the redirect's query.
    Code,
    /// `token`: the implicit grant, answered in the redirect's fragment.
    Token,
    /// `id_token` (OpenID Connect Core §3.2): an ID token alone, in the fragment; for clients
    /// agreed the implicit grant.
    IdToken,
    /// `id_token token` (OpenID Connect Core §3.2): an ID token and an access token, in the
    /// fragment; for clients agreed the implicit grant.
    IdTokenToken,
    /// No redirect: the device authorization grant (RFC 8628), whose answer the device
    /// collects by polling the token endpoint.
    Device,
}

impl ResponseType {
    /// The response type `value` names: space-separated values in any order (RFC 6749 §3.1.1).
    pub(crate) fn read(value: &str) -> Option<Self> {
        let mut values: Vec<&str> = value.split(' ').filter(|v| !v.is_empty()).collect();
        values.sort_unstable();
        match values.as_slice() {
            ["code"] => Some(Self::Code),
            ["token"] => Some(Self::Token),
            ["id_token"] => Some(Self::IdToken),
            ["id_token", "token"] => Some(Self::IdTokenToken),
            _ => None,
        }
    }

    /// The value as the request writes it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Token => "token",
            Self::IdToken => "id_token",
            Self::IdTokenToken => "id_token token",
            Self::Device => "device",
        }
    }

    /// The grant the response belongs to.
    pub(crate) fn grant(self) -> GrantType {
        match self {
            Self::Code => GrantType::AuthorizationCode,
            Self::Token | Self::IdToken | Self::IdTokenToken => GrantType::Implicit,
            Self::Device => GrantType::DeviceCode,
        }
    }

    /// Whether the answer goes in the redirect's fragment (RFC 6749 §4.2.2, OIDC Core
    /// §3.2.2.5), never its query.
    pub(crate) fn in_fragment(self) -> bool {
        self != Self::Code
    }

    /// Whether the response is an ID token (OIDC Core §3.2).
    pub(crate) fn has_id_token(self) -> bool {
        matches!(self, Self::IdToken | Self::IdTokenToken)
    }
}

/// How an authorization response reaches the redirect URI: in its query, in its fragment
/// (OAuth 2.0 Multiple Response Types §2.1), or posted by an HTML form the browser submits
/// itself (OAuth 2.0 Form Post Response Mode), which keeps the answer out of URLs; and, in the
/// JWT modes (JARM §2.3), the same three ways with the parameters inside one signed JWT, the
/// `response` parameter, so the client can tell the answer came from this server for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResponseMode {
    Query,
    Fragment,
    FormPost,
    /// `query.jwt` (JARM §2.3.1).
    QueryJwt,
    /// `fragment.jwt` (JARM §2.3.2).
    FragmentJwt,
    /// `form_post.jwt` (JARM §2.3.3).
    FormPostJwt,
}

impl ResponseMode {
    /// The response type's own mode, when the request names none: the fragment for a
    /// response carrying tokens, else the query.
    pub(crate) fn default_for(response_type: ResponseType) -> Self {
        match response_type.in_fragment() {
            true => Self::Fragment,
            false => Self::Query,
        }
    }

    /// The mode `requested` for `response_type`: the response type's own without one; `None`
    /// for an unknown mode, a JWT mode when `jwt_offered` is false (the server has no keys to
    /// sign with), or a query for a response carrying tokens (Multiple Response Types §2.1,
    /// JARM §2.3.1: never in a query, where tokens leak into logs and `Referer`, not even
    /// inside a JWT that is signed but not encrypted). `jwt` is the response type's own
    /// carrier in a JWT (JARM §2.3.4).
    pub(crate) fn read(
        requested: Option<&str>,
        response_type: ResponseType,
        jwt_offered: bool,
    ) -> Option<Self> {
        let mode = match requested {
            None => return Some(Self::default_for(response_type)),
            Some("query") => Self::Query,
            Some("fragment") => Self::Fragment,
            Some("form_post") => Self::FormPost,
            Some("query.jwt") => Self::QueryJwt,
            Some("fragment.jwt") => Self::FragmentJwt,
            Some("form_post.jwt") => Self::FormPostJwt,
            Some("jwt") => match Self::default_for(response_type) {
                Self::Fragment => Self::FragmentJwt,
                _ => Self::QueryJwt,
            },
            Some(_) => return None,
        };
        let tokens_in_query = response_type.in_fragment() && mode.carrier() == Self::Query;
        (!tokens_in_query && (jwt_offered || !mode.is_jwt())).then_some(mode)
    }

    /// Whether the parameters travel inside a signed JWT (JARM).
    pub(crate) fn is_jwt(self) -> bool {
        matches!(self, Self::QueryJwt | Self::FragmentJwt | Self::FormPostJwt)
    }

    /// How the answer travels: the mode itself, or for a JWT mode the plain mode its one
    /// `response` parameter travels by.
    pub(crate) fn carrier(self) -> Self {
        match self {
            Self::QueryJwt => Self::Query,
            Self::FragmentJwt => Self::Fragment,
            Self::FormPostJwt => Self::FormPost,
            plain => plain,
        }
    }

    /// As a pending authorization keeps it (`None` for the response type's own).
    pub(crate) fn as_stored(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::Fragment => "fragment",
            Self::FormPost => "form_post",
            Self::QueryJwt => "query.jwt",
            Self::FragmentJwt => "fragment.jwt",
            Self::FormPostJwt => "form_post.jwt",
        }
    }
}

/// Where an authorization response goes (RFC 6749 §4.1.2, §4.2.2): a registered redirect URI,
/// in its query (`code`) or fragment (`token`), with the client's `state`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplyTo<'a> {
    pub(crate) redirect_uri: &'a str,
    pub(crate) mode: ResponseMode,
    pub(crate) state: Option<&'a str>,
    /// The client the answer is for: a JWT mode's `aud` (JARM §2.1).
    pub(crate) client_id: &'a str,
    /// The client's `authorization_signed_response_alg`, what a JWT mode signs with (`None`:
    /// it registered none, so the signer's default, RS256 or under FAPI 2.0 ES256).
    pub(crate) signing: Option<SigningAlgorithm>,
}

/// The longest `state` kept, in bytes: it is kept with the request until the user decides
/// (in a pushed request, a sealed sign-in form, a session), so it is bounded like everything
/// kept for a caller. Generous for a state that carries the client's own signed data.
pub(crate) const MAX_STATE_BYTES: usize = 2048;

/// Whether `state` is one a request may carry: 1 to [`MAX_STATE_BYTES`] characters of RFC 6749
/// `VSCHAR` (`%x20-7E`, appendix A.5), so that it costs at most twice its length in any JSON
/// it is kept in.
pub(crate) fn is_kept_state(state: &str) -> bool {
    !state.is_empty()
        && state.len() <= MAX_STATE_BYTES
        && state.bytes().all(|b| (0x20..=0x7e).contains(&b))
}

/// How long a JWT-secured authorization response is good for (JARM §2.1 asks for a short
/// `exp`): five minutes, time for a browser to follow the redirect and for the client's
/// clock to be a little behind, and short enough that a response caught later is of no use.
pub(crate) const RESPONSE_JWT_LIFETIME: Duration = Duration::from_secs(300);

/// The `response` parameter of a JWT mode (JARM §2.1): the authorization response's
/// `params` and `state` as claims of a JWT signed by the server's keys, with `iss` the
/// issuer (which also answers RFC 9207 §2), `aud` the client and `exp`
/// [`RESPONSE_JWT_LIFETIME`] from `now`. Every value is a string, as in the redirect it
/// stands for (JARM §4.1.2's `expires_in` too).
pub(crate) async fn response_jwt(
    signer: &dyn IdTokenSigner,
    issuer_id: &str,
    reply_to: ReplyTo<'_>,
    params: &[(&str, &str)],
    now: UnixTime,
) -> Result<String, OAuthError> {
    let state = reply_to.state.map(|state| ("state", state));
    let mut claims: Map<String, Value> = params
        .iter()
        .copied()
        .chain(state)
        .map(|(name, value)| (name.to_owned(), Value::from(value)))
        .collect();
    claims.insert("iss".to_owned(), Value::from(issuer_id));
    claims.insert("aud".to_owned(), Value::from(reply_to.client_id));
    let exp = now.plus(RESPONSE_JWT_LIFETIME).as_secs();
    claims.insert("exp".to_owned(), Value::from(exp));
    // JARM names no `typ`; a plain `JWT`, as userinfo's signed answers carry, is what its
    // relying parties expect. It holds no `sub`, so nothing reads it as an ID token.
    let algorithm = reply_to
        .signing
        .unwrap_or_else(|| signer.default_algorithm());
    let jwt = signer
        .sign(&Value::Object(claims), ID_TOKEN_TYP, algorithm, now)
        .await?;
    Ok(jwt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwt_modes_are_read_when_offered_and_never_put_tokens_in_a_query() {
        use ResponseMode::*;
        let read =
            |mode, response_type, offered| ResponseMode::read(Some(mode), response_type, offered);
        assert_eq!(read("jwt", ResponseType::Code, true), Some(QueryJwt));
        assert_eq!(read("jwt", ResponseType::Token, true), Some(FragmentJwt));
        assert_eq!(read("jwt", ResponseType::IdToken, true), Some(FragmentJwt));
        assert_eq!(read("query.jwt", ResponseType::Code, true), Some(QueryJwt));
        assert_eq!(read("query.jwt", ResponseType::Token, true), None);
        assert_eq!(read("query", ResponseType::IdTokenToken, true), None);
        assert_eq!(
            read("fragment.jwt", ResponseType::Code, true),
            Some(FragmentJwt)
        );
        assert_eq!(
            read("form_post.jwt", ResponseType::Token, true),
            Some(FormPostJwt)
        );
        assert_eq!(read("form_post", ResponseType::Code, false), Some(FormPost));
        for mode in ["jwt", "query.jwt", "fragment.jwt", "form_post.jwt"] {
            assert_eq!(read(mode, ResponseType::Code, false), None, "{mode}");
        }
        assert_eq!(read("JWT", ResponseType::Code, true), None);
        // What a pending authorization keeps reads back as itself.
        for mode in [
            Query,
            Fragment,
            FormPost,
            QueryJwt,
            FragmentJwt,
            FormPostJwt,
        ] {
            assert_eq!(read(mode.as_stored(), ResponseType::Code, true), Some(mode));
            assert!(!mode.carrier().is_jwt());
        }
    }
}
