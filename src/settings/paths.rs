//! Where grantor's endpoints live under the issuer.

/// Where the endpoints live, as paths under the issuer. The defaults are the paths of the
/// platform's token service and its companions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointPaths {
    /// The authorization endpoint (default `/api/oauth/authorize`).
    pub authorization: String,
    /// The token endpoint (default `/api/oauth/token`).
    pub token: String,
    /// The revocation endpoint (default `/api/oauth/revoke`).
    pub revocation: String,
    /// The introspection endpoint (default `/api/oauth/introspect`).
    pub introspection: String,
    /// The JWKS document of the access-token signing keys, `jwks_uri` (default
    /// `/.well-known/jwks.json`; in the metadata with JWT access tokens only).
    pub jwks: String,
    /// The client registration endpoint (RFC 7591 §3, default `/api/oauth/register`); each
    /// self-registered client's configuration endpoint (RFC 7592) is this path, `/`, and its
    /// client id. Served only with a [`RegistrationPolicy`](crate::settings::RegistrationPolicy).
    pub registration: String,
    /// The pushed authorization request endpoint (RFC 9126 §2, default `/api/oauth/par`).
    /// Served only with [`PushedRequests`](crate::settings::PushedRequests).
    pub pushed_requests: String,
    /// The device authorization endpoint (RFC 8628 §3.1, default
    /// `/api/oauth/device_authorization`). Served only with
    /// [`DeviceFlow`](crate::settings::DeviceFlow).
    pub device_authorization: String,
    /// The UserInfo endpoint (OpenID Connect Core §5.3, default `/api/oauth/userinfo`). Served
    /// only with OpenID Connect.
    pub userinfo: String,
    /// The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0, default
    /// `/api/oauth/logout`). Served only with OpenID Connect.
    pub end_session: String,
}

impl Default for EndpointPaths {
    fn default() -> Self {
        Self {
            authorization: "/api/oauth/authorize".to_owned(),
            token: "/api/oauth/token".to_owned(),
            revocation: "/api/oauth/revoke".to_owned(),
            introspection: "/api/oauth/introspect".to_owned(),
            jwks: "/.well-known/jwks.json".to_owned(),
            registration: "/api/oauth/register".to_owned(),
            pushed_requests: "/api/oauth/par".to_owned(),
            device_authorization: "/api/oauth/device_authorization".to_owned(),
            userinfo: "/api/oauth/userinfo".to_owned(),
            end_session: "/api/oauth/logout".to_owned(),
        }
    }
}
