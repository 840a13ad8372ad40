//! Client metadata (RFC 7591 §2) as JSON: bytes into [`ClientMetadata`], pure and
//! synchronous. The one reader of client metadata, whichever way it comes: sent to the
//! registration endpoint (RFC 7591 §3.1, RFC 7592 §2.2), or fetched as a client ID metadata
//! document; [`Source`] says which, and what each may carry. Every refusal is
//! `invalid_client_metadata` (or `invalid_redirect_uri` for the redirect URIs) with a fixed
//! description that never echoes the document.
//!
//! Members grantor does not understand are ignored, as RFC 7591 §2 requires ("the
//! authorization server MUST ignore any client metadata sent by the client that it does not
//! understand"); so are the read-only members a client sends back when it replaces its
//! registration (RFC 7592 §2.2). A member sent twice is refused: which one counts would be a
//! guess (RFC 8259 §4).

use serde::Deserialize;
use serde_json::Value;

use crate::client::{ClientError, ClientKeys, GrantType, TlsClientAuth};
use crate::error::OAuthError;
use crate::registration::{MAX_CLIENT_NAME_BYTES, MAX_REDIRECT_URIS, is_hidden_or_reordering};
use crate::request::{ApplicationType, AuthMethod, ClientMetadata};
use crate::scope::Scope;
use crate::secret::ClientSecret;
use crate::signing::{ClientSigningAlgorithm, SigningAlgorithm};

/// At most this many entries in `grant_types` or `response_types`.
const MAX_TYPES: usize = 8;

/// The members grantor reads, each as any JSON value (typed below, with a description per
/// member); `null` reads as absent. serde refuses a known member sent twice.
#[derive(Deserialize)]
struct Document {
    redirect_uris: Option<Value>,
    grant_types: Option<Value>,
    response_types: Option<Value>,
    token_endpoint_auth_method: Option<Value>,
    scope: Option<Value>,
    client_name: Option<Value>,
    client_id: Option<Value>,
    client_secret: Option<Value>,
    client_secret_expires_at: Option<Value>,
    dpop_bound_access_tokens: Option<Value>,
    require_pushed_authorization_requests: Option<Value>,
    rotate_client_secret: Option<Value>,
    jwks: Option<Value>,
    jwks_uri: Option<Value>,
    id_token_signed_response_alg: Option<Value>,
    userinfo_signed_response_alg: Option<Value>,
    request_object_signing_alg: Option<Value>,
    authorization_signed_response_alg: Option<Value>,
    introspection_signed_response_alg: Option<Value>,
    authorization_encrypted_response_alg: Option<Value>,
    authorization_encrypted_response_enc: Option<Value>,
    introspection_encrypted_response_alg: Option<Value>,
    introspection_encrypted_response_enc: Option<Value>,
    post_logout_redirect_uris: Option<Value>,
    backchannel_logout_uri: Option<Value>,
    application_type: Option<Value>,
    default_max_age: Option<Value>,
    require_auth_time: Option<Value>,
    subject_type: Option<Value>,
    sector_identifier_uri: Option<Value>,
    tls_client_auth_subject_dn: Option<Value>,
    tls_client_auth_san_dns: Option<Value>,
    tls_client_auth_san_uri: Option<Value>,
    tls_client_auth_san_ip: Option<Value>,
    tls_client_auth_san_email: Option<Value>,
}

/// Where client metadata comes from, which decides what it may carry.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    /// Sent to the registration endpoint: each string at most `max_param` bytes; a client
    /// replacing its registration sends its secret back (RFC 7592 §2.2).
    Registration {
        /// The most bytes a string member may have.
        max_param: usize,
    },
    /// A client ID metadata document, fetched from the URL that is its `client_id`: public,
    /// so it carries no secret (`client_secret` nor `client_secret_expires_at`); its strings
    /// are bounded by the document, whose size the fetch bounds.
    Document,
}

/// Why client metadata was refused.
#[derive(Debug)]
pub(crate) enum MetadataError {
    /// The body is no JSON object.
    NotAnObject,
    /// A member is sent twice or breaks its rule.
    Invalid(OAuthError),
}

impl From<MetadataError> for OAuthError {
    fn from(error: MetadataError) -> Self {
        match error {
            MetadataError::NotAnObject => OAuthError::invalid_client_metadata(
                "the body is not a JSON object of client metadata (RFC 7591 section 2)",
            ),
            MetadataError::Invalid(error) => error,
        }
    }
}

/// Reads client metadata from `source`.
pub(crate) fn parse(body: &[u8], source: Source) -> Result<ClientMetadata, MetadataError> {
    let document: Document = serde_json::from_slice(body).map_err(|e| {
        if e.is_data() && e.to_string().starts_with("duplicate field") {
            MetadataError::Invalid(OAuthError::invalid_client_metadata(
                "a client metadata member is sent more than once",
            ))
        } else {
            MetadataError::NotAnObject
        }
    })?;
    let max_param = match source {
        Source::Registration { max_param } => max_param,
        Source::Document => body.len(),
    };
    if matches!(source, Source::Document)
        && (document.client_secret.is_some() || document.client_secret_expires_at.is_some())
    {
        return Err(MetadataError::Invalid(OAuthError::invalid_client_metadata(
            "a client metadata document carries no client secret",
        )));
    }
    read_members(document, max_param).map_err(MetadataError::Invalid)
}

/// The members of `document` into their types; `max_param` bounds each string.
fn read_members(document: Document, max_param: usize) -> Result<ClientMetadata, OAuthError> {
    refuse_encryption(&document)?;
    let redirect_uris = document
        .redirect_uris
        .map(|v| redirect_uris(v, max_param))
        .transpose()?;
    let grant_types = document
        .grant_types
        .map(|v| types(v, "grant_types", grant_type))
        .transpose()?;
    let response_types = document
        .response_types
        .map(|v| types(v, "response_types", response_type))
        .transpose()?;
    let auth_method = document
        .token_endpoint_auth_method
        .map(|v| {
            v.as_str().and_then(AuthMethod::from_name).ok_or_else(|| {
                OAuthError::invalid_client_metadata(
                    "token_endpoint_auth_method must be client_secret_basic, client_secret_post, \
                     private_key_jwt, tls_client_auth, self_signed_tls_client_auth or none",
                )
            })
        })
        .transpose()?;
    let tls_subject = tls_subject(
        [
            (
                "tls_client_auth_subject_dn",
                document.tls_client_auth_subject_dn,
            ),
            ("tls_client_auth_san_dns", document.tls_client_auth_san_dns),
            ("tls_client_auth_san_uri", document.tls_client_auth_san_uri),
            ("tls_client_auth_san_ip", document.tls_client_auth_san_ip),
            (
                "tls_client_auth_san_email",
                document.tls_client_auth_san_email,
            ),
        ],
        max_param,
    )?;
    let scope = document
        .scope
        .map(|v| {
            let scope = string(v, "scope", max_param)?;
            Scope::parse(&scope).map_err(|_| {
                OAuthError::invalid_client_metadata("scope is malformed (RFC 6749 section 3.3)")
            })
        })
        .transpose()?;
    let client_name = document
        .client_name
        .map(client_name)
        .transpose()?
        .filter(|name| !name.is_empty());
    let client_id = document
        .client_id
        .map(|v| string(v, "client_id", max_param))
        .transpose()?;
    let client_secret = document
        .client_secret
        .map(|v| string(v, "client_secret", max_param).map(ClientSecret::new))
        .transpose()?;
    let dpop_bound = boolean(
        document.dpop_bound_access_tokens,
        "dpop_bound_access_tokens must be a boolean (RFC 9449 section 5.2)",
    )?;
    let par_required = boolean(
        document.require_pushed_authorization_requests,
        "require_pushed_authorization_requests must be a boolean (RFC 9126 section 6)",
    )?;
    let rotate_secret = boolean(
        document.rotate_client_secret,
        "rotate_client_secret must be a boolean",
    )?;
    let keys = keys(document.jwks, document.jwks_uri, max_param)?;
    // OIDC Registration §2: never `none` for ID tokens, as grantor issues no unsigned one.
    let id_token_alg = document
        .id_token_signed_response_alg
        .map(|v| {
            signing_alg(
                v,
                "id_token_signed_response_alg must be RS256, ES256 or EdDSA",
            )
        })
        .transpose()?;
    // OIDC Registration §2: absent, userinfo answers JSON; `none` is not offered.
    let userinfo_alg = document
        .userinfo_signed_response_alg
        .map(|v| {
            signing_alg(
                v,
                "userinfo_signed_response_alg must be RS256, ES256 or EdDSA",
            )
        })
        .transpose()?;
    // JARM §3, RFC 9701 §6: absent, RS256; `none` is never offered.
    let authorization_alg = document
        .authorization_signed_response_alg
        .map(|v| {
            signing_alg(
                v,
                "authorization_signed_response_alg must be RS256, ES256 or EdDSA",
            )
        })
        .transpose()?;
    let introspection_alg = document
        .introspection_signed_response_alg
        .map(|v| {
            signing_alg(
                v,
                "introspection_signed_response_alg must be RS256, ES256 or EdDSA",
            )
        })
        .transpose()?;
    let request_object_alg = document
        .request_object_signing_alg
        .map(request_object_alg)
        .transpose()?;
    let post_logout_redirect_uris = document
        .post_logout_redirect_uris
        .map(|v| self::redirect_uris(v, max_param))
        .transpose()?
        .unwrap_or_default();
    let backchannel_logout_uri = document
        .backchannel_logout_uri
        .map(|v| string(v, "backchannel_logout_uri", max_param))
        .transpose()?;
    let application_type = match document.application_type {
        None => None,
        Some(value) => match value.as_str() {
            Some("web") => Some(ApplicationType::Web),
            Some("native") => Some(ApplicationType::Native),
            _ => {
                return Err(OAuthError::invalid_client_metadata(
                    "application_type must be web or native (OIDC Registration section 2)",
                ));
            }
        },
    };
    let default_max_age = document
        .default_max_age
        .map(|v| {
            v.as_u64().ok_or_else(|| {
                OAuthError::invalid_client_metadata(
                    "default_max_age must be a whole number of seconds (OIDC Registration section 2)",
                )
            })
        })
        .transpose()?;
    let require_auth_time = boolean(
        document.require_auth_time,
        "require_auth_time must be a boolean (OIDC Registration section 2)",
    )?;
    let pairwise = match document.subject_type.as_ref().map(Value::as_str) {
        None | Some(Some("public")) => false,
        Some(Some("pairwise")) => true,
        Some(_) => {
            return Err(OAuthError::invalid_client_metadata(
                "subject_type must be public or pairwise (OIDC Registration section 2)",
            ));
        }
    };
    let sector_identifier_uri = document
        .sector_identifier_uri
        .map(|v| string(v, "sector_identifier_uri", max_param))
        .transpose()?;
    Ok(ClientMetadata {
        userinfo_alg,
        authorization_alg,
        introspection_alg,
        pairwise,
        sector_identifier_uri,
        application_type,
        default_max_age,
        require_auth_time,
        id_token_alg,
        request_object_alg,
        post_logout_redirect_uris,
        backchannel_logout_uri,
        keys,
        tls_subject,
        redirect_uris,
        dpop_bound,
        par_required,
        grant_types,
        response_types,
        auth_method,
        scope,
        client_name,
        client_id,
        client_secret,
        rotate_secret,
    })
}

/// RFC 7591 §2: `jwks` (a JWK Set object) or `jwks_uri`, never both.
fn keys(
    jwks: Option<Value>,
    jwks_uri: Option<Value>,
    max_param: usize,
) -> Result<Option<ClientKeys>, OAuthError> {
    let refused = |_| {
        OAuthError::invalid_client_metadata(
            "jwks must be a JWK Set of public keys, jwks_uri an https URL (RFC 7591 section 2)",
        )
    };
    match (jwks, jwks_uri) {
        (None, None) => Ok(None),
        (Some(_), Some(_)) => Err(OAuthError::invalid_client_metadata(
            "jwks and jwks_uri must not both be sent (RFC 7591 section 2)",
        )),
        (Some(jwks @ Value::Object(_)), None) => ClientKeys::jwks(&jwks.to_string())
            .map(Some)
            .map_err(refused),
        (Some(_), None) => Err(refused(ClientError::InvalidKeys)),
        (None, Some(uri)) => {
            let uri = string(uri, "jwks_uri", max_param)?;
            ClientKeys::jwks_uri(&uri).map(Some).map_err(refused)
        }
    }
}

/// JARM §3 and RFC 9701 §6 let a client ask for its authorization responses and
/// introspection answers encrypted to it; grantor signs them and never encrypts, so a client
/// that asks would read answers it cannot trust to be confidential: it is refused, whatever
/// the value.
fn refuse_encryption(document: &Document) -> Result<(), OAuthError> {
    let asked = [
        &document.authorization_encrypted_response_alg,
        &document.authorization_encrypted_response_enc,
        &document.introspection_encrypted_response_alg,
        &document.introspection_encrypted_response_enc,
    ];
    match asked.iter().any(|member| member.is_some()) {
        true => Err(OAuthError::invalid_client_metadata(
            "encrypted authorization responses and introspection answers are not offered \
             (authorization_encrypted_response_alg, _enc, introspection_encrypted_response_alg, \
             _enc)",
        )),
        false => Ok(()),
    }
}

/// RFC 8705 §2.1.2: at most one of the `tls_client_auth_*` members, a string, well formed for
/// its kind.
fn tls_subject(
    members: [(&'static str, Option<Value>); 5],
    max_param: usize,
) -> Result<Option<TlsClientAuth>, OAuthError> {
    let mut sent = members
        .into_iter()
        .filter_map(|(member, value)| Some((member, value?)));
    let Some((member, value)) = sent.next() else {
        return Ok(None);
    };
    if sent.next().is_some() {
        return Err(OAuthError::invalid_client_metadata(
            "send one tls_client_auth subject member only (RFC 8705 section 2.1.2)",
        ));
    }
    let value = string(value, member, max_param)?;
    match TlsClientAuth::from_member(member, &value) {
        Some(Ok(subject)) => Ok(Some(subject)),
        _ => Err(OAuthError::invalid_client_metadata(
            "the tls_client_auth subject member is malformed: an RFC 4514 subject DN, a DNS name, \
             a URI, an IP address or an e-mail address (RFC 8705 section 2.1.2)",
        )),
    }
}

/// An algorithm grantor signs with, by its JOSE name.
fn signing_alg(value: Value, refusal: &'static str) -> Result<SigningAlgorithm, OAuthError> {
    value
        .as_str()
        .filter(|alg| *alg != "Ed25519")
        .and_then(SigningAlgorithm::from_name)
        .ok_or_else(|| OAuthError::invalid_client_metadata(refusal))
}

/// RFC 9101 §10.2 `request_object_signing_alg`: one of the asymmetric algorithms grantor
/// verifies (never `none`, never a symmetric one).
fn request_object_alg(value: Value) -> Result<ClientSigningAlgorithm, OAuthError> {
    value
        .as_str()
        .and_then(ClientSigningAlgorithm::from_name)
        .ok_or_else(|| {
            OAuthError::invalid_client_metadata(
                "request_object_signing_alg must be RS256, PS256, ES256 or EdDSA",
            )
        })
}

/// A boolean member, `false` when absent.
fn boolean(value: Option<Value>, refusal: &'static str) -> Result<bool, OAuthError> {
    match value {
        None => Ok(false),
        Some(Value::Bool(value)) => Ok(value),
        Some(_) => Err(OAuthError::invalid_client_metadata(refusal)),
    }
}

fn string(value: Value, member: &'static str, max_len: usize) -> Result<String, OAuthError> {
    match value {
        Value::String(s) if s.len() <= max_len => Ok(s),
        Value::String(_) => Err(OAuthError::invalid_client_metadata(format!(
            "{member} is too long"
        ))),
        _ => Err(OAuthError::invalid_client_metadata(format!(
            "{member} must be a string"
        ))),
    }
}

/// An array of strings, of at most `max_items`; `None` for anything else.
fn array_of_strings(value: Value, max_items: usize) -> Result<Option<Vec<String>>, usize> {
    let Value::Array(items) = value else {
        return Ok(None);
    };
    if items.len() > max_items {
        return Err(items.len());
    }
    Ok(items
        .into_iter()
        .map(|item| match item {
            Value::String(s) => Some(s),
            _ => None,
        })
        .collect())
}

fn redirect_uris(value: Value, max_param: usize) -> Result<Vec<String>, OAuthError> {
    let uris = array_of_strings(value, MAX_REDIRECT_URIS)
        .map_err(|_| {
            OAuthError::invalid_redirect_uri("at most 10 redirect URIs may be registered")
        })?
        .ok_or_else(|| {
            OAuthError::invalid_client_metadata("redirect_uris must be an array of strings")
        })?;
    if uris.iter().any(|uri| uri.len() > max_param) {
        return Err(OAuthError::invalid_redirect_uri(
            "a redirect URI is too long",
        ));
    }
    Ok(uris)
}

fn types(
    value: Value,
    member: &'static str,
    read: fn(&str) -> Option<GrantType>,
) -> Result<Vec<GrantType>, OAuthError> {
    let names = array_of_strings(value, MAX_TYPES)
        .map_err(|_| {
            OAuthError::invalid_client_metadata(format!("{member} lists too many values"))
        })?
        .ok_or_else(|| {
            OAuthError::invalid_client_metadata(format!("{member} must be an array of strings"))
        })?;
    names
        .iter()
        .map(|name| {
            read(name).ok_or_else(|| {
                OAuthError::invalid_client_metadata(format!(
                    "{member} names a value grantor does not support"
                ))
            })
        })
        .collect()
}

fn grant_type(name: &str) -> Option<GrantType> {
    GrantType::ALL.into_iter().find(|g| g.as_str() == name)
}

/// RFC 7591 §2.1: `code` goes with the authorization code grant, `token` with the implicit.
fn response_type(name: &str) -> Option<GrantType> {
    match name {
        "code" => Some(GrantType::AuthorizationCode),
        // OpenID Connect Core §3.2: the implicit flow's ID token responses.
        "token" | "id_token" | "id_token token" | "token id_token" => Some(GrantType::Implicit),
        _ => None,
    }
}

/// A name shown to users on the approval page: bounded, without control characters or
/// characters that hide or reorder the text around them (bidirectional overrides, zero-width
/// characters), which would make it read as another name.
fn client_name(value: Value) -> Result<String, OAuthError> {
    let name = string(value, "client_name", MAX_CLIENT_NAME_BYTES)?;
    if name.chars().any(is_hidden_or_reordering) {
        return Err(OAuthError::invalid_client_metadata(
            "client_name holds control, bidirectional or invisible characters",
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTRATION: Source = Source::Registration { max_param: 4096 };

    fn code(body: &str) -> &'static str {
        OAuthError::from(parse(body.as_bytes(), REGISTRATION).unwrap_err())
            .code()
            .as_str()
    }

    #[test]
    fn members_are_read_into_their_types_and_unknown_ones_ignored() {
        let metadata = parse(
            br#"{"redirect_uris":["https://app.example/cb"],"grant_types":["authorization_code",
                "refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none",
                "scope":"email profile","client_name":"App","logo_uri":{"x":[1,2]},
                "client_secret":null}"#,
            REGISTRATION,
        )
        .unwrap();
        assert_eq!(metadata.redirect_uris.unwrap(), ["https://app.example/cb"]);
        assert_eq!(
            metadata.grant_types.unwrap(),
            [GrantType::AuthorizationCode, GrantType::RefreshToken]
        );
        assert_eq!(
            metadata.response_types.unwrap(),
            [GrantType::AuthorizationCode]
        );
        assert_eq!(metadata.auth_method, Some(AuthMethod::None));
        assert_eq!(metadata.scope.unwrap().as_str(), "email profile");
        assert_eq!(metadata.client_name.as_deref(), Some("App"));
        assert!(metadata.client_secret.is_none());
        let openid = parse(
            br#"{"userinfo_signed_response_alg":"ES256","default_max_age":3600,
                "require_auth_time":true}"#,
            REGISTRATION,
        )
        .unwrap();
        assert_eq!(openid.userinfo_alg, Some(SigningAlgorithm::ES256));
        let signed = parse(
            br#"{"authorization_signed_response_alg":"EdDSA",
                "introspection_signed_response_alg":"RS256"}"#,
            REGISTRATION,
        )
        .unwrap();
        assert_eq!(signed.authorization_alg, Some(SigningAlgorithm::EdDSA));
        assert_eq!(signed.introspection_alg, Some(SigningAlgorithm::RS256));
        assert_eq!(openid.default_max_age, Some(3600));
        assert!(openid.require_auth_time);
    }

    #[test]
    fn malformed_documents_and_wrong_types_are_invalid_client_metadata() {
        for body in [
            "",
            "[]",
            "\"x\"",
            "{",
            "{\"redirect_uris\":\"https://app.example/cb\"}",
            "{\"dpop_bound_access_tokens\":\"yes\"}",
            "{\"rotate_client_secret\":1}",
            "{\"redirect_uris\":[1]}",
            "{\"grant_types\":\"authorization_code\"}",
            "{\"grant_types\":[\"urn:example\"]}",
            "{\"response_types\":[\"code id_token\"]}",
            "{\"token_endpoint_auth_method\":\"client_secret_jwt\"}",
            "{\"token_endpoint_auth_method\":1}",
            "{\"scope\":[\"profile\"]}",
            "{\"scope\":\"bad\\\"scope\"}",
            "{\"client_name\":\"a\\u0000b\"}",
            "{\"subject_type\":\"secret\"}",
            "{\"subject_type\":[\"pairwise\"]}",
            "{\"sector_identifier_uri\":1}",
            "{\"userinfo_signed_response_alg\":\"none\"}",
            "{\"userinfo_signed_response_alg\":\"HS256\"}",
            "{\"default_max_age\":-1}",
            "{\"default_max_age\":\"60\"}",
            "{\"require_auth_time\":\"yes\"}",
            "{\"scope\":\"a\",\"scope\":\"b\"}",
            "{\"request_object_signing_alg\":\"none\"}",
            "{\"request_object_signing_alg\":\"HS256\"}",
            "{\"request_object_signing_alg\":[\"RS256\"]}",
            "{\"authorization_signed_response_alg\":\"none\"}",
            "{\"authorization_signed_response_alg\":\"HS256\"}",
            "{\"introspection_signed_response_alg\":\"PS512\"}",
            "{\"introspection_signed_response_alg\":1}",
            "{\"authorization_encrypted_response_alg\":\"RSA-OAEP-256\"}",
            "{\"authorization_encrypted_response_enc\":\"A128CBC-HS256\"}",
            "{\"introspection_encrypted_response_alg\":\"ECDH-ES\"}",
            "{\"introspection_encrypted_response_enc\":\"A256GCM\"}",
        ] {
            assert_eq!(code(body), "invalid_client_metadata", "{body}");
        }
    }

    #[test]
    fn too_many_or_too_long_redirect_uris_are_invalid_redirect_uri() {
        let many = format!(
            "{{\"redirect_uris\":[{}]}}",
            ["\"https://app.example/cb\""; 11].join(",")
        );
        assert_eq!(code(&many), "invalid_redirect_uri");
        let long = format!(
            "{{\"redirect_uris\":[\"https://a.example/{}\"]}}",
            "a".repeat(5000)
        );
        assert_eq!(code(&long), "invalid_redirect_uri");
    }

    #[test]
    fn deep_nesting_never_overflows_the_stack() {
        let (open, close) = ("[".repeat(100_000), "]".repeat(100_000));
        // Skipped whole in a member grantor ignores; past serde_json's depth limit in one it reads.
        let ignored = format!("{{\"logo_uri\":{open}{close}}}");
        assert!(parse(ignored.as_bytes(), REGISTRATION).is_ok());
        let read = format!("{{\"scope\":{open}{close}}}");
        assert_eq!(code(&read), "invalid_client_metadata");
    }

    #[test]
    fn a_metadata_document_carries_no_secret_where_a_registration_sends_its_own_back() {
        for body in [
            r#"{"client_secret":"s"}"#,
            r#"{"client_secret_expires_at":0}"#,
        ] {
            let refused = OAuthError::from(parse(body.as_bytes(), Source::Document).unwrap_err());
            assert_eq!(refused.code().as_str(), "invalid_client_metadata", "{body}");
            assert!(refused.description().contains("secret"), "{refused:?}");
        }
        let body = br#"{"client_secret":"s","client_secret_expires_at":0}"#;
        assert!(parse(body, REGISTRATION).unwrap().client_secret.is_some());
    }

    #[test]
    fn a_body_that_is_no_object_is_told_apart_from_a_member_breaking_a_rule() {
        let read = |body: &str| parse(body.as_bytes(), Source::Document);
        assert!(matches!(read("[]"), Err(MetadataError::NotAnObject)));
        assert!(matches!(read("<html>"), Err(MetadataError::NotAnObject)));
        assert!(matches!(
            read(r#"{"scope":1}"#),
            Err(MetadataError::Invalid(_))
        ));
        let twice = read(r#"{"scope":"a","scope":"b"}"#);
        assert!(matches!(twice, Err(MetadataError::Invalid(_))));
    }
}
