//! Every name grantor keeps state under, in one place, with what bounds it.
//!
//! Keys are ASCII that grantor builds; whatever a client sends (a `jti`, a reference, a client
//! id, a username) enters a key only as a fixed-length SHA-256 digest, so no key is longer than
//! 128 bytes and no two namespaces collide. The bounds below are what an unauthenticated or
//! self-registered party can make the server keep in each; on top of them, the in-memory store
//! caps each table ([`MemoryStore::MAX_SINGLE_USE`](crate::MemoryStore::MAX_SINGLE_USE),
//! [`MAX_COUNTED_KEYS`](crate::MemoryStore::MAX_COUNTED_KEYS),
//! [`MAX_KEYS`](crate::MemoryStore::MAX_KEYS)), SQL stores bound each kind of one-time value
//! ([`SINGLE_USE_PER_KIND`](super::SINGLE_USE_PER_KIND) rows,
//! [`SINGLE_USE_BYTES_PER_KIND`](super::SINGLE_USE_BYTES_PER_KIND) bytes) and drop what
//! expired at [`Purge::purge_expired`](super::Purge::purge_expired). A one-time value made for
//! a client of a tier anyone can make is a kind of its own (`-self`, `-doc`), so a full kind
//! refuses that tier alone.
//!
//! **One-time values** ([`SingleUseStore`](super::SingleUseStore)):
//!
//! | name | holds | kept until | made by | bound |
//! |---|---|---|---|---|
//! | `grantor:signed-in:<digest of the form>` | nothing | the form expires | a correct password (or second-factor code, or the host's finished sign-in) on a sealed sign-in form | one per successful step |
//! | `grantor:otp:<digest of user id and step>` | nothing | ten minutes | a second-factor code the host's factor accepted | one per accepted code |
//! | `grantor:assertion:<digest of client id and jti>` (`assertion-self`, `assertion-doc` for those tiers) | nothing | the assertion's `exp` | a `private_key_jwt` assertion whose signature verified | per client, and per tier for the tiers anyone can make (`client_assertion::ASSERTIONS_PER_CLIENT`, `ASSERTIONS_SELF_REGISTERED`) |
//! | `grantor:dpop:<digest of key and jti>` (`dpop-self`, `dpop-doc`; `dpop-api` at resources) | nothing | the proof's window | a DPoP proof whose signature verified | per key (`dpop::PROOFS_PER_KEY_PER_SECOND`), per tier at the token and PAR endpoints (`dpop::PROOFS_PER_POOL`), per account at resources |
//! | `grantor:grant-assertion:<digest of issuer and jti>` | nothing | the assertion's `exp` (≤ 5 min) | a trusted issuer's assertion whose signature verified (the JWT-bearer grant) | per issuer (`TrustedIssuer::assertions_per_window`, at most 5,000 per 6 minutes), at most 16 issuers |
//! | `grantor:request-object:<digest of client id and jti>` (`request-object-self`, `request-object-doc`) | nothing | the object's `exp` (≤ 61 min) | a request object whose signature verified, with a `jti` | per client, and per tier for the tiers anyone can make (10 000 and 20 000 per 61 minutes) |
//! | `grantor:par:<digest of the reference>` (`par-self`, `par-doc`: the reference's mark says which) | the pushed request (a `state` of at most 2 KiB of VSCHAR) | its lifetime (≤ 10 min) | an authenticated push | each client's push quota (a public client's also per caller network), and per tier for the tiers anyone can make |
//! | `grantor:par-visited:<digest of the reference>` (`par-visited-self`, `par-visited-doc`) | the pushed request, moved from `grantor:par:` when a browser first visits its `request_uri` | the authorization request's lifetime from the push (default 10 min) | a visit to the authorization endpoint with a live `request_uri`; taken when the sign-in is answered | per client and per tier for the tiers anyone can make, the push quotas' numbers in each authorization request lifetime (`par-visit` below) |
//! | `grantor:device:<device code digest>` | the flow | twice the flow lifetime | a device authorization | the per-client start quota |
//! | `grantor:user-code:<user code digest>` | the device code digest | the flow lifetime | a device authorization | as above |
//! | `grantor:device-answer:<device code digest>` | the user's decision | twice the flow lifetime | a signed-in user's decision | one per flow |
//!
//! **Attempt counters** ([`AttemptCounter`](super::AttemptCounter)), each a count and a window:
//!
//! | name | counts | window | bound |
//! |---|---|---|---|
//! | `signin:<digest of the username>` | failed passwords for one account | the sign-in throttle's | one per username tried (unknown ones too) |
//! | `otp:<digest of the user id>` | second-factor codes tried for one account | the second factor's throttle | one per account whose password was right |
//! | `client:<digest of the client id>`, `client-net:<digest of client id and caller network>` | failed client secrets (per caller network when the host hands the address over) | the client throttle's | one per client and network that failed |
//! | `par:<digest of the client id>` | pushes of one client | the push lifetime | one per client that pushed |
//! | `par-net:<digest of client id and network>` | pushes of one public client from one caller network | the push lifetime | one per public client and network |
//! | `par:*`, `par:doc` | pushes of every self-registered client, of every document client | the push lifetime | two |
//! | `par-visit:<digest of the client id>` | pushed requests of one client a browser visited first (each then waits for its sign-in) | the authorization request lifetime | one per client whose request was visited |
//! | `par-visit:*`, `par-visit:doc` | the same of every self-registered client, of every document client | the authorization request lifetime | two |
//! | `assertion:<digest of the client id>` | client assertions one client spent | six minutes | one per client whose assertion verified |
//! | `assertion:*`, `assertion:doc` | client assertions every self-registered client, every document client spent | six minutes | two |
//! | `request-object:<digest of the client id>` | request objects' `jti`s one client spent | 61 minutes | one per client whose object verified |
//! | `request-object:*`, `request-object:doc` | request objects' `jti`s every self-registered client, every document client spent | 61 minutes | two |
//! | `grant-assertion:<digest of the issuer>` | assertions one trusted issuer's `jti`s spent | six minutes | one per trusted issuer |
//! | `dpop:<digest of the key's thumbprint>` | DPoP proofs one key signed | the proof window | one per key whose proof verified |
//! | `dpop-client:*`, `dpop-client:doc` | DPoP proofs at the token and PAR endpoints of every self-registered client, every document client | the proof window | two |
//! | `dpop-account:<digest of the account>` | DPoP proofs one account's tokens carried to resources | the proof window | one per account with a bound token |
//! | `device:<digest of the client id>`, `device-net:<…>` | device flows one client started (a public client's also per caller network) | the flow lifetime | one per client, and per public client and network |
//! | `device:*`, `device:doc` | device flows of every self-registered client, every document client | the flow lifetime | two |
//! | `device-poll:<device code digest>`, `device-slow:<…>` | a device's polls | the poll interval | two per live flow |
//! | `device-user-code-guesses` | wrong user codes of people not signed in, server-wide | a minute | one |
//! | `device-guesses:<digest of the user id>` | wrong user codes of one signed-in account | a minute | one per account that signed in on the device page |
//! | `grantor:register` | self-registrations, server-wide | the registration window | one |
//!
//! **Key material** ([`KeyStore`](super::KeyStore), secret at rest):
//!
//! | name | holds | kept for | bound |
//! |---|---|---|---|
//! | `grantor:seal:<UTC day>` | the key that seals sign-in forms | three days | one per day |
//! | `grantor:jwk:<alg>:<period>` | a JWT signing key pair | its rotation period and the overlap | a few per algorithm |
//! | `grantor:jwk:<alg>:<period>.<n>` | the key pair an administrator's early rotation made (`grantor keys rotate`), signing in place of the period's | three periods from the rotation | [`MAX_EARLY_ROTATIONS`] per algorithm and period |
//! | `grantor:dpop-nonce:<period>` | a DPoP nonce | two nonce periods | one per period |
//!
//! Sign-in sessions ([`SessionStore`](super::SessionStore)) are keyed by the digest of their
//! id, made only after a correct password, at most one per sign-in.

use crate::client::ClientTier;
use crate::id::{ClientId, JwkThumbprint, UserId};
use crate::secret::{SecretDigest, base64url};

/// `<prefix>` and the base64url SHA-256 digest of `text`: a fixed 43 bytes after the prefix.
fn digested(prefix: &str, text: &str) -> String {
    let digest = SecretDigest::of(text);
    let mut key = String::with_capacity(prefix.len() + 43);
    key.push_str(prefix);
    key.push_str(&base64url(digest.as_bytes()));
    key
}

// One-time values.

/// The mark that a sealed sign-in form has served its sign-in.
pub(crate) fn signed_in_form(form: &str) -> String {
    digested("grantor:signed-in:", form)
}

/// The suffix of a one-time value's kind for what clients of `tier` made: each tier's values
/// are a kind of their own, which a store bounds apart.
fn tier_kind(tier: ClientTier) -> &'static str {
    match tier {
        ClientTier::Administered => "",
        ClientTier::SelfRegistered => "-self",
        ClientTier::MetadataDocument => "-doc",
    }
}

/// A verified client assertion's `jti`, per client, kept with its client tier's.
#[allow(dead_code, reason = "used by feature private-key-jwt")]
pub(crate) fn client_assertion(tier: ClientTier, client: &ClientId, jti: &str) -> String {
    let prefix = format!("grantor:assertion{}:", tier_kind(tier));
    digested(&prefix, &format!("{client}\n{jti}"))
}

/// A trusted issuer's verified assertion's `jti` (the JWT-bearer grant, RFC 7523), per issuer.
#[allow(dead_code, reason = "used by feature private-key-jwt")]
pub(crate) fn grant_assertion(issuer: &str, jti: &str) -> String {
    digested("grantor:grant-assertion:", &format!("{issuer}\n{jti}"))
}

/// The count of a trusted issuer's spent assertions.
#[allow(dead_code, reason = "used by feature private-key-jwt")]
pub(crate) fn issuer_assertions(issuer: &str) -> String {
    digested("grant-assertion:", issuer)
}

/// A verified request object's `jti` (RFC 9101), per client, kept with its client tier's.
pub(crate) fn request_object(tier: ClientTier, client: &ClientId, jti: &str) -> String {
    let prefix = format!("grantor:request-object{}:", tier_kind(tier));
    digested(&prefix, &format!("{client}\n{jti}"))
}

/// A verified DPoP proof's `jti`, per key (its thumbprint): spent at the token or PAR
/// endpoint for a client of `tier`, or at a resource (`None`), each a kind of its own.
#[allow(dead_code, reason = "used by feature dpop")]
pub(crate) fn dpop_proof(tier: Option<ClientTier>, jkt: &JwkThumbprint, jti: &str) -> String {
    let prefix = match tier {
        Some(tier) => format!("grantor:dpop{}:", tier_kind(tier)),
        None => "grantor:dpop-api:".to_owned(),
    };
    digested(&prefix, &format!("{jkt}.{jti}"))
}

/// The mark a pushed request's reference starts with for a client of `tier` (none for an
/// administrator's), so that its redemption finds the kind it is kept under.
pub(crate) fn pushed_reference_mark(tier: ClientTier) -> &'static str {
    match tier {
        ClientTier::Administered => "",
        ClientTier::SelfRegistered => "s.",
        ClientTier::MetadataDocument => "d.",
    }
}

/// A pushed request, by the reference in its `request_uri`, kept with its client tier's (the
/// reference's mark says which).
pub(crate) fn pushed_request(reference: &str) -> String {
    marked("par", reference)
}

/// A pushed request whose `request_uri` a browser has visited, kept until the sign-in it
/// started is answered (the reference's mark says the tier, as for [`pushed_request`]).
pub(crate) fn visited_pushed_request(reference: &str) -> String {
    marked("par-visited", reference)
}

/// `reference` under `kind`, or under the kind of its tier when its mark names one
/// ([`pushed_reference_mark`]).
fn marked(kind: &str, reference: &str) -> String {
    let tier = if reference.starts_with("s.") {
        "-self"
    } else if reference.starts_with("d.") {
        "-doc"
    } else {
        ""
    };
    digested(&format!("grantor:{kind}{tier}:"), reference)
}

/// A device flow, by its device code's digest (already fixed-length).
pub(crate) fn device_flow(device: &str) -> String {
    format!("grantor:device:{device}")
}

/// The user's answer to a device flow, by its device code's digest.
pub(crate) fn device_answer(device: &str) -> String {
    format!("grantor:device-answer:{device}")
}

/// The device flow a user code leads to, by the user code's digest.
pub(crate) fn user_code(user_code: &str) -> String {
    format!("grantor:user-code:{user_code}")
}

// Attempt counters.

/// Failed sign-ins of the account named `username` (trimmed and lowercased by the caller).
pub(crate) fn sign_in_failures(username: &str) -> String {
    digested("signin:", username)
}

/// Second-factor codes tried for one account (counted only after its password was right).
pub(crate) fn second_factor_attempts(user: &UserId) -> String {
    digested("otp:", user.as_str())
}

/// A second-factor code the host's factor accepted: `step` names it (RFC 6238 §5.2: never
/// accepted again).
pub(crate) fn second_factor_code(user: &UserId, step: u64) -> String {
    digested("grantor:otp:", &format!("{user}\n{step}"))
}

/// Failed client authentications of one client, from one caller network when the host
/// handed the caller's address over (`network`).
pub(crate) fn client_failures(client: &ClientId, network: Option<&str>) -> String {
    match network {
        None => digested("client:", client.as_str()),
        Some(network) => digested("client-net:", &format!("{client}\n{network}")),
    }
}

/// What one client spent of the budget whose counters start with `prefix`
/// ([`budget`](crate::budget): `par`, `assertion`, `device`, `dpop-client`).
pub(crate) fn client_spent(prefix: &str, client: &ClientId) -> String {
    let mut named = String::with_capacity(prefix.len() + 1);
    named.push_str(prefix);
    named.push(':');
    digested(&named, client.as_str())
}

/// What callers of one network spent of a public client's budget under `prefix`.
pub(crate) fn network_spent(prefix: &str, client: &ClientId, network: &str) -> String {
    digested(&format!("{prefix}-net:"), &format!("{client}\n{network}"))
}

/// Requests one client pushed.
#[cfg(test)]
pub(crate) fn client_pushes(client: &ClientId) -> String {
    client_spent("par", client)
}

/// The pools a tier of clients shares, one per budget and tier ([`budget`](crate::budget)):
/// `*` all self-registered clients, `doc` all clients read from metadata documents.
pub(crate) const POOLS: [&str; 12] = [
    "par:*",
    "par:doc",
    "par-visit:*",
    "par-visit:doc",
    "assertion:*",
    "assertion:doc",
    "device:*",
    "device:doc",
    "dpop-client:*",
    "dpop-client:doc",
    "request-object:*",
    "request-object:doc",
];

/// DPoP proofs one key (its thumbprint) signed.
#[allow(dead_code, reason = "used by feature dpop")]
pub(crate) fn key_proofs(jkt: &JwkThumbprint) -> String {
    digested("dpop:", &jkt.to_string())
}

/// DPoP proofs one account's tokens carried to resources (every key of its together).
#[allow(dead_code, reason = "used by feature dpop")]
pub(crate) fn account_proofs(account: &str) -> String {
    digested("dpop-account:", account)
}

/// A device's polls in its current interval.
pub(crate) fn device_polls(device: &str) -> String {
    format!("device-poll:{device}")
}

/// A device told to slow down, until its slower interval has passed.
pub(crate) fn device_slowed(device: &str) -> String {
    format!("device-slow:{device}")
}

/// Wrong user codes entered by one signed-in account.
pub(crate) fn account_user_code_guesses(user: &UserId) -> String {
    digested("device-guesses:", user.as_str())
}

/// Wrong user codes entered anywhere by people not signed in.
pub(crate) const USER_CODE_GUESSES: &str = "device-user-code-guesses";

/// Self-registrations on every node.
pub(crate) const REGISTRATIONS: &str = "grantor:register";

/// Whether `key` names one of the server-wide counters above: a fixed handful, which a store
/// that forgets counters under pressure must never forget (forgetting one resets a limit for
/// everybody).
pub(crate) fn is_server_wide(key: &str) -> bool {
    POOLS.contains(&key) || [USER_CODE_GUESSES, REGISTRATIONS].contains(&key)
}

/// The kind of one-time value or key material `key` names (`par` for
/// `grantor:par:<digest>`), one of a fixed set; `other` for any name grantor does not make. A
/// store that bounds what it keeps bounds each kind apart, so filling one kind refuses no
/// other.
pub(crate) fn kind(key: &str) -> &'static str {
    const KINDS: [&str; 23] = [
        "signed-in",
        "assertion",
        "assertion-self",
        "assertion-doc",
        "dpop",
        "dpop-self",
        "dpop-doc",
        "dpop-api",
        "request-object",
        "request-object-self",
        "request-object-doc",
        "par",
        "par-self",
        "par-doc",
        "par-visited",
        "par-visited-self",
        "par-visited-doc",
        "device",
        "user-code",
        "device-answer",
        "seal",
        "jwk",
        "dpop-nonce",
    ];
    let named = key
        .strip_prefix("grantor:")
        .and_then(|rest| rest.split_once(':'))
        .map(|(kind, _)| kind);
    KINDS
        .into_iter()
        .find(|kind| Some(*kind) == named)
        .unwrap_or("other")
}

// Key material.

/// The key that seals sign-in forms on UTC day `day` (days since the epoch).
pub(crate) fn seal_key(day: u64) -> String {
    format!("grantor:seal:{day}")
}

/// The JWT signing key of `algorithm` for rotation period `period`.
#[allow(dead_code, reason = "used by feature jwt")]
pub(crate) fn signing_key(algorithm: &str, period: u64) -> String {
    format!("grantor:jwk:{algorithm}:{period}")
}

/// The key that replaced the JWT signing key of `algorithm` for period `period` when an
/// administrator rotated it early (`grantor keys rotate`), the `generation`th time in that
/// period (1 to [`MAX_EARLY_ROTATIONS`]); generation 0 is [`signing_key`]'s name.
#[allow(dead_code, reason = "used by feature jwt")]
pub(crate) fn rotated_signing_key(algorithm: &str, period: u64, generation: usize) -> String {
    match generation {
        0 => signing_key(algorithm, period),
        _ => format!("grantor:jwk:{algorithm}:{period}.{generation}"),
    }
}

/// The most early rotations of one algorithm's signing key in one rotation period: what bounds
/// the keys a JWKS document publishes (three periods' worth, each at most this many plus one).
pub const MAX_EARLY_ROTATIONS: usize = 8;

/// The DPoP nonce of nonce period `period`.
#[allow(dead_code, reason = "used by feature dpop")]
pub(crate) fn dpop_nonce(period: u64) -> String {
    format!("grantor:dpop-nonce:{period}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_client_sends_enters_a_key_only_as_a_fixed_length_digest() {
        let client = ClientId::new("c".repeat(200)).unwrap();
        let long = "j".repeat(4096);
        for key in [
            client_assertion(ClientTier::MetadataDocument, &client, &long),
            dpop_proof(None, &JwkThumbprint::from_bytes([7; 32]), &long),
            pushed_request(&long),
            visited_pushed_request(&format!("d.{long}")),
            signed_in_form(&long),
            sign_in_failures(&long),
            client_failures(&client, Some(&long)),
            client_pushes(&client),
            network_spent("device", &client, &long),
        ] {
            assert!(key.len() <= 72, "{key}");
            assert!(!key.contains("jjjj") && !key.contains("cccc"), "{key}");
        }
    }

    #[test]
    fn every_one_time_value_and_key_has_a_kind_of_its_own() {
        let client = ClientId::new("c").unwrap();
        let jkt = JwkThumbprint::from_bytes([7; 32]);
        let named = [
            (signed_in_form("f"), "signed-in"),
            (
                client_assertion(ClientTier::Administered, &client, "j"),
                "assertion",
            ),
            (
                client_assertion(ClientTier::SelfRegistered, &client, "j"),
                "assertion-self",
            ),
            (
                client_assertion(ClientTier::MetadataDocument, &client, "j"),
                "assertion-doc",
            ),
            (
                dpop_proof(Some(ClientTier::Administered), &jkt, "j"),
                "dpop",
            ),
            (
                dpop_proof(Some(ClientTier::SelfRegistered), &jkt, "j"),
                "dpop-self",
            ),
            (
                dpop_proof(Some(ClientTier::MetadataDocument), &jkt, "j"),
                "dpop-doc",
            ),
            (dpop_proof(None, &jkt, "j"), "dpop-api"),
            (
                request_object(ClientTier::Administered, &client, "j"),
                "request-object",
            ),
            (
                request_object(ClientTier::SelfRegistered, &client, "j"),
                "request-object-self",
            ),
            (
                request_object(ClientTier::MetadataDocument, &client, "j"),
                "request-object-doc",
            ),
            (pushed_request("r"), "par"),
            (pushed_request("s.r"), "par-self"),
            (pushed_request("d.r"), "par-doc"),
            (visited_pushed_request("r"), "par-visited"),
            (visited_pushed_request("s.r"), "par-visited-self"),
            (visited_pushed_request("d.r"), "par-visited-doc"),
            (device_flow("d"), "device"),
            (device_answer("d"), "device-answer"),
            (user_code("u"), "user-code"),
            (seal_key(1), "seal"),
            (signing_key("ES256", 1), "jwk"),
            (dpop_nonce(1), "dpop-nonce"),
            ("host:thing".to_owned(), "other"),
            ("grantor:unheard-of:x".to_owned(), "other"),
        ];
        for (key, kind) in named {
            assert_eq!(super::kind(&key), kind, "{key}");
        }
    }

    #[test]
    fn keys_already_in_stores_keep_their_names() {
        // Names written by earlier versions must still be found after an upgrade.
        let digest = base64url(SecretDigest::of("r").as_bytes());
        assert_eq!(pushed_request("r"), format!("grantor:par:{digest}"));
        assert_eq!(seal_key(20_000), "grantor:seal:20000");
        assert_eq!(signing_key("ES256", 7), "grantor:jwk:ES256:7");
        assert_eq!(dpop_nonce(3), "grantor:dpop-nonce:3");
        let client = ClientId::new("demo").unwrap();
        let digest = base64url(SecretDigest::of("demo").as_bytes());
        assert_eq!(client_pushes(&client), format!("par:{digest}"));
    }
}
