//! What a username is: which names a sign-in takes, and when two spellings are one account (a
//! leaf: the settings re-export it, the store contract reads it).

use std::fmt;
use std::sync::Arc;

/// The longest username taken, in bytes (an email address's limit, RFC 5321 §4.5.3.1.3): a
/// longer one is refused before any count, lookup or hash.
pub const MAX_USERNAME_BYTES: usize = 254;

/// Which usernames the sign-in page, the password grant and
/// [`AuthorizationServer::add_user`](crate::AuthorizationServer::add_user) take, and what key
/// names an account: failed attempts are counted per key (so `Alice@Example.com` and
/// `alice@example.com` share one throttle), and a name that has none is refused before any
/// count, lookup or hash, with the same answer as a wrong password at the token endpoint.
///
/// Email addresses by default ([`Usernames::email`]); a host whose accounts have other names
/// gives its own rule ([`Usernames::custom`]), which its [`UserStore`](crate::store::UserStore)
/// must match (grantor's own stores keep email addresses). Whatever the rule, a name is at most
/// [`MAX_USERNAME_BYTES`] with no control character, checked before the rule runs.
///
/// ```
/// use grantor::settings::Usernames;
///
/// let email = Usernames::email();
/// assert_eq!(email.key(" Alice@Example.com ").as_deref(), Some("alice@example.com"));
/// assert_eq!(email.key("alice"), None);
///
/// // Handles of 3 to 32 letters, digits or `_`, in any case.
/// let handles = Usernames::custom("Username", |name| {
///     let ok = (3..=32).contains(&name.len())
///         && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
///     ok.then(|| name.to_ascii_lowercase())
/// });
/// assert_eq!(handles.key("Carol_1").as_deref(), Some("carol_1"));
/// assert_eq!(handles.key("carol@example.com"), None);
/// assert!(!handles.are_email());
/// ```
#[derive(Clone)]
pub struct Usernames {
    rule: Rule,
}

/// A host's rule: a name as typed to its account's key.
type KeyRule = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

#[derive(Clone)]
enum Rule {
    Email,
    Custom { label: Arc<str>, key: KeyRule },
}

impl Usernames {
    /// Email addresses (the default), one account per address in any case.
    pub fn email() -> Self {
        Self { rule: Rule::Email }
    }

    /// Names the host's `key` takes: it answers the account's key for a name as typed
    /// (trimmed of surrounding whitespace first), or `None` for a name no account can have.
    /// `label` names the field on grantor's pages (`"Username"`, `"Employee number"`).
    pub fn custom(
        label: impl Into<String>,
        key: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            rule: Rule::Custom {
                label: label.into().into(),
                key: Arc::new(key),
            },
        }
    }

    /// The key of the account `username` names, or `None` when no account can have it.
    pub fn key(&self, username: &str) -> Option<String> {
        let username = username.trim();
        if username.is_empty()
            || username.len() > MAX_USERNAME_BYTES
            || username.chars().any(char::is_control)
        {
            return None;
        }
        match &self.rule {
            Rule::Email => is_email(username).then(|| username.to_lowercase()),
            Rule::Custom { key, .. } => {
                key(username).filter(|key| !key.is_empty() && key.len() <= MAX_USERNAME_BYTES)
            }
        }
    }

    /// Whether usernames are email addresses (the pages then ask for an email address).
    pub fn are_email(&self) -> bool {
        matches!(self.rule, Rule::Email)
    }

    /// What the pages call the field: `Email` or the custom rule's label.
    pub fn label(&self) -> &str {
        match &self.rule {
            Rule::Email => "Email",
            Rule::Custom { label, .. } => label,
        }
    }
}

impl Default for Usernames {
    fn default() -> Self {
        Self::email()
    }
}

impl fmt::Debug for Usernames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rule {
            Rule::Email => f.write_str("Usernames::email()"),
            Rule::Custom { label, .. } => write!(f, "Usernames::custom({label:?}, ..)"),
        }
    }
}

/// Whether `username` looks like an email address: a local part, `@`, a domain, at least 3
/// bytes, no whitespace.
fn is_email(username: &str) -> bool {
    let Some((local, domain)) = username.rsplit_once('@') else {
        return false;
    };
    username.len() >= 3
        && !local.is_empty()
        && !domain.is_empty()
        && !username.chars().any(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_rule_runs_only_on_bounded_names() {
        let everything = Usernames::custom("Name", |name| Some(name.to_owned()));
        assert_eq!(everything.key(" carol ").as_deref(), Some("carol"));
        assert_eq!(everything.key(""), None);
        assert_eq!(everything.key("car\u{0}ol"), None);
        assert_eq!(everything.key(&"x".repeat(MAX_USERNAME_BYTES + 1)), None);
        let empty = Usernames::custom("Name", |_| Some(String::new()));
        assert_eq!(empty.key("carol"), None);
    }

    #[test]
    fn malformed_emails_have_no_key() {
        let email = Usernames::email();
        let long = format!("{}@example.com", "a".repeat(250));
        for bad in [
            "",
            "  ",
            "alice",
            "@example.com",
            "alice@",
            "a b@example.com",
            "a\u{0}@x",
            &long,
        ] {
            assert_eq!(email.key(bad), None, "{bad:?}");
        }
        assert_eq!(email.key(" Bob@Example.com "), email.key("bob@example.com"));
    }

    #[test]
    fn emails_are_keyed_as_before() {
        let email = Usernames::email();
        assert_eq!(email.key("a@b").as_deref(), Some("a@b"));
        assert_eq!(email.key("@b"), None);
        assert_eq!(email.key("a b@c"), None);
        assert_eq!(email.label(), "Email");
    }
}
