//! What a user's account says about its user, for OpenID Connect (OIDC Core 1.0 §5.1): the
//! host's data, released per scope (§5.4) in userinfo and ID tokens.

use serde_json::{Map, Value};

use crate::scope::Scope;

/// The claims of OIDC Core §5.4, by the scope that releases them.
const STANDARD: [(&str, &[&str]); 4] = [
    (
        "profile",
        &[
            "name",
            "family_name",
            "given_name",
            "middle_name",
            "nickname",
            "preferred_username",
            "profile",
            "picture",
            "website",
            "gender",
            "birthdate",
            "zoneinfo",
            "locale",
            "updated_at",
        ],
    ),
    ("email", &["email", "email_verified"]),
    ("address", &["address"]),
    ("phone", &["phone_number", "phone_number_verified"]),
];

/// Claim names grantor sets itself in ID tokens and userinfo, which a user's claims never
/// override (OIDC Core §2, §5.3.2).
const RESERVED: [&str; 17] = [
    "sub",
    "iss",
    "aud",
    "exp",
    "iat",
    "nbf",
    "jti",
    "auth_time",
    "nonce",
    "acr",
    "amr",
    "azp",
    "at_hash",
    "c_hash",
    "sid",
    "cnf",
    "client_id",
];

/// The most bytes a user's claims take as JSON: they ride in every ID token the user's sign-ins
/// issue, and in a column of the user's row.
pub const MAX_CLAIMS_BYTES: usize = 8 * 1024;

/// A user's claims (OIDC Core §5.1), as the host keeps them beside the account: the standard
/// ones through their setters, and any other through [`UserClaims::with`]. Which of them a
/// client sees depends on the scope it was granted: `profile`, `email`, `address` and `phone`
/// release the standard claims of OIDC Core §5.4; a host maps its own claims to scopes of its
/// own with [`OpenIdConnect::scope_claims`](crate::settings::OpenIdConnect::scope_claims).
///
/// `sub` is never a claim here: it is the user's id (in ID tokens and userinfo, the one the
/// client knows the user by: the id, or a pairwise value computed from it). Names grantor sets
/// itself (`sub`, `iss`, `aud`, `nonce`, …) are dropped.
///
/// ```
/// use grantor::store::UserClaims;
///
/// let claims = UserClaims::new()
///     .name("Alice Example")
///     .given_name("Alice")
///     .family_name("Example")
///     .email("alice@example.com", true)
///     .with("groups", serde_json::json!(["admins"]));
/// assert_eq!(claims.get("email_verified"), Some(&serde_json::json!(true)));
/// assert_eq!(UserClaims::from_stored(&claims.to_stored()), Some(claims));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserClaims(Map<String, Value>);

impl UserClaims {
    /// No claims.
    pub fn new() -> Self {
        Self::default()
    }

    /// `name`: the full name, in displayable form.
    pub fn name(self, name: impl Into<String>) -> Self {
        self.with("name", name.into())
    }

    /// `given_name`.
    pub fn given_name(self, given_name: impl Into<String>) -> Self {
        self.with("given_name", given_name.into())
    }

    /// `family_name`.
    pub fn family_name(self, family_name: impl Into<String>) -> Self {
        self.with("family_name", family_name.into())
    }

    /// `preferred_username`.
    pub fn preferred_username(self, username: impl Into<String>) -> Self {
        self.with("preferred_username", username.into())
    }

    /// `email` and `email_verified`: whether the host has checked the user controls it.
    pub fn email(self, email: impl Into<String>, verified: bool) -> Self {
        self.with("email", email.into())
            .with("email_verified", verified)
    }

    /// `phone_number` (E.164 recommended) and `phone_number_verified`.
    pub fn phone_number(self, phone: impl Into<String>, verified: bool) -> Self {
        self.with("phone_number", phone.into())
            .with("phone_number_verified", verified)
    }

    /// `address` as one formatted string (OIDC Core §5.1.1 `formatted`).
    pub fn formatted_address(self, address: impl Into<String>) -> Self {
        self.with(
            "address",
            serde_json::json!({ "formatted": address.into() }),
        )
    }

    /// Any claim: a standard one these setters do not name (`locale`, `picture`, `address` as
    /// an object…) or one of the host's own. A name grantor sets itself is dropped.
    pub fn with(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        let name = name.into();
        if !RESERVED.contains(&name.as_str()) {
            self.0.insert(name, value.into());
        }
        self
    }

    /// The claim `name`, if set.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// Whether no claim is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The claims as a store keeps them: a JSON object.
    pub fn to_stored(&self) -> String {
        Value::Object(self.0.clone()).to_string()
    }

    /// Claims as [`to_stored`](Self::to_stored) wrote them; `None` for anything else.
    pub fn from_stored(stored: &str) -> Option<Self> {
        match serde_json::from_str(stored).ok()? {
            Value::Object(map) => Some(Self(map).without_reserved()),
            _ => None,
        }
    }

    /// Whether the claims fit [`MAX_CLAIMS_BYTES`].
    pub(crate) fn fits(&self) -> bool {
        self.to_stored().len() <= MAX_CLAIMS_BYTES
    }

    fn without_reserved(mut self) -> Self {
        self.0.retain(|name, _| !RESERVED.contains(&name.as_str()));
        self
    }

    /// The claims `scope` releases: the standard ones of OIDC Core §5.4, and those the host
    /// mapped to its own scopes in `extra`.
    pub(crate) fn released(
        &self,
        scope: &Scope,
        extra: &[(String, Vec<String>)],
    ) -> Map<String, Value> {
        let standard = STANDARD
            .iter()
            .filter(|(s, _)| scope.contains(s))
            .flat_map(|(_, names)| names.iter().copied());
        let hosts = extra
            .iter()
            .filter(|(s, _)| scope.contains(s))
            .flat_map(|(_, names)| names.iter().map(String::as_str));
        let mut released = Map::new();
        for name in standard.chain(hosts) {
            if let Some(value) = self.0.get(name) {
                released.insert(name.to_owned(), value.clone());
            }
        }
        released
    }

    /// The claims among `names` (the `claims` request parameter's, OIDC Core §5.5) that the
    /// user has and that are releasable at all: a standard claim of §5.4, or one the host maps
    /// to a scope of its own in `extra`. Added to what the scope releases.
    pub(crate) fn named(
        &self,
        names: &[String],
        extra: &[(String, Vec<String>)],
    ) -> Map<String, Value> {
        let releasable = |name: &str| {
            STANDARD.iter().any(|(_, names)| names.contains(&name))
                || extra
                    .iter()
                    .any(|(_, names)| names.iter().any(|n| n == name))
        };
        let mut released = Map::new();
        for name in names.iter().filter(|name| releasable(name)) {
            if let Some(value) = self.0.get(name.as_str()) {
                released.insert(name.clone(), value.clone());
            }
        }
        released
    }
}

/// The standard claims grantor can release (discovery's `claims_supported`), `sub` first.
pub(crate) fn supported_claims() -> impl Iterator<Item = &'static str> {
    std::iter::once("sub").chain(STANDARD.iter().flat_map(|(_, names)| names.iter().copied()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> UserClaims {
        UserClaims::new()
            .name("Alice Example")
            .email("alice@example.com", true)
            .phone_number("+1 555 0100", false)
            .with("groups", serde_json::json!(["admins"]))
    }

    #[test]
    fn a_scope_releases_only_its_own_claims() {
        let email = alice().released(&Scope::parse("openid email").unwrap(), &[]);
        assert_eq!(
            Value::Object(email),
            serde_json::json!({"email": "alice@example.com", "email_verified": true})
        );
        let none = alice().released(&Scope::parse("openid").unwrap(), &[]);
        assert!(none.is_empty());
        let profile = alice().released(&Scope::parse("profile").unwrap(), &[]);
        assert_eq!(profile.keys().collect::<Vec<_>>(), ["name"]);
    }

    #[test]
    fn named_claims_are_released_whatever_the_scope_if_releasable() {
        let names = [
            "email".to_owned(),
            "groups".to_owned(),
            "nickname".to_owned(),
        ];
        let released = alice().named(&names, &[]);
        assert_eq!(
            Value::Object(released),
            serde_json::json!({"email": "alice@example.com"}),
            "a host's claim mapped to no scope is not released, nor one the user lacks"
        );
        let mapped = [("groups".to_owned(), vec!["groups".to_owned()])];
        assert_eq!(
            alice().named(&names, &mapped)["groups"],
            serde_json::json!(["admins"])
        );
    }

    #[test]
    fn a_hosts_claim_needs_a_scope_mapped_to_it() {
        let scope = Scope::parse("openid groups").unwrap();
        assert!(alice().released(&scope, &[]).is_empty());
        let mapped = [("groups".to_owned(), vec!["groups".to_owned()])];
        assert_eq!(
            alice().released(&scope, &mapped)["groups"],
            serde_json::json!(["admins"])
        );
    }

    #[test]
    fn reserved_names_are_never_claims() {
        let claims = UserClaims::new()
            .with("sub", "someone-else")
            .with("iss", "x");
        assert!(claims.is_empty());
        let stored = r#"{"sub":"someone-else","nonce":"n","name":"A"}"#;
        let read = UserClaims::from_stored(stored).unwrap();
        assert_eq!(read, UserClaims::new().name("A"));
        assert!(UserClaims::from_stored("[1]").is_none());
        assert!(UserClaims::from_stored("not json").is_none());
    }

    #[test]
    fn claims_over_the_bound_do_not_fit() {
        assert!(alice().fits());
        let big = UserClaims::new().with("bio", "x".repeat(MAX_CLAIMS_BYTES));
        assert!(!big.fits());
    }
}
