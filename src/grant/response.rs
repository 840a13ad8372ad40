//! How an authorization response goes back (RFC 6749 §4.1.2, §4.2.2; OAuth 2.0 Multiple
//! Response Types; Form Post Response Mode): what the client asked for, how it reaches the
//! redirect URI, and the `state` it carries.

use crate::client::GrantType;

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
/// itself (OAuth 2.0 Form Post Response Mode), which keeps the answer out of URLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResponseMode {
    Query,
    Fragment,
    FormPost,
}

impl ResponseMode {
    /// The mode `requested` for `response_type`: the response type's own without one; `None`
    /// for an unknown mode, or `query` for a response carrying tokens (Multiple Response Types
    /// §2.1: never in a query, where tokens leak into logs and `Referer`).
    pub(crate) fn read(requested: Option<&str>, response_type: ResponseType) -> Option<Self> {
        let default = match response_type.in_fragment() {
            true => Self::Fragment,
            false => Self::Query,
        };
        match requested {
            None => Some(default),
            Some("query") if default == Self::Query => Some(Self::Query),
            Some("fragment") => Some(Self::Fragment),
            Some("form_post") => Some(Self::FormPost),
            Some(_) => None,
        }
    }

    /// As a pending authorization keeps it (`None` for the response type's own).
    pub(crate) fn as_stored(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::Fragment => "fragment",
            Self::FormPost => "form_post",
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
