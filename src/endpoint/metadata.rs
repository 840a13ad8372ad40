//! Authorization server metadata (RFC 8414 §2), built from the configuration.

use http::Response;
use serde::Serialize;

use super::render;
use crate::client::GrantType;
use crate::settings::{OpenIdConnect, Profile, Settings};
use crate::signing::SigningAlgorithm;
use crate::store::supported_claims;

#[derive(Serialize)]
struct Metadata<'a> {
    issuer: &'a str,
    authorization_endpoint: String,
    token_endpoint: String,
    revocation_endpoint: String,
    introspection_endpoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    jwks_uri: Option<String>,
    /// RFC 8414 §2, RFC 7591 §3: only when registration is served.
    #[serde(skip_serializing_if = "Option::is_none")]
    registration_endpoint: Option<String>,
    /// RFC 9126 §5: only when pushed requests are taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pushed_authorization_request_endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    require_pushed_authorization_requests: Option<bool>,
    /// RFC 8628 §4: only when the device grant is served.
    #[serde(skip_serializing_if = "Option::is_none")]
    device_authorization_endpoint: Option<String>,
    response_types_supported: &'static [&'static str],
    response_modes_supported: &'a [&'a str],
    grant_types_supported: Vec<&'static str>,
    code_challenge_methods_supported: Vec<&'static str>,
    token_endpoint_auth_methods_supported: Vec<&'static str>,
    revocation_endpoint_auth_methods_supported: Vec<&'static str>,
    introspection_endpoint_auth_methods_supported: Vec<&'static str>,
    /// RFC 8414 §2: the algorithms of `private_key_jwt` assertions, with that feature.
    #[serde(skip_serializing_if = "Option::is_none")]
    token_endpoint_auth_signing_alg_values_supported: Option<&'static [&'static str]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    revocation_endpoint_auth_signing_alg_values_supported: Option<&'static [&'static str]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    introspection_endpoint_auth_signing_alg_values_supported: Option<&'static [&'static str]>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    scopes_supported: &'a [String],
    authorization_response_iss_parameter_supported: bool,
    /// JARM §3: the algorithms a client may register as `authorization_signed_response_alg`,
    /// when the server has keys to sign with.
    #[serde(skip_serializing_if = "Option::is_none")]
    authorization_signing_alg_values_supported: Option<Vec<&'static str>>,
    /// RFC 9701 §7: likewise for `introspection_signed_response_alg`.
    #[serde(skip_serializing_if = "Option::is_none")]
    introspection_signing_alg_values_supported: Option<Vec<&'static str>>,
    /// RFC 9449 §5.1: only when DPoP proofs are accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    dpop_signing_alg_values_supported: Option<&'static [&'static str]>,
    /// RFC 8705 §3.3: only when tokens are bound to client certificates.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    tls_client_certificate_bound_access_tokens: bool,
    /// RFC 9728 §4: the resources tokens may be for, as registered.
    protected_resources: Vec<&'a str>,
    /// OpenID Connect Discovery 1.0 §3, RFC 9470 §5: the authentication context classes of
    /// [`AcrLevels`](crate::settings::AcrLevels), when it names any.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    acr_values_supported: &'a [String],
    /// RFC 9101 §10.1 (OIDC Discovery §3 too): request objects are taken with feature
    /// `private-key-jwt`; `request_uri` names pushed requests only, so it is not supported.
    request_parameter_supported: bool,
    request_uri_parameter_supported: bool,
    /// FAPI 2.0 Message Signing: every authorization request is a signed request object
    /// (RFC 9101 §10.5).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    require_signed_request_object: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_object_signing_alg_values_supported: Option<&'static [&'static str]>,
    /// draft-ietf-oauth-client-id-metadata-document §6: only when documents are taken.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    client_id_metadata_document_supported: bool,
    /// draft-ietf-oauth-identity-assertion-authz-grant, "IdP Authorization Server Metadata"
    /// (a member of draft-ietf-oauth-identity-chaining): only when ID-JAGs are issued.
    #[serde(skip_serializing_if = "Option::is_none")]
    identity_chaining_requested_token_types_supported: Option<&'static [&'static str]>,
    /// The assertion grant profiles the JWT-bearer grant takes (draft-ietf-oauth-identity-
    /// assertion-authz-grant): only when issuers are trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    authorization_grant_profiles_supported: Option<&'static [&'static str]>,
    /// RFC 8705 §5: where the endpoints that take client certificates are also served, when
    /// the host named an alias base URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    mtls_endpoint_aliases: Option<EndpointAliases>,
    /// OpenID Connect Discovery 1.0 §3: only when OpenID Connect is served.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    openid: Option<OpenIdMetadata>,
}

/// RFC 8705 §5 `mtls_endpoint_aliases`: each endpoint a client authenticates at (or presents
/// its certificate to) that the server serves, under the alias base URL.
#[derive(Serialize)]
struct EndpointAliases {
    token_endpoint: String,
    revocation_endpoint: String,
    introspection_endpoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pushed_authorization_request_endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device_authorization_endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    userinfo_endpoint: Option<String>,
}

fn endpoint_aliases(config: &Settings) -> Option<EndpointAliases> {
    let base = config.mutual_tls.as_ref()?.aliases.as_deref()?;
    let paths = &config.endpoints;
    let alias = |path: &str| format!("{base}{path}");
    Some(EndpointAliases {
        token_endpoint: alias(&paths.token),
        revocation_endpoint: alias(&paths.revocation),
        introspection_endpoint: alias(&paths.introspection),
        pushed_authorization_request_endpoint: (config.pushed_requests.as_ref())
            .map(|_| alias(&paths.pushed_requests)),
        device_authorization_endpoint: (config.device.as_ref())
            .map(|_| alias(&paths.device_authorization)),
        userinfo_endpoint: (config.openid.as_ref()).map(|_| alias(&paths.userinfo)),
    })
}

/// The members OpenID Connect Discovery 1.0 §3 adds: its REQUIRED ones and the RECOMMENDED
/// and OPTIONAL ones grantor serves.
#[derive(Serialize)]
struct OpenIdMetadata {
    userinfo_endpoint: String,
    /// RP-Initiated Logout 1.0 §2.1.
    end_session_endpoint: String,
    /// Back-Channel Logout 1.0 §2.1: with an outbound HTTP seam to send logout tokens.
    backchannel_logout_supported: bool,
    backchannel_logout_session_supported: bool,
    subject_types_supported: &'static [&'static str],
    id_token_signing_alg_values_supported: Vec<&'static str>,
    /// Discovery §3: the algorithms a client may register for signed userinfo answers.
    userinfo_signing_alg_values_supported: Vec<&'static str>,
    claims_supported: Vec<String>,
    claim_types_supported: &'static [&'static str],
    claims_parameter_supported: bool,
}

/// The client authentication methods of the token and revocation endpoints, of the
/// introspection endpoint, and the assertion algorithms when `private_key_jwt` is one.
type AuthMethods = (
    Vec<&'static str>,
    Vec<&'static str>,
    Option<&'static [&'static str]>,
);

fn auth_methods(config: &Settings) -> AuthMethods {
    // FAPI 2.0 Security Profile §5.3.2.1: no shared secrets, no public clients.
    let mut authenticated = if config.profile.is_fapi2() {
        vec![]
    } else {
        vec!["client_secret_basic", "client_secret_post"]
    };
    if config.client_assertion_algs.is_some() {
        authenticated.push("private_key_jwt");
    }
    // RFC 8705 §2: certificates where the server takes them, from a CA only where it trusts one.
    if let Some(offer) = &config.mutual_tls {
        if offer.tls_client_auth {
            authenticated.push("tls_client_auth");
        }
        authenticated.push("self_signed_tls_client_auth");
    }
    let mut any = authenticated.clone();
    if !config.profile.is_fapi2() {
        any.push("none");
    }
    (any, authenticated, config.client_assertion_algs)
}

/// `claims_supported` (Discovery §3): `sub`, the standard claims of OIDC Core §5.4, those the
/// host maps to scopes of its own, and those grantor says of the sign-in in ID tokens.
fn claims_supported(openid: &OpenIdConnect) -> Vec<String> {
    let mut claims: Vec<String> = supported_claims().map(str::to_owned).collect();
    for name in openid.scope_claims.iter().flat_map(|(_, names)| names) {
        if !claims.contains(name) {
            claims.push(name.clone());
        }
    }
    claims.extend(["auth_time", "acr", "amr"].map(str::to_owned));
    claims
}

/// `scopes_supported`: with OpenID Connect `openid` first (Discovery §3: it MUST hold it), then
/// the host's list. The claim scopes of OIDC Core §5.4 (`profile`, `email`, `address`,
/// `phone`) are listed when the host lists them, as only then may a client be granted them: a
/// scope listed here that no client can get is one a relying party asks for and is refused.
fn scopes_supported(config: &Settings) -> Vec<String> {
    let mut scopes: Vec<String> = Vec::new();
    if config.openid.is_some() {
        scopes.push("openid".to_owned());
    }
    for scope in &config.scopes_supported {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    scopes
}

/// The metadata document as `application/json`, cacheable for an hour: the same document for
/// RFC 8414 and, with OpenID Connect, for OpenID Connect Discovery 1.0 §4.
pub(crate) fn document(config: &Settings) -> Response<String> {
    let url = |path: &str| config.absolute_url(path);
    let paths = &config.endpoints;
    let mut methods = vec!["S256"];
    if config.pkce.allows_plain() {
        methods.push("plain");
    }
    // What is really accepted: HTTP Basic for confidential clients (the secret in the body for
    // those registered for `client_secret_post`), where the server takes them (feature
    // `private-key-jwt`) signed assertions (RFC 7523 §2.2), `client_id` alone (`none`) for
    // public ones. Introspection needs a client that authenticates (RFC 7662 §2.1), so not
    // `none`.
    let (auth_methods, introspection_methods, assertion_algs) = auth_methods(config);
    let oauth21 = config.profile.is_oauth21();
    let (response_types, grant_types): (&[_], &[_]) = if oauth21 {
        (
            &["code"],
            &["authorization_code", "refresh_token", "client_credentials"],
        )
    } else {
        (
            &["code", "token"],
            &[
                "authorization_code",
                "implicit",
                "password",
                "refresh_token",
                "client_credentials",
            ],
        )
    };
    // The server signs with the keys OpenID Connect brings: JWT-secured authorization
    // responses (JARM) and introspection answers (RFC 9701) are offered with them.
    let signs = config.openid.is_some();
    let response_modes: &[&str] = match signs {
        true => &[
            "query",
            "fragment",
            "form_post",
            "jwt",
            "query.jwt",
            "fragment.jwt",
            "form_post.jwt",
        ],
        false => &["query", "fragment", "form_post"],
    };
    let signing_algs =
        || signs.then(|| SigningAlgorithm::ALL.map(SigningAlgorithm::as_str).to_vec());
    let openid = config.openid.as_ref().map(|openid| OpenIdMetadata {
        userinfo_endpoint: url(&paths.userinfo),
        end_session_endpoint: url(&paths.end_session),
        backchannel_logout_supported: config.backchannel_logout,
        backchannel_logout_session_supported: config.backchannel_logout,
        // OIDC Core §8.1: pairwise only under a secret every node shares.
        subject_types_supported: if openid.offers_pairwise() {
            &["public", "pairwise"]
        } else {
            &["public"]
        },
        id_token_signing_alg_values_supported: SigningAlgorithm::ALL
            .iter()
            .map(|alg| alg.as_str())
            .collect(),
        userinfo_signing_alg_values_supported: SigningAlgorithm::ALL
            .iter()
            .map(|alg| alg.as_str())
            .collect(),
        claims_supported: claims_supported(openid),
        claim_types_supported: &["normal"],
        claims_parameter_supported: true,
    });
    let response_types: &[&str] = match (config.openid.is_some(), oauth21) {
        (true, false) => &["code", "token", "id_token", "id_token token"],
        _ => response_types,
    };
    let scopes = scopes_supported(config);
    let mut grant_types = grant_types.to_vec();
    if config.device.is_some() {
        grant_types.push(GrantType::DeviceCode.as_str());
    }
    if config.token_exchange || config.id_jag_issuance {
        grant_types.push(GrantType::TokenExchange.as_str());
    }
    if config.jwt_bearer {
        grant_types.push(GrantType::JwtBearer.as_str());
    }
    let metadata = Metadata {
        issuer: &config.issuer,
        authorization_endpoint: url(&paths.authorization),
        token_endpoint: url(&paths.token),
        revocation_endpoint: url(&paths.revocation),
        introspection_endpoint: url(&paths.introspection),
        jwks_uri: (config.jwt_access_tokens || config.openid.is_some()).then(|| url(&paths.jwks)),
        registration_endpoint: config
            .registration
            .as_ref()
            .map(|_| url(&paths.registration)),
        pushed_authorization_request_endpoint: config
            .pushed_requests
            .as_ref()
            .map(|_| url(&paths.pushed_requests)),
        require_pushed_authorization_requests: config
            .pushed_requests
            .as_ref()
            .map(|p| p.is_required()),
        device_authorization_endpoint: config
            .device
            .as_ref()
            .map(|_| url(&paths.device_authorization)),
        response_types_supported: response_types,
        response_modes_supported: response_modes,
        grant_types_supported: grant_types,
        code_challenge_methods_supported: methods,
        token_endpoint_auth_methods_supported: auth_methods.clone(),
        revocation_endpoint_auth_methods_supported: auth_methods,
        introspection_endpoint_auth_methods_supported: introspection_methods,
        token_endpoint_auth_signing_alg_values_supported: assertion_algs,
        revocation_endpoint_auth_signing_alg_values_supported: assertion_algs,
        introspection_endpoint_auth_signing_alg_values_supported: assertion_algs,
        scopes_supported: &scopes,
        authorization_response_iss_parameter_supported: true,
        authorization_signing_alg_values_supported: signing_algs(),
        introspection_signing_alg_values_supported: signing_algs(),
        dpop_signing_alg_values_supported: config.dpop,
        tls_client_certificate_bound_access_tokens: config.certificate_bound_tokens,
        protected_resources: config
            .resources
            .known
            .iter()
            .map(|known| known.registered.as_str())
            .collect(),
        acr_values_supported: config.acr.classes(),
        request_parameter_supported: config.request_object_algs.is_some(),
        request_uri_parameter_supported: false,
        require_signed_request_object: config.profile == Profile::Fapi2MessageSigning,
        request_object_signing_alg_values_supported: config.request_object_algs,
        client_id_metadata_document_supported: config.client_documents,
        identity_chaining_requested_token_types_supported: config
            .id_jag_issuance
            .then_some(&[crate::id_jag::ID_JAG_TOKEN_TYPE]),
        authorization_grant_profiles_supported: config
            .jwt_bearer
            .then_some(&["urn:ietf:params:oauth:grant-profile:id-jag"]),
        mtls_endpoint_aliases: endpoint_aliases(config),
        openid,
    };
    if config.profile.is_fapi2() {
        return render::public_document(without_rs256(&metadata).to_string());
    }
    // A struct of strings, lists and flags always serializes.
    render::public_document(serde_json::to_string(&metadata).unwrap_or_default())
}

/// The document under FAPI 2.0, whose signatures are PS256, ES256 or EdDSA, never RS256
/// (Security Profile §5.4.1): RS256 taken out of every `*_alg_values_supported` list.
fn without_rs256(metadata: &impl Serialize) -> serde_json::Value {
    let mut document = serde_json::to_value(metadata).unwrap_or_default();
    if let Some(members) = document.as_object_mut() {
        for (name, value) in members.iter_mut() {
            if name.ends_with("_alg_values_supported")
                && let Some(algorithms) = value.as_array_mut()
            {
                algorithms.retain(|alg| alg != "RS256");
            }
        }
    }
    document
}
