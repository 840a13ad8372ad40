//! The signature algorithms grantor signs with: plain names, so that settings, client
//! registrations and metadata can speak of them without the signing feature compiled in.

/// The algorithms grantor signs JWTs with (RFC 7518 §3.1, RFC 8037 §3.1): access tokens
/// (RFC 9068), ID tokens (OpenID Connect) and logout tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// Ed25519 (`EdDSA`): small, fast, deterministic.
    EdDSA,
    /// ECDSA on P-256 with SHA-256 (`ES256`).
    ES256,
    /// RSASSA-PKCS1-v1_5 with SHA-256 (`RS256`): the algorithm every OpenID Connect relying
    /// party must accept (OIDC Core §15.1), and the one some resource servers know alone.
    /// grantor generates 2048-bit keys (about a tenth of a second each); keys can also be
    /// imported from PEM.
    RS256,
}

impl SigningAlgorithm {
    /// Every algorithm, RS256 first.
    pub const ALL: [SigningAlgorithm; 3] = [Self::RS256, Self::ES256, Self::EdDSA];

    /// The `alg` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EdDSA => "EdDSA",
            Self::ES256 => "ES256",
            Self::RS256 => "RS256",
        }
    }

    /// The algorithm whose `alg` value is `alg` (`Ed25519`, RFC 9864's name for EdDSA on
    /// Ed25519, included).
    pub fn from_name(alg: &str) -> Option<Self> {
        match alg {
            "EdDSA" | "Ed25519" => Some(Self::EdDSA),
            "ES256" => Some(Self::ES256),
            "RS256" => Some(Self::RS256),
            _ => None,
        }
    }
}

/// The algorithms grantor verifies what clients sign with (request objects, RFC 9101 §10.2
/// `request_object_signing_alg`): asymmetric only, never `none` nor a symmetric one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum ClientSigningAlgorithm {
    /// Ed25519 (`EdDSA`).
    EdDSA,
    /// ECDSA on P-256 with SHA-256 (`ES256`).
    ES256,
    /// RSASSA-PKCS1-v1_5 with SHA-256 (`RS256`).
    RS256,
    /// RSASSA-PSS with SHA-256 (`PS256`).
    PS256,
}

impl ClientSigningAlgorithm {
    /// Every algorithm, as the metadata lists them.
    pub const ALL: [ClientSigningAlgorithm; 4] =
        [Self::RS256, Self::PS256, Self::ES256, Self::EdDSA];

    /// The `alg` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EdDSA => "EdDSA",
            Self::ES256 => "ES256",
            Self::RS256 => "RS256",
            Self::PS256 => "PS256",
        }
    }

    /// The algorithm whose `alg` value is `alg`.
    pub fn from_name(alg: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|known| known.as_str() == alg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for algorithm in SigningAlgorithm::ALL {
            assert_eq!(
                SigningAlgorithm::from_name(algorithm.as_str()),
                Some(algorithm)
            );
        }
        assert_eq!(
            SigningAlgorithm::from_name("Ed25519"),
            Some(SigningAlgorithm::EdDSA)
        );
        assert_eq!(SigningAlgorithm::from_name("HS256"), None);
        assert_eq!(SigningAlgorithm::from_name("none"), None);
        for algorithm in ClientSigningAlgorithm::ALL {
            assert_eq!(
                ClientSigningAlgorithm::from_name(algorithm.as_str()),
                Some(algorithm)
            );
        }
        assert_eq!(ClientSigningAlgorithm::from_name("HS256"), None);
    }
}
