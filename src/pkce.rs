//! Proof Key for Code Exchange (RFC 7636).

use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::error::OAuthError;
use crate::secret::base64url;

/// How a `code_challenge` was derived from its `code_verifier` (RFC 7636 §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeChallengeMethod {
    /// `BASE64URL(SHA256(code_verifier))`: always offered.
    S256,
    /// The verifier itself: offered only when the host opts in with
    /// [`PkcePolicy::PlainAllowed`](crate::settings::PkcePolicy::PlainAllowed).
    Plain,
}

impl CodeChallengeMethod {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::S256 => "S256",
            Self::Plain => "plain",
        }
    }
}

/// A validated `code_challenge` with its method, bound to an authorization code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeChallenge {
    method: CodeChallengeMethod,
    challenge: String,
}

impl CodeChallenge {
    /// Validates an authorization request's `code_challenge` and `code_challenge_method`.
    ///
    /// A missing method means `plain` (RFC 7636 §4.3), which is refused unless `allow_plain`.
    pub fn new(
        challenge: &str,
        method: Option<&str>,
        allow_plain: bool,
    ) -> Result<Self, OAuthError> {
        let method = match method {
            Some("S256") => CodeChallengeMethod::S256,
            Some("plain") | None if allow_plain => CodeChallengeMethod::Plain,
            Some("plain") | None => {
                return Err(OAuthError::invalid_request(
                    "code_challenge_method must be S256",
                ));
            }
            Some(_) => {
                return Err(OAuthError::invalid_request(
                    "code_challenge_method is not supported; use S256",
                ));
            }
        };
        let well_formed = match method {
            // A SHA-256 digest in base64url without padding is always 43 characters.
            CodeChallengeMethod::S256 => {
                challenge.len() == 43
                    && challenge
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            }
            CodeChallengeMethod::Plain => is_verifier_syntax(challenge),
        };
        if !well_formed {
            return Err(OAuthError::invalid_request(
                "code_challenge is malformed (RFC 7636 section 4.2)",
            ));
        }
        Ok(Self {
            method,
            challenge: challenge.to_owned(),
        })
    }

    /// The method.
    pub fn method(&self) -> CodeChallengeMethod {
        self.method
    }

    /// The challenge string as the client sent it.
    pub fn as_str(&self) -> &str {
        &self.challenge
    }

    /// Whether `verifier` answers this challenge (RFC 7636 §4.6), compared in constant time.
    pub fn verify(&self, verifier: &str) -> bool {
        if !is_verifier_syntax(verifier) {
            return false;
        }
        let expected = match self.method {
            CodeChallengeMethod::S256 => base64url(&Sha256::digest(verifier)),
            CodeChallengeMethod::Plain => verifier.to_owned(),
        };
        expected.as_bytes().ct_eq(self.challenge.as_bytes()).into()
    }
}

/// RFC 7636 §4.1: `code-verifier = 43*128unreserved`.
pub(crate) fn is_verifier_syntax(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 7636 Appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    #[test]
    fn s256_matches_the_rfc_7636_example() {
        let challenge = CodeChallenge::new(CHALLENGE, Some("S256"), false).unwrap();
        assert!(challenge.verify(VERIFIER));
        assert!(!challenge.verify(&VERIFIER.replace('d', "e")));
        assert!(!challenge.verify("short"));
    }

    #[test]
    fn plain_only_when_allowed() {
        assert!(CodeChallenge::new(VERIFIER, None, false).is_err());
        assert!(CodeChallenge::new(VERIFIER, Some("plain"), false).is_err());
        let plain = CodeChallenge::new(VERIFIER, None, true).unwrap();
        assert_eq!(plain.method(), CodeChallengeMethod::Plain);
        assert!(plain.verify(VERIFIER));
    }

    #[test]
    fn malformed_challenges_are_refused() {
        assert!(CodeChallenge::new("abc", Some("S256"), false).is_err());
        assert!(CodeChallenge::new(&"a".repeat(44), Some("S256"), false).is_err());
        assert!(CodeChallenge::new(CHALLENGE, Some("S512"), false).is_err());
        assert!(CodeChallenge::new(&"a".repeat(129), Some("plain"), true).is_err());
    }
}
