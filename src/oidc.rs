//! OpenID Connect's parts below the grants: what an authorization request asks of the sign-in
//! (OIDC Core §3.1.2.1), what a code remembers for its ID token, what an ID token says
//! (§2), and the seam a signing feature implements to sign it. No layer below the builder
//! names the feature: without it, no ID token is ever asked for.

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256, Sha512};

use crate::clock::UnixTime;
use crate::error::{OAuthError, StoreError};
use crate::signing::SigningAlgorithm;

/// The scope that makes a request an OpenID Connect one (OIDC Core §3.1.2.1).
pub(crate) const OPENID: &str = "openid";

/// The longest `nonce` taken: it is kept with the code and repeated in the ID token.
pub(crate) const MAX_NONCE_BYTES: usize = 512;

/// The longest `login_hint` taken: it is shown back on the sign-in page.
const MAX_LOGIN_HINT_BYTES: usize = 254;

/// `prompt` (OIDC Core §3.1.2.1): whether the user may, or must, be asked anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Prompt {
    /// No `prompt`: ask what is needed.
    #[default]
    Default,
    /// `none`: ask nothing; answer `login_required`, `consent_required` or
    /// `interaction_required` when something would have to be asked (§3.1.2.6).
    None,
    /// `login`: sign the user in again, even with a session.
    Login,
    /// `consent`: ask for approval again, even if it was given before.
    Consent,
}

/// What an OpenID Connect authorization request asks beyond OAuth's (OIDC Core §3.1.2.1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OpenIdRequest {
    /// Repeated in the ID token to tie it to the client's session (§3.1.2.1, §15.5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nonce: Option<String>,
    #[serde(default)]
    pub(crate) prompt: Prompt,
    /// The most seconds since the user's sign-in the client accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_age: Option<u64>,
    /// Who the client thinks signs in: the sign-in page's username, prefilled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) login_hint: Option<String>,
    /// The `id_token_hint` as sent, until the sign-in step reads it (never kept: it is replaced
    /// by the `sub` it names, once verified).
    #[serde(skip)]
    pub(crate) id_token_hint: Option<String>,
    /// The `sub` of a verified `id_token_hint`: only that user's signed-in browser answers
    /// without a sign-in (OIDC Core §3.1.2.1). It is the `sub` the client knows the user by,
    /// pairwise or public: compared with the session's user's, never looked up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hinted_sub: Option<String>,
    /// The claims the `claims` parameter names for the ID token and for userinfo (§5.5).
    #[serde(default, skip_serializing_if = "ClaimsRequest::is_empty")]
    pub(crate) claims: ClaimsRequest,
}

/// The raw OpenID Connect parameters of an authorization request.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OpenIdParameters<'a> {
    pub(crate) nonce: Option<&'a str>,
    pub(crate) prompt: Option<&'a str>,
    pub(crate) max_age: Option<&'a str>,
    pub(crate) login_hint: Option<&'a str>,
    pub(crate) id_token_hint: Option<&'a str>,
    /// A request object (RFC 9101, Core §6.1): taken when the server verifies them (feature
    /// `private-key-jwt`), else refused in OpenID Connect requests.
    pub(crate) request: Option<&'a str>,
}

impl OpenIdRequest {
    /// Reads the parameters of an OpenID Connect request; a malformed one is `invalid_request`
    /// (a `prompt` combining `none` with another value too, §3.1.2.1).
    pub(crate) fn read(parameters: OpenIdParameters<'_>) -> Result<Self, OAuthError> {
        if parameters.nonce.is_some_and(|n| n.len() > MAX_NONCE_BYTES) {
            return Err(OAuthError::invalid_request(
                "nonce is longer than 512 bytes",
            ));
        }
        if parameters
            .nonce
            .is_some_and(|n| n.chars().any(char::is_control))
        {
            // Kept with the request and repeated in the ID token: no control characters, each
            // of which would cost six bytes of JSON.
            return Err(OAuthError::invalid_request(
                "nonce may not hold control characters",
            ));
        }
        let prompt = match parameters.prompt {
            None => Prompt::Default,
            Some(prompt) => read_prompt(prompt)?,
        };
        let max_age = parameters
            .max_age
            .map(|age| {
                age.parse::<u64>().map_err(|_| {
                    OAuthError::invalid_request("max_age must be a whole number of seconds")
                })
            })
            .transpose()?;
        let login_hint = parameters
            .login_hint
            .filter(|hint| {
                hint.len() <= MAX_LOGIN_HINT_BYTES && !hint.chars().any(char::is_control)
            })
            .map(str::to_owned);
        Ok(Self {
            nonce: parameters
                .nonce
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
            prompt,
            max_age,
            login_hint,
            id_token_hint: parameters.id_token_hint.map(str::to_owned),
            hinted_sub: None,
            claims: ClaimsRequest::default(),
        })
    }
}

/// The most claims the `claims` parameter may name under each of `id_token` and `userinfo`,
/// and the longest name: what a request names is kept with its code and its tokens.
pub(crate) const MAX_REQUESTED_CLAIMS: usize = 32;
pub(crate) const MAX_CLAIM_NAME_BYTES: usize = 64;

/// Which claims the `claims` request parameter (OIDC Core §5.5) asks to be released in the ID
/// token and at userinfo, whatever the scope: their names. Those grantor
/// sets itself (`sub`, `auth_time`, `acr`…) it answers in any case, and the `acr` asked for is
/// read by [`AcrRequest`]. A claim the user has no value for, or that is neither
/// a standard claim nor one the host maps to a scope, is not released. A claim's `value`,
/// `values` and `essential` change nothing but for `acr`: grantor releases what it holds and
/// never refuses a request for a claim (§5.5.1: a claim that cannot be released is left out).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ClaimsRequest {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) id_token: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) userinfo: Vec<String>,
}

impl ClaimsRequest {
    /// Whether it names nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.id_token.is_empty() && self.userinfo.is_empty()
    }

    /// Reads the `claims` parameter: a JSON object whose `id_token` and `userinfo` members are
    /// objects of claim names, each `null` or an object (§5.5.1). Anything else, or more than
    /// [`MAX_REQUESTED_CLAIMS`] names under one member, or a name longer than
    /// [`MAX_CLAIM_NAME_BYTES`], is `invalid_request`.
    pub(crate) fn read(claims: Option<&str>) -> Result<Self, OAuthError> {
        let Some(claims) = claims else {
            return Ok(Self::default());
        };
        let malformed =
            || OAuthError::invalid_request("claims must be a JSON object (OIDC Core 5.5)");
        let claims: Value = serde_json::from_str(claims).map_err(|_| malformed())?;
        let claims = claims.as_object().ok_or_else(malformed)?;
        let names = |member: &str| -> Result<Vec<String>, OAuthError> {
            let Some(asked) = claims.get(member) else {
                return Ok(Vec::new());
            };
            let asked = match asked {
                Value::Null => return Ok(Vec::new()),
                Value::Object(asked) => asked,
                _ => {
                    return Err(OAuthError::invalid_request(format!(
                        "claims.{member} must be a JSON object of claim names (OIDC Core 5.5)"
                    )));
                }
            };
            if asked.len() > MAX_REQUESTED_CLAIMS
                || asked.keys().any(|name| name.len() > MAX_CLAIM_NAME_BYTES)
            {
                return Err(OAuthError::invalid_request(format!(
                    "claims.{member} names at most {MAX_REQUESTED_CLAIMS} claims of at most \
                     {MAX_CLAIM_NAME_BYTES} bytes"
                )));
            }
            if asked
                .values()
                .any(|request| !request.is_null() && !request.is_object())
            {
                return Err(OAuthError::invalid_request(format!(
                    "each claim under claims.{member} asks null or an object (OIDC Core 5.5.1)"
                )));
            }
            Ok(asked
                .keys()
                .filter(|name| !name.is_empty())
                .cloned()
                .collect())
        };
        Ok(Self {
            id_token: names("id_token")?,
            userinfo: names("userinfo")?,
        })
    }
}

/// The most `acr` values a request may ask for, and the longest of them.
const MAX_ACR_VALUES: usize = 8;
const MAX_ACR_BYTES: usize = 255;

/// What a request asks of the sign-in's authentication context class (`acr`): `acr_values`
/// (OIDC Core §3.1.2.1, voluntary, RFC 9470 §4) or the `claims` parameter's `acr` (Core
/// §5.5.1.1, essential when it says so), and for a request without OpenID Connect its
/// `max_age` (RFC 9470 §4). Read for every authorization request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AcrRequest {
    /// The classes asked for, in order of preference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) values: Vec<String>,
    /// Whether one of them is required: a sign-in that cannot reach one is refused
    /// (`access_denied`) rather than answered with less.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) essential: bool,
    /// The most seconds since the sign-in, for a request without OpenID Connect (whose own
    /// `max_age` is [`OpenIdRequest::max_age`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_age: Option<u64>,
}

impl AcrRequest {
    /// Reads `acr_values`, the `claims` parameter's `acr` (under `id_token` or `userinfo`) and,
    /// for a request without OpenID Connect, `max_age`; `None` when none asks anything. A
    /// malformed value is `invalid_request`.
    pub(crate) fn read(
        acr_values: Option<&str>,
        claims: Option<&str>,
        max_age: Option<&str>,
    ) -> Result<Option<Self>, OAuthError> {
        let mut read = Self::default();
        if let Some(values) = acr_values {
            read.values = acr_list(values.split(' ').filter(|v| !v.is_empty()))?;
        }
        if let Some(claims) = claims {
            let claims: Value = serde_json::from_str(claims).map_err(|_| {
                OAuthError::invalid_request("claims must be a JSON object (OIDC Core 5.5)")
            })?;
            if !claims.is_object() {
                return Err(OAuthError::invalid_request(
                    "claims must be a JSON object (OIDC Core 5.5)",
                ));
            }
            for member in ["id_token", "userinfo"] {
                if let Some(acr) = claims.get(member).and_then(|m| m.get("acr")) {
                    read.claimed(acr)?;
                }
            }
        }
        if let Some(age) = max_age {
            read.max_age = Some(age.parse::<u64>().map_err(|_| {
                OAuthError::invalid_request("max_age must be a whole number of seconds")
            })?);
        }
        Ok((read != Self::default()).then_some(read))
    }

    /// The `claims` parameter's request for `acr` (Core §5.5.1): `null`, or an object with
    /// `essential`, `value` or `values`. Its values take the place of `acr_values`.
    fn claimed(&mut self, acr: &Value) -> Result<(), OAuthError> {
        let Some(acr) = acr.as_object() else {
            return Ok(());
        };
        let strings = |value: &Value| -> Result<Vec<String>, OAuthError> {
            let list: Vec<&str> = match value {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            acr_list(list.into_iter())
        };
        let mut values = Vec::new();
        if let Some(value) = acr.get("value") {
            values.extend(strings(value)?);
        }
        if let Some(list) = acr.get("values") {
            values.extend(strings(list)?);
        }
        if !values.is_empty() {
            self.values = values;
        }
        if acr.get("essential") == Some(&Value::Bool(true)) {
            self.essential = true;
        }
        Ok(())
    }
}

fn acr_list<'a>(values: impl Iterator<Item = &'a str>) -> Result<Vec<String>, OAuthError> {
    let values: Vec<String> = values.map(str::to_owned).collect();
    let well_formed = |v: &String| {
        !v.is_empty() && v.len() <= MAX_ACR_BYTES && v.bytes().all(|b| (0x21..=0x7e).contains(&b))
    };
    if values.len() > MAX_ACR_VALUES || !values.iter().all(well_formed) {
        return Err(OAuthError::invalid_request(
            "acr values are at most 8 printable ASCII strings of at most 255 bytes",
        ));
    }
    Ok(values)
}

/// `prompt`: space-separated values; `none` alone. `select_account` has no account to pick
/// among here and is answered as a sign-in.
fn read_prompt(prompt: &str) -> Result<Prompt, OAuthError> {
    let mut read = Prompt::Default;
    let mut values = 0;
    for value in prompt.split(' ').filter(|v| !v.is_empty()) {
        values += 1;
        read = match (value, read) {
            ("none", _) => Prompt::None,
            ("login" | "select_account", _) => Prompt::Login,
            // `login consent`: a fresh sign-in, then the approval page too.
            ("consent", Prompt::Login) => Prompt::Login,
            ("consent", _) => Prompt::Consent,
            _ => {
                return Err(OAuthError::invalid_request(
                    "prompt must be none, login, consent or select_account",
                ));
            }
        };
    }
    if values > 1 && prompt.split(' ').any(|v| v == "none") {
        return Err(OAuthError::invalid_request(
            "prompt=none may not be combined with another value",
        ));
    }
    Ok(read)
}

/// What a code remembers for the ID token its exchange issues: the request's `nonce`, and when,
/// how and in which browser session the user signed in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SignInFacts {
    /// The authorization request's `nonce`, repeated in the ID token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// When the user signed in (`auth_time`, OIDC Core §2).
    pub auth_time: UnixTime,
    /// How (`amr`, RFC 8176): `pwd` for a password.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<String>,
    /// The signed-in browser's session id (`sid`), with single sign-on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// The authentication context class the sign-in satisfied (`acr`, OIDC Core §2), when the
    /// deployment names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acr: Option<String>,
    /// The claims the request's `claims` parameter named for the ID token (OIDC Core §5.5),
    /// released in it whatever the scope.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub id_token_claims: Vec<String>,
}

impl SignInFacts {
    /// A sign-in at `auth_time` for a request that sent `nonce`, by a password.
    pub fn new(nonce: Option<String>, auth_time: UnixTime) -> Self {
        Self {
            nonce,
            auth_time,
            amr: vec!["pwd".to_owned()],
            sid: None,
            acr: None,
            id_token_claims: Vec::new(),
        }
    }

    /// The same facts of a sign-in that satisfied the class `acr`.
    pub fn with_acr(mut self, acr: Option<String>) -> Self {
        self.acr = acr;
        self
    }

    /// The same facts of a request whose `claims` parameter named `claims` for the ID token.
    pub fn with_id_token_claims(mut self, claims: Vec<String>) -> Self {
        self.id_token_claims = claims;
        self
    }

    /// The same facts of a sign-in that happened in the session `sid`, by `amr`.
    pub fn in_session(mut self, sid: Option<String>, amr: Vec<String>) -> Self {
        self.sid = sid;
        self.amr = amr;
        self
    }

    /// As stores keep it: a JSON object.
    pub fn to_stored(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// As [`to_stored`](Self::to_stored) wrote it.
    pub fn from_stored(stored: &str) -> Option<Self> {
        serde_json::from_str(stored).ok()
    }
}

/// What an ID token says (OIDC Core §2), ready to sign.
#[derive(Debug, Serialize)]
pub(crate) struct IdTokenClaims<'a> {
    pub(crate) iss: &'a str,
    pub(crate) sub: &'a str,
    pub(crate) aud: &'a str,
    pub(crate) exp: u64,
    pub(crate) iat: u64,
    pub(crate) auth_time: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nonce: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) amr: &'a [String],
    /// The authentication context class the sign-in satisfied (§2, §3.1.2.1 `acr_values`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) acr: Option<&'a str>,
    /// The client the token was issued to (§2: with one audience, it may be left out; grantor
    /// sends it, as strict relying parties check it when present).
    pub(crate) azp: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) at_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) c_hash: Option<String>,
    /// The signed-in browser's session (OIDC Front-/Back-Channel Logout `sid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sid: Option<&'a str>,
    /// The user's claims, when no access token is issued to fetch them (§5.4).
    #[serde(flatten)]
    pub(crate) claims: Map<String, Value>,
}

/// The seam a signing feature implements: ID tokens and logout tokens signed with the server's
/// keys, those keys published, and the server's own ID tokens read back (an `id_token_hint`).
#[async_trait]
pub(crate) trait IdTokenSigner: Send + Sync {
    /// The compact JWS of `claims` with the JOSE `typ` `typ` (`JWT` for an ID token,
    /// `logout+jwt` for a logout token), signed with the current key of `algorithm`.
    async fn sign(
        &self,
        claims: &Value,
        typ: &'static str,
        algorithm: SigningAlgorithm,
        now: UnixTime,
    ) -> Result<String, StoreError>;

    /// The same for an answer a client can ask for at will, with no user in the loop (a signed
    /// introspection answer): a slow signature waits behind every other, in a queue of its
    /// own, so that a flood of them never delays an ID token.
    async fn sign_at_will(
        &self,
        claims: &Value,
        typ: &'static str,
        algorithm: SigningAlgorithm,
        now: UnixTime,
    ) -> Result<String, StoreError>;

    /// The public keys that sign ID tokens at `now`, or will soon, or did while their tokens
    /// may live: JWKs (RFC 7517) with `kid`, `alg` and `use`.
    async fn published(&self, now: UnixTime) -> Result<Vec<Value>, StoreError>;

    /// The claims of `token` if one of the published keys signed it as an ID token, expired or
    /// not (OIDC Core §3.1.2.1: an `id_token_hint` may have expired); `None` for anything else.
    async fn read(&self, token: &str, now: UnixTime) -> Result<Option<Value>, StoreError>;

    /// What signs for a client that registered no algorithm for an answer: RS256 (OIDC
    /// Registration §2, JARM §3, RFC 9701 §6), or ES256 under a FAPI 2.0 profile, which never
    /// signs RS256.
    fn default_algorithm(&self) -> SigningAlgorithm;
}

/// The JOSE `typ` of an ID token.
pub(crate) const ID_TOKEN_TYP: &str = "JWT";

/// The JOSE `typ` of a logout token (Back-Channel Logout 1.0 §2.4).
pub(crate) const LOGOUT_TOKEN_TYP: &str = "logout+jwt";

/// `at_hash` or `c_hash` (OIDC Core §3.1.3.6, §3.3.2.11): the left half of the hash of `value`
/// by the hash of the ID token's algorithm, base64url. EdDSA on Ed25519 hashes with SHA-512,
/// as node-oidc-provider and openid-client do.
pub(crate) fn half_hash(algorithm: SigningAlgorithm, value: &str) -> String {
    match algorithm {
        SigningAlgorithm::RS256 | SigningAlgorithm::ES256 => {
            let digest = Sha256::digest(value.as_bytes());
            URL_SAFE_NO_PAD.encode(&digest[..16])
        }
        SigningAlgorithm::EdDSA => {
            let digest = Sha512::digest(value.as_bytes());
            URL_SAFE_NO_PAD.encode(&digest[..32])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(prompt: Option<&str>, max_age: Option<&str>) -> Result<OpenIdRequest, OAuthError> {
        OpenIdRequest::read(OpenIdParameters {
            prompt,
            max_age,
            ..OpenIdParameters::default()
        })
    }

    #[test]
    fn prompt_values_read_and_none_stands_alone() {
        assert_eq!(read(None, None).unwrap().prompt, Prompt::Default);
        assert_eq!(read(Some("none"), None).unwrap().prompt, Prompt::None);
        assert_eq!(read(Some("login"), None).unwrap().prompt, Prompt::Login);
        assert_eq!(read(Some("consent"), None).unwrap().prompt, Prompt::Consent);
        assert_eq!(
            read(Some("login consent"), None).unwrap().prompt,
            Prompt::Login
        );
        assert!(read(Some("none login"), None).is_err());
        assert!(read(Some("sometimes"), None).is_err());
    }

    #[test]
    fn max_age_is_whole_seconds() {
        assert_eq!(read(None, Some("0")).unwrap().max_age, Some(0));
        assert!(read(None, Some("-1")).is_err());
        assert!(read(None, Some("1.5")).is_err());
    }

    #[test]
    fn a_long_nonce_is_refused() {
        let long = "n".repeat(MAX_NONCE_BYTES + 1);
        let parameters = OpenIdParameters {
            nonce: Some(&long),
            ..OpenIdParameters::default()
        };
        assert!(OpenIdRequest::read(parameters).is_err());
    }

    #[test]
    fn the_claims_parameter_names_claims_within_its_bounds() {
        let read = ClaimsRequest::read(Some(
            r#"{"id_token":{"email":null,"acr":{"essential":true}},"userinfo":{"name":{}}}"#,
        ))
        .unwrap();
        assert_eq!(read.id_token, ["acr", "email"]);
        assert_eq!(read.userinfo, ["name"]);
        assert!(ClaimsRequest::read(None).unwrap().is_empty());
        let most: Vec<String> = (0..MAX_REQUESTED_CLAIMS).map(|i| format!("c{i}")).collect();
        let asked = |names: &[String]| {
            let members: Vec<String> = names.iter().map(|n| format!(r#""{n}":null"#)).collect();
            ClaimsRequest::read(Some(&format!(
                r#"{{"userinfo":{{{}}}}}"#,
                members.join(",")
            )))
        };
        assert_eq!(asked(&most).unwrap().userinfo.len(), MAX_REQUESTED_CLAIMS);
        let one_more = [most.clone(), vec!["more".to_owned()]].concat();
        assert!(asked(&one_more).is_err());
        assert!(asked(&["n".repeat(MAX_CLAIM_NAME_BYTES)]).is_ok());
        assert!(asked(&["n".repeat(MAX_CLAIM_NAME_BYTES + 1)]).is_err());
        for bad in [
            "",
            "[]",
            r#"{"userinfo":[]}"#,
            r#"{"id_token":{"email":true}}"#,
        ] {
            assert!(ClaimsRequest::read(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn at_hash_matches_the_oidc_core_example() {
        // OIDC Core Appendix A.3: the access token and its RS256 `at_hash`.
        let token = "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y";
        assert_eq!(
            half_hash(SigningAlgorithm::RS256, token),
            "77QmUPtjPfzWtF2AnpK9RQ"
        );
        assert_eq!(half_hash(SigningAlgorithm::EdDSA, token).len(), 43);
    }

    #[test]
    fn sign_in_facts_round_trip() {
        let facts = SignInFacts::new(Some("n-0S6_WzA2Mj".into()), UnixTime::from_secs(1_000))
            .in_session(Some("sid-1".into()), vec!["pwd".into()]);
        assert_eq!(SignInFacts::from_stored(&facts.to_stored()), Some(facts));
    }
}
