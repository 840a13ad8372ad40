//! Typed requests: what `endpoint` parses out of bytes and headers, and what `grant` decides
//! on. The shared vocabulary of the two; neither the wire nor the stores appear here.

use std::fmt;

use crate::client::GrantType;
use crate::error::OAuthError;
use crate::scope::Scope;
use crate::secret::{
    AccessToken, AuthorizationCode, ClientSecret, DeviceCode, Password, RefreshToken,
};

/// How a token-endpoint client says who it is (RFC 6749 §2.3).
#[derive(Debug)]
pub(crate) enum ClientAuth<'a> {
    /// HTTP Basic credentials (`client_secret_basic`).
    Basic(Credentials),
    /// `client_id` and `client_secret` in the body (`client_secret_post`, RFC 6749 §2.3.1),
    /// for the clients registered to send them so.
    Post(Credentials),
    /// `client_id` alone in the body: a public client (`none`).
    ClientId(&'a str),
    /// A JWT signed with one of the client's private keys (`private_key_jwt`, RFC 7523 §2.2),
    /// with the client id it claims (its `sub`, unverified).
    Assertion {
        client_id: String,
        assertion: Assertion<'a>,
    },
    /// No credentials at all.
    Anonymous,
}

/// A client assertion as sent (RFC 7521 §4.2 `client_assertion`). A bearer credential until
/// its `jti` is spent: its `Debug` never shows it.
#[allow(
    dead_code,
    reason = "read where assertions are verified (feature private-key-jwt)"
)]
#[derive(Clone, Copy)]
pub(crate) struct Assertion<'a>(pub(crate) &'a str);

impl fmt::Debug for Assertion<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Assertion(<redacted>)")
    }
}

/// A client id and secret, decoded, in one buffer: `id:secret`, split at `colon` (the id may
/// hold a colon of its own once decoded, so the split is recorded, not searched).
pub(crate) struct Credentials {
    text: String,
    colon: usize,
}

impl Credentials {
    /// `text` holds the id, a colon at `colon`, then the secret.
    pub(crate) fn new(text: String, colon: usize) -> Self {
        Self { text, colon }
    }

    /// `client_id` and `client_secret` as a form sent them.
    pub(crate) fn of(client_id: &str, secret: &str) -> Self {
        let mut text = String::with_capacity(client_id.len() + 1 + secret.len());
        text.push_str(client_id);
        text.push(':');
        text.push_str(secret);
        Self::new(text, client_id.len())
    }

    /// The client id; never empty.
    pub(crate) fn client_id(&self) -> &str {
        self.text.get(..self.colon).unwrap_or_default()
    }

    /// The secret in the clear (possibly empty). Never log it.
    pub(crate) fn secret(&self) -> &str {
        self.text.get(self.colon + 1..).unwrap_or_default()
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id())
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// The `sub` of a JWT client assertion, read without checking anything else: which client it
/// claims to be, so its keys can be looked up. `None` unless `assertion` is a compact JWS of
/// at most 4096 bytes whose claims are a JSON object with a non-empty string `sub`.
pub(crate) fn claimed_subject(assertion: &str) -> Option<String> {
    use base64::Engine as _;
    #[derive(serde::Deserialize)]
    struct Subject {
        sub: Option<String>,
    }
    if assertion.len() > 4096 {
        return None;
    }
    let mut parts = assertion.split('.');
    let (Some(_), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let subject: Subject = serde_json::from_slice(&payload).ok()?;
    subject.sub.filter(|sub| !sub.is_empty())
}

/// A token request (RFC 6749 §4.1.3, §4.3.2, §4.4.2, §6), one variant per grant.
#[derive(Debug)]
pub(crate) enum TokenRequest<'a> {
    /// `authorization_code`.
    AuthorizationCode {
        code: AuthorizationCode,
        redirect_uri: &'a str,
        /// Syntax already checked (RFC 7636 §4.1).
        code_verifier: Option<&'a str>,
        /// RFC 8707 `resource`s: the access token's audience, within the code's.
        resources: Vec<&'a str>,
    },
    /// `password`.
    Password {
        username: &'a str,
        password: Password,
        scope: Option<&'a str>,
        resources: Vec<&'a str>,
    },
    /// `refresh_token`.
    RefreshToken {
        refresh_token: RefreshToken,
        scope: Option<&'a str>,
        /// The access token's audience, within the grant's.
        resources: Vec<&'a str>,
    },
    /// `client_credentials`.
    ClientCredentials {
        scope: Option<&'a str>,
        resources: Vec<&'a str>,
    },
    /// `urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1): a trusted issuer's
    /// assertion about a user; its `Debug` never shows it.
    JwtBearer {
        assertion: Assertion<'a>,
        scope: Option<&'a str>,
        resources: Vec<&'a str>,
    },
    /// `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4): a device's poll.
    DeviceCode { device_code: DeviceCode },
    /// Token exchange (RFC 8693 §2.1) for an access token (`requested_token_type` absent or
    /// an access token's); the subject and actor tokens were said to be access tokens.
    TokenExchange {
        /// The token the new one is for, digest computed; its `Debug` shows neither.
        subject_token: AccessToken,
        subject_token_type: TokenType,
        /// For delegation: the token of the party that will act for the subject.
        actor_token: Option<(AccessToken, TokenType)>,
        scope: Option<&'a str>,
        /// RFC 8707 `resource`s and RFC 8693 `audience`s, which may each repeat.
        resources: Vec<&'a str>,
        audiences: Vec<&'a str>,
    },
    /// Token exchange for an Identity Assertion JWT Authorization Grant
    /// (draft-ietf-oauth-identity-assertion-authz-grant, `requested_token_type` of
    /// [`TokenType::IdJag`]): the subject token was said to be an ID token, and no actor token
    /// was sent.
    IdJag {
        subject_token: IdTokenText<'a>,
        scope: Option<&'a str>,
        /// RFC 8707 `resource`s and RFC 8693 `audience`s as sent; the grant takes one of each.
        resources: Vec<&'a str>,
        audiences: Vec<&'a str>,
    },
}

/// An ID token as a client presented it (a `subject_token`): a bearer credential that names a
/// user, so its `Debug` never shows it.
#[derive(Clone, Copy)]
pub(crate) struct IdTokenText<'a>(pub(crate) &'a str);

impl fmt::Debug for IdTokenText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IdTokenText(<redacted>)")
    }
}

/// A token type identifier (RFC 8693 §3) grantor understands: its own access tokens as subject
/// or actor tokens, its own ID tokens as the subject of an ID-JAG request, and what it issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenType {
    /// `urn:ietf:params:oauth:token-type:access_token`: any access token grantor issued.
    AccessToken,
    /// `urn:ietf:params:oauth:token-type:jwt`: one of grantor's JWT access tokens (RFC 9068).
    Jwt,
    /// `urn:ietf:params:oauth:token-type:id_token`: an ID token grantor issued (OIDC Core §2).
    IdToken,
    /// `urn:ietf:params:oauth:token-type:id-jag`: an Identity Assertion JWT Authorization
    /// Grant, which grantor issues and never takes.
    IdJag,
}

impl TokenType {
    /// The identifier of an access token (RFC 8693 §3), also the `issued_token_type` of
    /// every exchange for an access token.
    pub(crate) const ACCESS_TOKEN: &'static str = "urn:ietf:params:oauth:token-type:access_token";
    /// The identifier of a JWT (RFC 8693 §3).
    pub(crate) const JWT: &'static str = "urn:ietf:params:oauth:token-type:jwt";
    /// The identifier of an ID token (RFC 8693 §3).
    pub(crate) const ID_TOKEN: &'static str = "urn:ietf:params:oauth:token-type:id_token";
    /// The identifier of an ID-JAG, also the `issued_token_type` of the answer.
    pub(crate) const ID_JAG: &'static str = crate::id_jag::ID_JAG_TOKEN_TYPE;

    /// The type `identifier` names, if grantor knows it.
    pub(crate) fn parse(identifier: &str) -> Option<Self> {
        match identifier {
            Self::ACCESS_TOKEN => Some(Self::AccessToken),
            Self::JWT => Some(Self::Jwt),
            Self::ID_TOKEN => Some(Self::IdToken),
            Self::ID_JAG => Some(Self::IdJag),
            _ => None,
        }
    }

    /// Whether it names one of grantor's access tokens, which an exchange for an access token
    /// takes as subject or actor token.
    pub(crate) fn is_access_token(self) -> bool {
        matches!(self, Self::AccessToken | Self::Jwt)
    }
}

impl TokenRequest<'_> {
    /// The grant type the request is for.
    pub(crate) fn grant_type(&self) -> GrantType {
        match self {
            Self::AuthorizationCode { .. } => GrantType::AuthorizationCode,
            Self::Password { .. } => GrantType::Password,
            Self::RefreshToken { .. } => GrantType::RefreshToken,
            Self::ClientCredentials { .. } => GrantType::ClientCredentials,
            Self::DeviceCode { .. } => GrantType::DeviceCode,
            Self::TokenExchange { .. } | Self::IdJag { .. } => GrantType::TokenExchange,
            Self::JwtBearer { .. } => GrantType::JwtBearer,
        }
    }
}

/// A token request that could not be read: the error, and the grant type when it was known
/// (the client's agreement to that grant is checked before the error is answered, so the
/// answer does not depend on which parameter is missing).
#[derive(Debug)]
pub(crate) struct Unreadable {
    pub(crate) grant_type: Option<GrantType>,
    pub(crate) error: OAuthError,
}

impl Unreadable {
    /// The error to answer (parse errors carry no store failure, so it is rebuilt whole).
    pub(crate) fn error(&self) -> OAuthError {
        let error = OAuthError::new(self.error.code(), self.error.description().to_owned());
        error.with_status(self.error.status())
    }
}

/// A revocation or introspection request (RFC 7009 §2.1, RFC 7662 §2.1).
#[derive(Debug)]
pub(crate) struct TokenQuery<'a> {
    /// The presented token, digest computed: looked up as an access token and, with the same
    /// digest, as a refresh token.
    pub(crate) token: AccessToken,
    /// `token_type_hint`: only where to look first.
    pub(crate) hint: Option<&'a str>,
}

/// What the authorization endpoint was asked (RFC 6749 §4.1.1, §4.2.1, RFC 7636 §4.3). Values
/// are as sent; which are valid depends on the client, so `grant::authorize` checks them.
#[derive(Debug, Default, Clone)]
pub(crate) struct AuthorizationRequest<'a> {
    pub(crate) client_id: Option<&'a str>,
    pub(crate) redirect_uri: Option<&'a str>,
    pub(crate) response_type: Option<&'a str>,
    /// How the answer goes back (OAuth 2.0 Multiple Response Types §2.1, Form Post Response
    /// Mode): `query`, `fragment` or `form_post`.
    pub(crate) response_mode: Option<&'a str>,
    pub(crate) scope: Option<&'a str>,
    pub(crate) state: Option<&'a str>,
    pub(crate) code_challenge: Option<&'a str>,
    pub(crate) code_challenge_method: Option<&'a str>,
    /// RFC 8707 `resource`s, which may repeat.
    pub(crate) resources: Vec<&'a str>,
    /// RFC 9126 §4: the reference to a pushed request, which then stands for all the others.
    pub(crate) request_uri: Option<&'a str>,
    /// RFC 9449 §10: the thumbprint of the DPoP key the code is to be bound to.
    pub(crate) dpop_jkt: Option<&'a str>,
    /// OpenID Connect's parameters (Core §3.1.2.1), read when the scope holds `openid`.
    pub(crate) openid: crate::oidc::OpenIdParameters<'a>,
    /// `acr_values` (OIDC Core §3.1.2.1, RFC 9470 §4): read for every request.
    pub(crate) acr_values: Option<&'a str>,
    /// The `claims` parameter (OIDC Core §5.5), of which the sign-in reads `acr`.
    pub(crate) claims: Option<&'a str>,
    /// The first parameter sent more than once (RFC 6749 §3.1), if any.
    pub(crate) repeated: Option<&'static str>,
    /// Likewise, OpenID Connect's parameters aside.
    pub(crate) repeated_oauth: Option<&'static str>,
}

/// How a self-registered client authenticates at the token endpoint (RFC 7591 §2
/// `token_endpoint_auth_method`): those grantor supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthMethod {
    /// `client_secret_basic`: a generated secret, sent with HTTP Basic (the RFC's default).
    ClientSecretBasic,
    /// `client_secret_post`: a generated secret, sent in the token request's body.
    ClientSecretPost,
    /// `none`: a public client, which must use PKCE.
    None,
    /// `private_key_jwt` (RFC 7523 §2.2): a JWT signed with one of the client's keys.
    PrivateKeyJwt,
    /// `tls_client_auth` (RFC 8705 §2.1): a TLS client certificate from a CA the server
    /// trusts, naming the registered subject.
    TlsClientAuth,
    /// `self_signed_tls_client_auth` (RFC 8705 §2.2): a TLS client certificate from the
    /// client's `jwks`.
    SelfSignedTlsClientAuth,
}

impl AuthMethod {
    /// The name in client metadata.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::None => "none",
            Self::PrivateKeyJwt => "private_key_jwt",
            Self::TlsClientAuth => "tls_client_auth",
            Self::SelfSignedTlsClientAuth => "self_signed_tls_client_auth",
        }
    }

    /// The method named `name` in client metadata, if grantor supports it.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        [
            Self::ClientSecretBasic,
            Self::ClientSecretPost,
            Self::None,
            Self::PrivateKeyJwt,
            Self::TlsClientAuth,
            Self::SelfSignedTlsClientAuth,
        ]
        .into_iter()
        .find(|method| method.as_str() == name)
    }

    /// How `client` authenticates.
    pub(crate) fn of(client: &crate::client::Client) -> Self {
        if client.tls_subject().is_some() {
            Self::TlsClientAuth
        } else if client.uses_self_signed_certificate() {
            Self::SelfSignedTlsClientAuth
        } else if client.keys().is_some() {
            Self::PrivateKeyJwt
        } else if client.is_public() {
            Self::None
        } else if client.sends_secret_in_body() {
            Self::ClientSecretPost
        } else {
            Self::ClientSecretBasic
        }
    }
}

/// A client metadata document (RFC 7591 §2), each member grantor understands read into its
/// type; whether the policy allows it is `grant::registration`'s decision. `None` is a member
/// absent (or `null`); unknown members are ignored (RFC 7591 §2).
#[derive(Debug, Default)]
pub(crate) struct ClientMetadata {
    pub(crate) redirect_uris: Option<Vec<String>>,
    pub(crate) grant_types: Option<Vec<GrantType>>,
    /// `response_types` as the grant each implies (RFC 7591 §2.1): `code` the authorization
    /// code grant, `token` the implicit grant.
    pub(crate) response_types: Option<Vec<GrantType>>,
    pub(crate) auth_method: Option<AuthMethod>,
    pub(crate) scope: Option<Scope>,
    pub(crate) client_name: Option<String>,
    /// Sent back when the client replaces its registration (RFC 7592 §2.2).
    pub(crate) client_id: Option<String>,
    /// Likewise; it must be the client's current secret.
    pub(crate) client_secret: Option<ClientSecret>,
    /// RFC 9449 §5.2 `dpop_bound_access_tokens`: the client always sends DPoP proofs.
    pub(crate) dpop_bound: bool,
    /// RFC 9126 §6 `require_pushed_authorization_requests`: the client always pushes.
    pub(crate) par_required: bool,
    /// `jwks` (as JSON text) or `jwks_uri` (RFC 7591 §2), read into their type.
    pub(crate) keys: Option<crate::client::ClientKeys>,
    /// The one `tls_client_auth_*` member sent (RFC 8705 §2.1.2), read into its type.
    pub(crate) tls_subject: Option<crate::client::TlsClientAuth>,
    /// `rotate_client_secret: true` in an update (RFC 7592 §2.2): grantor's extension asking
    /// for a new secret in the answer.
    pub(crate) rotate_secret: bool,
    /// OIDC Registration §2 `id_token_signed_response_alg`.
    pub(crate) id_token_alg: Option<crate::signing::SigningAlgorithm>,
    /// OIDC Registration §2 `userinfo_signed_response_alg`.
    pub(crate) userinfo_alg: Option<crate::signing::SigningAlgorithm>,
    /// JARM §3 `authorization_signed_response_alg`.
    pub(crate) authorization_alg: Option<crate::signing::SigningAlgorithm>,
    /// RFC 9701 §6 `introspection_signed_response_alg`.
    pub(crate) introspection_alg: Option<crate::signing::SigningAlgorithm>,
    /// RFC 9101 §10.2 `request_object_signing_alg`.
    pub(crate) request_object_alg: Option<crate::signing::ClientSigningAlgorithm>,
    /// RP-Initiated Logout 1.0 §3.1 `post_logout_redirect_uris`.
    pub(crate) post_logout_redirect_uris: Vec<String>,
    /// Back-Channel Logout 1.0 §2.2 `backchannel_logout_uri`.
    pub(crate) backchannel_logout_uri: Option<String>,
    /// OIDC Registration §2 `application_type`, when the client sent one.
    pub(crate) application_type: Option<ApplicationType>,
    /// OIDC Registration §2 `default_max_age`, in seconds.
    pub(crate) default_max_age: Option<u64>,
    /// OIDC Registration §2 `require_auth_time`.
    pub(crate) require_auth_time: bool,
    /// OIDC Registration §2 `subject_type: pairwise` (else `public`, the default).
    pub(crate) pairwise: bool,
    /// OIDC Registration §2 `sector_identifier_uri`, as sent.
    pub(crate) sector_identifier_uri: Option<String>,
}

/// OIDC Registration §2 `application_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApplicationType {
    /// A web application (the default when none is named).
    Web,
    /// An application on the user's device.
    Native,
}
