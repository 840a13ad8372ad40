//! Parsed forms to typed requests: pure functions of a [`Form`] and headers, never a store.

use http::HeaderMap;

use super::basic::{self, BasicAuth};
use super::form::Form;
use crate::client::GrantType;
use crate::error::{ErrorCode, OAuthError};
use crate::oidc::OpenIdParameters;
use crate::pkce;
use crate::request::{
    Assertion, AuthorizationRequest, ClientAuth, Credentials, IdTokenText, TokenQuery,
    TokenRequest, TokenType, Unreadable,
};
use crate::secret::{AccessToken, AuthorizationCode, DeviceCode, Password, RefreshToken};

/// How the client of a token, revocation or introspection request authenticates: HTTP Basic,
/// `client_id` and `client_secret` in the body (which only clients registered for
/// `client_secret_post` may use), a JWT client assertion (RFC 7523 §2.2), or `client_id` alone
/// for a public client; one method at most (RFC 6749 §2.3).
pub(crate) fn client_auth<'f>(
    headers: &HeaderMap,
    form: &'f Form<'_>,
    max_len: usize,
) -> Result<ClientAuth<'f>, OAuthError> {
    let body_id = form.get("client_id");
    if let Some(secret) = form.get("client_secret") {
        let Some(client_id) = body_id else {
            return Err(OAuthError::invalid_client(
                "client_secret in the body needs client_id beside it",
            ));
        };
        if !matches!(basic::parse(headers, max_len), BasicAuth::Absent)
            || form.get("client_assertion").is_some()
        {
            return Err(OAuthError::invalid_request(
                "use one client authentication method, not client_secret in the body and another",
            ));
        }
        return Ok(ClientAuth::Post(Credentials::of(client_id, secret)));
    }
    let assertion = client_assertion(form, body_id)?;
    match basic::parse(headers, max_len) {
        BasicAuth::Malformed(why) => Err(OAuthError::invalid_client(why)),
        BasicAuth::Present(_) if assertion.is_some() => Err(OAuthError::invalid_request(
            "use one client authentication method, not HTTP Basic and a client assertion",
        )),
        BasicAuth::Present(credentials) => {
            if body_id.is_some_and(|id| id != credentials.client_id()) {
                return Err(OAuthError::invalid_request(
                    "client_id in the body differs from the authenticated client",
                ));
            }
            Ok(ClientAuth::Basic(credentials))
        }
        BasicAuth::Absent => Ok(match assertion {
            Some(assertion) => assertion,
            None => body_id.map_or(ClientAuth::Anonymous, ClientAuth::ClientId),
        }),
    }
}

/// RFC 7521 §4.2: `client_assertion_type` and `client_assertion` together; the assertion's
/// `sub` (read, not yet verified) names the client, and `client_id`, if sent, must be it.
fn client_assertion<'f>(
    form: &'f Form<'_>,
    body_id: Option<&str>,
) -> Result<Option<ClientAuth<'f>>, OAuthError> {
    let (kind, assertion) = match (
        form.get("client_assertion_type"),
        form.get("client_assertion"),
    ) {
        (None, None) => return Ok(None),
        (Some(kind), Some(assertion)) => (kind, assertion),
        _ => {
            return Err(OAuthError::invalid_request(
                "client_assertion and client_assertion_type go together (RFC 7521 section 4.2)",
            ));
        }
    };
    if kind != JWT_BEARER_ASSERTION {
        return Err(OAuthError::invalid_client(
            "client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        ));
    }
    let client_id = crate::request::claimed_subject(assertion).ok_or_else(|| {
        OAuthError::invalid_client(
            "the client assertion is not a JWT with a sub (RFC 7523 section 3)",
        )
    })?;
    if body_id.is_some_and(|id| id != client_id) {
        return Err(OAuthError::invalid_client(
            "client_id in the body differs from the client assertion's sub",
        ));
    }
    Ok(Some(ClientAuth::Assertion {
        client_id,
        assertion: Assertion(assertion),
    }))
}

/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
const JWT_BEARER_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The token request of `grant_type`, with the parameters its grant needs.
pub(crate) fn token_request<'f>(form: &'f Form<'_>) -> Result<TokenRequest<'f>, Unreadable> {
    let grant_type = match form.get("grant_type") {
        Some("authorization_code") => GrantType::AuthorizationCode,
        Some("password") => GrantType::Password,
        Some("refresh_token") => GrantType::RefreshToken,
        Some("client_credentials") => GrantType::ClientCredentials,
        Some(name) if name == GrantType::DeviceCode.as_str() => GrantType::DeviceCode,
        Some(name) if name == GrantType::TokenExchange.as_str() => GrantType::TokenExchange,
        Some(name) if name == GrantType::JwtBearer.as_str() => GrantType::JwtBearer,
        Some(_) => {
            return Err(Unreadable {
                grant_type: None,
                error: OAuthError::new(
                    ErrorCode::UnsupportedGrantType,
                    "grant_type must be authorization_code, password, refresh_token, \
                     client_credentials, urn:ietf:params:oauth:grant-type:device_code, \
                     urn:ietf:params:oauth:grant-type:token-exchange \
                     or urn:ietf:params:oauth:grant-type:jwt-bearer",
                ),
            });
        }
        None => {
            return Err(Unreadable {
                grant_type: None,
                error: OAuthError::invalid_request("grant_type is missing"),
            });
        }
    };
    grant_parameters(form, grant_type).map_err(|error| Unreadable {
        grant_type: Some(grant_type),
        error,
    })
}

fn grant_parameters<'f>(
    form: &'f Form<'_>,
    grant_type: GrantType,
) -> Result<TokenRequest<'f>, OAuthError> {
    let required = |name: &'static str| {
        form.get(name)
            .ok_or_else(|| OAuthError::invalid_request(format!("{name} is missing")))
    };
    let scope = form.get("scope");
    let resources = form.resources();
    Ok(match grant_type {
        GrantType::AuthorizationCode => {
            let code = AuthorizationCode::hashed(required("code")?);
            let redirect_uri = required("redirect_uri")?;
            let code_verifier = form.get("code_verifier");
            if code_verifier.is_some_and(|v| !pkce::is_verifier_syntax(v)) {
                return Err(OAuthError::invalid_request(
                    "code_verifier must be 43 to 128 unreserved characters (RFC 7636 section 4.1)",
                ));
            }
            TokenRequest::AuthorizationCode {
                code,
                redirect_uri,
                code_verifier,
                resources,
            }
        }
        GrantType::Password => TokenRequest::Password {
            username: required("username")?,
            password: Password::new(required("password")?),
            scope,
            resources,
        },
        GrantType::RefreshToken => TokenRequest::RefreshToken {
            refresh_token: RefreshToken::hashed(required("refresh_token")?),
            scope,
            resources,
        },
        GrantType::DeviceCode => TokenRequest::DeviceCode {
            device_code: DeviceCode::hashed(required("device_code")?),
        },
        GrantType::TokenExchange => token_exchange(form, scope, resources)?,
        GrantType::JwtBearer => TokenRequest::JwtBearer {
            assertion: Assertion(required("assertion")?),
            scope,
            resources,
        },
        // `token_request` maps only the token-endpoint grants here.
        GrantType::ClientCredentials | GrantType::Implicit => {
            TokenRequest::ClientCredentials { scope, resources }
        }
    })
}

/// A token exchange request (RFC 8693 §2.1): for an access token (no `requested_token_type`,
/// or an access token's), or for an ID-JAG; any other requested type is refused.
fn token_exchange<'f>(
    form: &'f Form<'_>,
    scope: Option<&'f str>,
    resources: Vec<&'f str>,
) -> Result<TokenRequest<'f>, OAuthError> {
    match form.get("requested_token_type").map(TokenType::parse) {
        None | Some(Some(TokenType::AccessToken)) => access_token_exchange(form, scope, resources),
        Some(Some(TokenType::IdJag)) => id_jag_exchange(form, scope, resources),
        Some(_) => Err(OAuthError::invalid_request(
            "requested_token_type is not supported: access tokens are issued \
             (urn:ietf:params:oauth:token-type:access_token), and identity assertion \
             grants where the server offers them (urn:ietf:params:oauth:token-type:id-jag)",
        )),
    }
}

/// An exchange for an access token: the subject token and its type, the actor token and its
/// type (both or neither), each type one of grantor's access tokens.
fn access_token_exchange<'f>(
    form: &'f Form<'_>,
    scope: Option<&'f str>,
    resources: Vec<&'f str>,
) -> Result<TokenRequest<'f>, OAuthError> {
    let token_type = |name: &'static str| match form.get(name).map(TokenType::parse) {
        Some(Some(token_type)) if token_type.is_access_token() => Ok(token_type),
        Some(_) => Err(OAuthError::invalid_request(format!(
            "{name} is not supported: only access tokens this server issued are exchanged \
             for access tokens (urn:ietf:params:oauth:token-type:access_token, or :jwt for its \
             JWT access tokens)"
        ))),
        None => Err(OAuthError::invalid_request(format!("{name} is missing"))),
    };
    let subject_token = form
        .get("subject_token")
        .map(AccessToken::hashed)
        .ok_or_else(|| OAuthError::invalid_request("subject_token is missing"))?;
    let subject_token_type = token_type("subject_token_type")?;
    // RFC 8693 §2.1: actor_token_type is required with actor_token, forbidden without it.
    let actor_token = match (form.get("actor_token"), form.get("actor_token_type")) {
        (Some(token), Some(_)) => {
            Some((AccessToken::hashed(token), token_type("actor_token_type")?))
        }
        (None, None) => None,
        (Some(_), None) => {
            return Err(OAuthError::invalid_request("actor_token_type is missing"));
        }
        (None, Some(_)) => {
            return Err(OAuthError::invalid_request(
                "actor_token_type was sent without an actor_token",
            ));
        }
    };
    Ok(TokenRequest::TokenExchange {
        subject_token,
        subject_token_type,
        actor_token,
        scope,
        resources,
        audiences: form.audiences(),
    })
}

/// An exchange for an ID-JAG (draft-ietf-oauth-identity-assertion-authz-grant, "Token
/// Exchange"): the subject token is an ID token; the draft leaves actor tokens to future
/// profiles, so one is refused rather than silently ignored.
fn id_jag_exchange<'f>(
    form: &'f Form<'_>,
    scope: Option<&'f str>,
    resources: Vec<&'f str>,
) -> Result<TokenRequest<'f>, OAuthError> {
    let subject_token = form
        .get("subject_token")
        .ok_or_else(|| OAuthError::invalid_request("subject_token is missing"))?;
    match form.get("subject_token_type").map(TokenType::parse) {
        Some(Some(TokenType::IdToken)) => {}
        Some(_) => {
            return Err(OAuthError::invalid_request(
                "subject_token_type is not supported: an identity assertion grant is issued \
                 for an ID token this server issued (urn:ietf:params:oauth:token-type:id_token)",
            ));
        }
        None => return Err(OAuthError::invalid_request("subject_token_type is missing")),
    }
    if form.get("actor_token").is_some() || form.get("actor_token_type").is_some() {
        return Err(OAuthError::invalid_request(
            "actor_token is not supported with requested_token_type \
             urn:ietf:params:oauth:token-type:id-jag",
        ));
    }
    Ok(TokenRequest::IdJag {
        subject_token: IdTokenText(subject_token),
        scope,
        resources,
        audiences: form.audiences(),
    })
}

/// The token of a revocation or introspection request (its digest computed once).
pub(crate) fn token_query<'f>(form: &'f Form<'_>) -> Result<TokenQuery<'f>, OAuthError> {
    let token = form
        .get("token")
        .map(AccessToken::hashed)
        .ok_or_else(|| OAuthError::invalid_request("token is missing"))?;
    Ok(TokenQuery {
        token,
        hint: form.get("token_type_hint"),
    })
}

/// The JWT's own claims in a request object (RFC 7519 §4.1), which are not parameters.
const JWT_CLAIMS: [&str; 7] = ["iss", "sub", "aud", "exp", "nbf", "iat", "jti"];

/// The parameters of a verified request object's `claims` (RFC 9101 §4), as a form that
/// [`authorization_request`] reads: strings, except `max_age` (a number too), `claims` (an
/// object too, kept as its JSON text) and `resource` (an array of strings too). Each value is
/// at most `max_param` bytes; a parameter grantor does not read is ignored. A request object
/// may hold neither `request` nor `request_uri`.
pub(crate) fn request_object(
    claims: &serde_json::Map<String, serde_json::Value>,
    max_param: usize,
) -> Result<Form<'static>, OAuthError> {
    use serde_json::Value;
    let refused = |why: &'static str| OAuthError::new(ErrorCode::InvalidRequestObject, why);
    let mut form = Form::default();
    for (name, value) in claims {
        let name = name.as_str();
        if JWT_CLAIMS.contains(&name) {
            continue;
        }
        if matches!(name, "request" | "request_uri") {
            return Err(refused(
                "a request object may hold neither request nor request_uri (RFC 9101 section 4)",
            ));
        }
        let texts = match (name, value) {
            (_, Value::Null) => Vec::new(),
            (_, Value::String(text)) => vec![text.clone()],
            (name, _) if !super::form::reads(name) => Vec::new(),
            ("max_age", Value::Number(seconds)) if seconds.is_u64() => vec![seconds.to_string()],
            ("claims", Value::Object(_)) => vec![value.to_string()],
            ("resource", Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| refused("the request object's resource must hold strings"))?,
            _ => {
                return Err(refused(
                    "the request object's parameters must be strings (max_age may be a \
                     number, claims an object, resource an array)",
                ));
            }
        };
        for text in texts {
            if text.len() > max_param {
                return Err(refused(
                    "a parameter of the request object is longer than this server accepts",
                ));
            }
            form.set(name, text);
        }
    }
    Ok(form)
}

/// The parameters of an authorization request.
pub(crate) fn authorization_request<'f>(form: &'f Form<'_>) -> AuthorizationRequest<'f> {
    AuthorizationRequest {
        client_id: form.get("client_id"),
        redirect_uri: form.get("redirect_uri"),
        response_type: form.get("response_type"),
        response_mode: form.get("response_mode"),
        scope: form.get("scope"),
        state: form.get("state"),
        code_challenge: form.get("code_challenge"),
        code_challenge_method: form.get("code_challenge_method"),
        resources: form.resources(),
        request_uri: form.get("request_uri"),
        dpop_jkt: form.get("dpop_jkt"),
        openid: OpenIdParameters {
            nonce: form.get("nonce"),
            prompt: form.get("prompt"),
            max_age: form.get("max_age"),
            login_hint: form.get("login_hint"),
            id_token_hint: form.get("id_token_hint"),
            request: form.get("request"),
        },
        acr_values: form.get("acr_values"),
        claims: form.get("claims"),
        repeated: form.repeated(),
        repeated_oauth: form.repeated_oauth(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::form::parse;
    use crate::settings::Limits;

    const LIMITS: Limits = Limits {
        max_input: 4096,
        max_param: 1024,
    };

    fn read<T>(body: &str, check: impl FnOnce(Result<TokenRequest<'_>, Unreadable>) -> T) -> T {
        let form = parse(body.as_bytes(), LIMITS).unwrap();
        check(token_request(&form))
    }

    #[test]
    fn each_grant_type_reads_its_own_parameters() {
        read("grant_type=refresh_token&refresh_token=r&scope=a", |r| {
            assert!(matches!(
                r,
                Ok(TokenRequest::RefreshToken {
                    scope: Some("a"),
                    ..
                })
            ));
        });
        read("grant_type=password&username=u&password=p", |r| {
            assert!(matches!(
                r,
                Ok(TokenRequest::Password {
                    username: "u",
                    scope: None,
                    ..
                })
            ));
        });
        read("grant_type=client_credentials", |r| {
            assert_eq!(r.unwrap().grant_type(), GrantType::ClientCredentials);
        });
    }

    #[test]
    fn a_missing_parameter_keeps_the_grant_type_for_the_agreement_check() {
        let unreadable = read("grant_type=authorization_code&code=c", |r| r.unwrap_err());
        assert_eq!(unreadable.grant_type, Some(GrantType::AuthorizationCode));
        assert_eq!(unreadable.error.description(), "redirect_uri is missing");
        let unreadable = read("grant_type=implicit", |r| r.unwrap_err());
        assert_eq!(unreadable.grant_type, None);
        assert_eq!(unreadable.error.code(), ErrorCode::UnsupportedGrantType);
    }

    #[test]
    fn an_id_jag_request_reads_its_id_token_never_shows_it_and_takes_no_actor() {
        let asked = format!(
            "grant_type=urn:ietf:params:oauth:grant-type:token-exchange\
             &requested_token_type={}&subject_token=id-token-text\
             &subject_token_type={}&audience=https://as.example/",
            TokenType::ID_JAG,
            TokenType::ID_TOKEN
        );
        read(&asked, |r| {
            let request = r.unwrap();
            let shown = format!("{request:?}");
            assert!(!shown.contains("id-token-text"), "{shown}");
            let TokenRequest::IdJag {
                subject_token,
                audiences,
                ..
            } = request
            else {
                panic!("an ID-JAG request: {shown}");
            };
            assert_eq!(subject_token.0, "id-token-text");
            assert_eq!(audiences, ["https://as.example/"]);
        });
        let refused = |body: &str| read(body, |r| r.unwrap_err().error.description().to_owned());
        let with_actor = format!(
            "{asked}&actor_token=a&actor_token_type={}",
            TokenType::ID_TOKEN
        );
        assert!(refused(&with_actor).contains("actor_token"));
        let access = asked.replace(TokenType::ID_TOKEN, TokenType::ACCESS_TOKEN);
        assert!(refused(&access).contains("subject_token_type"));
        // An ID token is no subject of an exchange for an access token.
        let for_access = asked.replace(TokenType::ID_JAG, TokenType::ACCESS_TOKEN);
        assert!(refused(&for_access).contains("subject_token_type"));
        let unknown = asked.replace(TokenType::ID_JAG, "urn:example:token");
        assert!(refused(&unknown).contains("requested_token_type"));
    }

    #[test]
    fn a_token_exchange_reads_its_tokens_and_never_shows_them() {
        let access = TokenType::ACCESS_TOKEN;
        let body = format!(
            "grant_type=urn:ietf:params:oauth:grant-type:token-exchange\
             &subject_token=subject-secret&subject_token_type={access}\
             &actor_token=actor-secret&actor_token_type={access}\
             &audience=https://a.example/&resource=https://b.example/&audience=https://c.example/"
        );
        read(&body, |r| {
            let request = r.unwrap();
            let shown = format!("{request:?}");
            assert!(!shown.contains("subject-secret") && !shown.contains("actor-secret"));
            let TokenRequest::TokenExchange {
                subject_token,
                actor_token: Some((actor_token, TokenType::AccessToken)),
                audiences,
                resources,
                ..
            } = request
            else {
                panic!("a delegation request: {shown}");
            };
            assert_eq!(subject_token.expose_secret(), "subject-secret");
            assert_eq!(actor_token.expose_secret(), "actor-secret");
            assert_eq!(audiences, ["https://a.example/", "https://c.example/"]);
            assert_eq!(resources, ["https://b.example/"]);
        });
        let half = "grant_type=urn:ietf:params:oauth:grant-type:token-exchange\
                    &subject_token=s&subject_token_type=urn:ietf:params:oauth:token-type:jwt\
                    &actor_token=a";
        let unreadable = read(half, |r| r.unwrap_err());
        assert_eq!(unreadable.grant_type, Some(GrantType::TokenExchange));
        assert_eq!(
            unreadable.error.description(),
            "actor_token_type is missing"
        );
    }

    #[test]
    fn a_request_objects_claims_read_as_the_authorization_requests_parameters() {
        let claims = serde_json::json!({
            "iss": "app", "aud": "https://as.example", "exp": 1, "jti": "j",
            "client_id": "app", "response_type": "code", "scope": "openid profile",
            "max_age": 300, "claims": {"id_token": {"acr": null}},
            "resource": ["https://a.example/", "https://b.example/"],
            "logo": {"ignored": [1, 2]}, "nonce": null,
        });
        let serde_json::Value::Object(claims) = claims else {
            unreachable!()
        };
        let form = request_object(&claims, 1024).unwrap();
        let request = authorization_request(&form);
        assert_eq!(request.client_id, Some("app"));
        assert_eq!(request.scope, Some("openid profile"));
        assert_eq!(request.openid.max_age, Some("300"));
        assert_eq!(request.openid.nonce, None);
        assert_eq!(request.claims, Some(r#"{"id_token":{"acr":null}}"#));
        assert_eq!(
            request.resources,
            ["https://a.example/", "https://b.example/"]
        );
        assert_eq!(request.repeated, None);
        let refused = |json: serde_json::Value| {
            let serde_json::Value::Object(claims) = json else {
                unreachable!()
            };
            request_object(&claims, 16).unwrap_err().code()
        };
        for bad in [
            serde_json::json!({"scope": ["profile"]}),
            serde_json::json!({"max_age": -1}),
            serde_json::json!({"state": {"a": 1}}),
            serde_json::json!({"resource": [1]}),
            serde_json::json!({"request": "x"}),
            serde_json::json!({"request_uri": "urn:x"}),
            serde_json::json!({"state": "longer than sixteen bytes"}),
        ] {
            assert_eq!(refused(bad), ErrorCode::InvalidRequestObject);
        }
    }

    #[test]
    fn a_malformed_code_verifier_is_refused_before_any_lookup() {
        let body = "grant_type=authorization_code&code=c&redirect_uri=r&code_verifier=short";
        let unreadable = read(body, |r| r.unwrap_err());
        assert_eq!(unreadable.error.code(), ErrorCode::InvalidRequest);
    }
}
