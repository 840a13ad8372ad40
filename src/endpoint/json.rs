//! JSON bodies: the token response (RFC 6749 §5.1) and introspection (RFC 7662 §2.2), written
//! directly, and the writer they share.

use crate::audience::Audience;
use crate::grant::issue::{self, Issued};
use crate::grant::lookup::Found;
use crate::store::{Actor, Authorization, TokenBinding};

/// The token endpoint's success body, members in the order RFC 6749 §5.1 lists them, with the
/// spec's `jti`.
pub(crate) fn token_response(issued: &Issued) -> String {
    let access_token = issued.access_token();
    let refresh_token = issued.refresh_token();
    let refresh_len = refresh_token.map_or(0, |t| t.len() + 20);
    let capacity =
        96 + access_token.len() + issued.jti.as_str().len() + issued.scope.as_str().len();
    let mut json = JsonObject::with_capacity(capacity + refresh_len + 64);
    json.string("access_token", access_token);
    if let Some(issued_token_type) = issued.issued_token_type {
        // RFC 8693 §2.2.1: the type of what token exchange issued.
        json.string("issued_token_type", issued_token_type);
    }
    json.string("token_type", issued.token_type)
        .number("expires_in", issued.expires_in)
        .string("jti", issued.jti.as_str())
        .string("scope", issued.scope.as_str());
    if let Some(refresh_token) = refresh_token {
        json.string("refresh_token", refresh_token);
    }
    if let Some(id_token) = &issued.id_token {
        // OIDC Core §3.1.3.3.
        json.string("id_token", id_token);
    }
    json.finish()
}

/// An active token's description (RFC 7662 §2.2).
pub(crate) fn introspection(found: &Found, issuer: &str, default: &Audience) -> String {
    let actor = match found {
        Found::Access(grant) => grant.actor.as_ref(),
        Found::Refresh(_) => None,
    };
    let (authorization, token_type, iat, exp, jti, binding) = match found {
        Found::Access(grant) => (
            &grant.authorization,
            issue::token_type(grant.binding),
            grant.issued_at,
            grant.expires_at,
            Some(grant.jti().as_str()),
            grant.binding,
        ),
        Found::Refresh(grant) => (
            &grant.authorization,
            "refresh_token",
            grant.issued_at,
            grant.expires_at,
            None,
            grant.binding,
        ),
    };
    let Authorization {
        client_id,
        user,
        scope,
        ..
    } = authorization;
    let mut json = JsonObject::with_capacity(256);
    json.boolean("active", true)
        .string("scope", scope.as_str())
        .string("client_id", client_id.as_str());
    if let Some(user) = user {
        json.string("username", user.username());
    }
    json.string("token_type", token_type)
        .number("exp", exp.as_secs())
        .number("iat", iat.as_secs())
        // Without a user the client is its own resource owner (client credentials).
        .string(
            "sub",
            user.as_ref()
                .map_or(client_id.as_str(), |u| u.id().as_str()),
        );
    if let Some(jti) = jti {
        json.string("jti", jti);
    }
    json.audience("aud", authorization.audience.or(default))
        .string("iss", issuer);
    if let Some(signed_in) = &authorization.authentication {
        // RFC 9470 §6.2 (members RFC 7662 §2.2 allows): when and how the user signed in, for
        // a resource that demands a fresh or strong sign-in.
        json.number("auth_time", signed_in.auth_time().as_secs());
        if let Some(acr) = signed_in.acr() {
            json.string("acr", acr);
        }
    }
    if let Some(binding) = binding {
        // RFC 9449 §6.2, RFC 8705 §3.2: the confirmation of a bound token.
        json.confirmation(&binding);
    }
    if let Some(actor) = actor {
        // RFC 8693 §4.1, which RFC 7662 §2.2 allows as any claim of the token.
        json.actor(actor);
    }
    json.finish()
}

/// A JSON object written member by member into one buffer sized up front: the hot answers
/// (token responses) skip serde's generic machinery and its string escaping, since their values
/// almost never need escaping.
pub(crate) struct JsonObject(String);

impl JsonObject {
    /// An object whose text is expected to take about `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut text = String::with_capacity(capacity);
        text.push('{');
        Self(text)
    }

    /// `name` is a member name of grantor's own: plain ASCII, nothing to escape.
    fn name(&mut self, name: &'static str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        self.0.push('"');
        self.0.push_str(name);
        self.0.push_str("\":");
    }

    /// A string member, escaped as JSON requires.
    pub(crate) fn string(&mut self, name: &'static str, value: &str) -> &mut Self {
        self.name(name);
        // One pass without early exit (vectorized) over values that almost never need escapes.
        let mut escapes = 0u8;
        for &b in value.as_bytes() {
            escapes |= u8::from(b < 0x20) | u8::from(b == b'"') | u8::from(b == b'\\');
        }
        if escapes == 0 {
            self.0.push('"');
            self.0.push_str(value);
            self.0.push('"');
        } else {
            // Serializing a string cannot fail.
            let escaped = serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_owned());
            self.0.push_str(&escaped);
        }
        self
    }

    /// An audience (RFC 7519 §4.1.3): one resource as a string, several as an array.
    pub(crate) fn audience(&mut self, name: &'static str, audience: &Audience) -> &mut Self {
        let mut resources = audience.iter();
        match (resources.next(), resources.next()) {
            (Some(only), None) => self.string(name, only),
            _ => {
                self.name(name);
                // Serializing a list of strings cannot fail; serde escapes any '"'.
                let list: Vec<&str> = audience.iter().collect();
                let text = serde_json::to_string(&list).unwrap_or_else(|_| "[]".to_owned());
                self.0.push_str(&text);
                self
            }
        }
    }

    /// `act`, the actor of a token issued by delegation (RFC 8693 §4.1), nested as it nests.
    pub(crate) fn actor(&mut self, actor: &Actor) -> &mut Self {
        self.name("act");
        // Nested strings cannot fail to serialize; serde escapes what they hold.
        self.0
            .push_str(&serde_json::to_string(actor).unwrap_or_else(|_| "null".to_owned()));
        self
    }

    /// `cnf` with the thumbprint of what a token is bound to (RFC 7800 §3.1): a DPoP key's
    /// as `jkt` (RFC 9449 §6), a client certificate's as `x5t#S256` (RFC 8705 §3.1).
    pub(crate) fn confirmation(&mut self, binding: &TokenBinding) -> &mut Self {
        self.name("cnf");
        // base64url thumbprints: nothing to escape.
        match binding {
            TokenBinding::Dpop(jkt) => {
                self.0.push_str("{\"jkt\":\"");
                self.0.push_str(&jkt.to_string());
            }
            TokenBinding::Certificate(thumbprint) => {
                self.0.push_str("{\"x5t#S256\":\"");
                self.0.push_str(&thumbprint.to_string());
            }
        }
        self.0.push_str("\"}");
        self
    }

    /// A non-negative integer member.
    pub(crate) fn number(&mut self, name: &'static str, value: u64) -> &mut Self {
        self.name(name);
        self.0.push_str(itoa::Buffer::new().format(value));
        self
    }

    /// A boolean member.
    pub(crate) fn boolean(&mut self, name: &'static str, value: bool) -> &mut Self {
        self.name(name);
        self.0.push_str(if value { "true" } else { "false" });
        self
    }

    /// The object's text.
    pub(crate) fn finish(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_objects_match_serde() {
        let mut object = JsonObject::with_capacity(8);
        object
            .string("plain", "abc-_~ %")
            .string("escaped", "a\"b\\c\n\u{1}\u{e9}")
            .number("zero", 0)
            .number("max", u64::MAX)
            .boolean("yes", true)
            .boolean("no", false);
        let text = object.finish();
        let expected = serde_json::json!({
            "plain": "abc-_~ %",
            "escaped": "a\"b\\c\n\u{1}\u{e9}",
            "zero": 0,
            "max": u64::MAX,
            "yes": true,
            "no": false,
        });
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, expected);
        assert!(
            text.starts_with(r#"{"plain":"abc-_~ %","escaped":"#),
            "{text}"
        );
        assert_eq!(JsonObject::with_capacity(0).finish(), "{}");
    }
}
