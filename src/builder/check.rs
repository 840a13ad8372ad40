//! The checks `build` runs on a configuration, and the error it answers.

#[cfg(doc)]
use crate::settings::{MAX_REFRESH_GRACE, Profile};

pub(super) fn check_issuer(issuer: &str, insecure_http: bool) -> Result<(), ConfigError> {
    let url = url::Url::parse(issuer).map_err(|_| ConfigError::Issuer)?;
    let ok = matches!(url.scheme(), "http" | "https")
        && url.host().is_some()
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none();
    if !ok {
        return Err(ConfigError::Issuer);
    }
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if url.scheme() == "http" && !loopback && !insecure_http {
        return Err(ConfigError::InsecureIssuer);
    }
    Ok(())
}

/// An absolute path: it joins the issuer into an absolute URL.
pub(super) fn check_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.starts_with("//")
        && path
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'?' | b'#' | b'"' | b'\\'))
}

/// A configuration the builder refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A required setting is missing.
    #[error("the {0} setting is required")]
    Missing(&'static str),
    /// Self-registration ([`registration`](crate::AuthorizationServerBuilder::registration))
    /// needs somewhere to keep the clients it registers, over the clients the server reads: the
    /// clients were given apart from [`store`](crate::AuthorizationServerBuilder::store) (whose
    /// registry keeps its own clients, not these), and no
    /// [`client_registry`](crate::AuthorizationServerBuilder::client_registry) was given.
    #[error(
        "self-registration needs the client registry of the server's clients: give \
         .client_registry(...) over the store given to .clients(...)"
    )]
    NoClientRegistry,
    /// The registration policy expires idle clients
    /// ([`idle_lifetime`](crate::registration::RegistrationPolicy::idle_lifetime), 30 days by
    /// default) and the client registry is the host's own, with no
    /// [`client_activity`](crate::AuthorizationServerBuilder::client_activity) to record uses
    /// in.
    #[error(
        "the registration policy deletes idle clients, and the server has nowhere to record \
         their uses: give .client_activity(...) beside .client_registry(...), or \
         RegistrationPolicy::idle_lifetime(None)"
    )]
    NoClientActivity,
    /// More issuers were trusted (`AuthorizationServerBuilder::trust_issuer`, feature
    /// `private-key-jwt`)
    /// than the server takes (16: their one-time values together must fit a store's bound), or
    /// one was trusted twice.
    #[error("at most 16 assertion issuers are trusted, each once")]
    TrustedIssuers,
    /// A class [`AcrLevels`](crate::settings::AcrLevels) says the password or the second
    /// factor reaches is not one of its list.
    #[error(
        "the acr levels name a class the password or the second factor reaches that is not in their list"
    )]
    AcrLevels,
    /// A [`second_factor`](crate::AuthorizationServerBuilder::second_factor) was given, but
    /// the [`AcrLevels`](crate::settings::AcrLevels) name no class it reaches: no request
    /// could ever ask for it.
    #[error(
        "a second factor was given, but the acr levels name no class it reaches, so it would \
         never be asked for: give AcrLevels::second_factor(class)"
    )]
    SecondFactorUnreachable,
    /// A seam every node must share (named) was not given, and the builder was not told
    /// [`single_node`](crate::AuthorizationServerBuilder::single_node): it would have lived in
    /// this process's memory, unseen by any other node.
    #[error(
        "the {0} seam is not set: give one every node shares (or .store(...)), or say .single_node()"
    )]
    SharedState(&'static str),
    /// The key seam keeps what it is handed durably (a SQL store, a host's database), and the
    /// builder was told neither how key material rests there: sealed under a key kept outside
    /// it ([`encrypt_keys_at_rest`](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)),
    /// or in the clear, readable by whoever reads the database
    /// ([`keys_in_clear`](crate::AuthorizationServerBuilder::keys_in_clear)). Whoever reads a
    /// signing key signs ID tokens and access tokens the server accepts.
    #[error(
        "the key store is durable, and the keys that sign tokens would rest there readable by \
         whoever reads it: give .encrypt_keys_at_rest(KeyEncryptionKey::from_base64(..)?) with a \
         key kept outside the database, or say .keys_in_clear()"
    )]
    KeysAtRest,
    /// Both [`encrypt_keys_at_rest`](crate::AuthorizationServerBuilder::encrypt_keys_at_rest)
    /// and [`keys_in_clear`](crate::AuthorizationServerBuilder::keys_in_clear) were given.
    #[error(".encrypt_keys_at_rest(..) and .keys_in_clear() contradict each other: give one")]
    KeysAtRestTwice,
    /// A [PKCE policy](crate::AuthorizationServerBuilder::pkce_policy) other than
    /// [`PkcePolicy::AllClients`](crate::settings::PkcePolicy::AllClients) under [`Profile::OAuth21`],
    /// which requires PKCE of every client.
    #[error("OAuth 2.1 requires PKCE of every client; no other PKCE policy can be set")]
    PkceUnderOAuth21,
    /// A [code lifetime](crate::AuthorizationServerBuilder::code_lifetime) over 60 seconds
    /// under a FAPI 2.0 [profile](crate::AuthorizationServerBuilder::profile).
    #[error("FAPI 2.0 allows codes of at most 60 seconds")]
    Fapi2CodeLifetime,
    /// A FAPI 2.0 [profile](crate::AuthorizationServerBuilder::profile) without something it
    /// needs (named).
    #[error("FAPI 2.0 needs {0}")]
    Fapi2Unsupported(&'static str),
    /// `plain` PKCE was allowed under [`Profile::OAuth21`], which allows only `S256`.
    #[error("OAuth 2.1 allows only the S256 PKCE method; plain cannot be allowed")]
    PlainPkceInOAuth21,
    /// The default audience or another resource is not an absolute URI without a fragment in
    /// printable ASCII (RFC 8707 §2).
    #[error(
        "the default audience and resources must be absolute URIs in printable ASCII without a fragment"
    )]
    Audience,
    /// The refresh retry window is longer than [`MAX_REFRESH_GRACE`].
    #[error("the refresh grace window must be at most 10 minutes")]
    RefreshGrace,
    /// The issuer is not an http(s) URL without query, fragment or credentials.
    #[error("the issuer must be an http(s) URL without query, fragment or credentials")]
    Issuer,
    /// The issuer is `http://` on a host that is not loopback, and the builder was not told
    /// [`insecure_http_issuer`](crate::AuthorizationServerBuilder::insecure_http_issuer).
    #[error(
        "an http:// issuer is accepted only on a loopback host (127.0.0.1, [::1], localhost) unless .insecure_http_issuer() says it is meant; use https"
    )]
    InsecureIssuer,
    /// The realm holds a quote, backslash or non-printable character.
    #[error("the realm must be printable ASCII without '\"' or '\\'")]
    Realm,
    /// The code lifetime is zero or over ten minutes.
    #[error("the code lifetime must be between 1 second and 10 minutes")]
    CodeLifetime,
    /// An endpoint path is not an absolute path without query or fragment.
    #[error("endpoint paths must start with '/' and carry no query or fragment")]
    EndpointPath,
    /// JWT signing keys rotate more often than access tokens live, so a token could outlive
    /// every published key that verifies it.
    #[error("the signing keys' rotation period must be at least the access-token lifetime")]
    KeyRotationPeriod,
    /// The ID-token lifetime is zero or longer than the ID-token keys' rotation period
    /// ([`OpenIdConnect`](crate::settings::OpenIdConnect)): a token must stay verifiable while
    /// it lives.
    #[error("the ID-token lifetime must be positive and at most the key rotation period")]
    IdTokenLifetime,
    /// [`id_jag_issuance`](crate::AuthorizationServerBuilder::id_jag_issuance) without
    /// `openid_connect` (feature `oidc`): an ID-JAG is
    /// issued for an ID token and signed by the ID-token keys.
    #[error("ID-JAG issuance needs OpenID Connect: give .openid_connect(...) beside it")]
    IdJagWithoutOpenId,
    /// A lifetime is under one second.
    #[error("lifetimes must be at least one second")]
    ZeroLifetime,
    /// The parameter limit is zero or over the body limit.
    #[error("the parameter limit must be positive and no larger than the body limit")]
    Limits,
    /// The pushed request settings are out of range: a lifetime of zero, in fractions of a
    /// second or over [`PushedRequests::MAX_LIFETIME`](crate::settings::PushedRequests::MAX_LIFETIME), a per-client limit
    /// of zero, or a total of zero or over
    /// [`PushedRequests::MAX_TOTAL`](crate::settings::PushedRequests::MAX_TOTAL).
    #[error(
        "pushed request settings: a lifetime of whole seconds up to 10 minutes, a per-client limit above zero, and a total from 1 to 25000"
    )]
    PushedRequests,
    /// The device flow settings are out of range (see [`DeviceFlow`](crate::settings::DeviceFlow)).
    #[error("device flow settings: {0}")]
    DeviceFlow(&'static str),
    /// The mutual TLS settings are refused: a client CA that is not a PEM certificate a
    /// trust anchor can be made of, or an endpoint alias base URL that is not an absolute
    /// `https` URL without a query or fragment (see `MutualTls`, feature `mtls`).
    #[error("mutual TLS settings: {0}")]
    MutualTls(&'static str),
}
