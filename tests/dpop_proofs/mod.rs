//! A DPoP client's side, for the tests (RFC 9449 §4): keys, and proofs signed with them.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// A client's proof key: private for signing, its public JWK for the proof's header.
pub struct ProofKey {
    pub algorithm: Algorithm,
    encoding: EncodingKey,
    pub jwk: Jwk,
}

impl ProofKey {
    /// A P-256 key from `seed` (any byte but 0: the scalar must be below the group order).
    pub fn es256(seed: u8) -> Self {
        use p256::pkcs8::EncodePrivateKey as _;
        let secret = p256::SecretKey::from_slice(&[seed; 32]).unwrap();
        let der = secret.to_pkcs8_der().unwrap();
        Self::new(Algorithm::ES256, EncodingKey::from_ec_der(der.as_bytes()))
    }

    /// An Ed25519 key from `seed`.
    pub fn eddsa(seed: u8) -> Self {
        use ed25519_dalek::pkcs8::EncodePrivateKey as _;
        let key = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
        let der = key.to_pkcs8_der().unwrap();
        let x = URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes());
        let jwk = json!({ "kty": "OKP", "crv": "Ed25519", "x": x });
        Self {
            algorithm: Algorithm::EdDSA,
            encoding: EncodingKey::from_ed_der(der.as_bytes()),
            jwk: serde_json::from_value(jwk).unwrap(),
        }
    }

    /// The RSA-2048 test key, for RS256 (or PS256) proofs.
    pub fn rsa(algorithm: Algorithm) -> Self {
        let pem = include_bytes!("../keys/rs256-test-only.pem");
        Self::new(algorithm, EncodingKey::from_rsa_pem(pem).unwrap())
    }

    fn new(algorithm: Algorithm, encoding: EncodingKey) -> Self {
        let jwk = Jwk::from_encoding_key(&encoding, algorithm).unwrap();
        Self {
            algorithm,
            encoding,
            jwk,
        }
    }

    /// The key's SHA-256 JWK thumbprint (RFC 7638), as `cnf.jkt` carries it.
    pub fn jkt(&self) -> String {
        self.jwk.thumbprint(ThumbprintHash::SHA256).unwrap()
    }

    /// A proof for `method` at `url`, issued at `iat`.
    pub fn proof(&self, method: &str, url: &str, iat: u64) -> String {
        self.sign(&claims(method, url, iat))
    }

    /// A proof for a resource request carrying `access_token`.
    pub fn proof_for_token(&self, method: &str, url: &str, iat: u64, access_token: &str) -> String {
        let mut claims = claims(method, url, iat);
        claims["ath"] = json!(ath(access_token));
        self.sign(&claims)
    }

    /// `claims` signed with a proof's header (`typ: dpop+jwt`, `jwk`).
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_with(claims, |_| {})
    }

    /// A proof for `method` at `url` whose header names the algorithm `alg` (say `Ed25519`,
    /// RFC 9864's name for what `jsonwebtoken` calls EdDSA), signed with this key.
    pub fn proof_named(&self, alg: &str, method: &str, url: &str, iat: u64) -> String {
        self.sign_named(alg, &claims(method, url, iat))
    }

    /// `claims` signed under a header written by hand, naming `alg`.
    pub fn sign_named(&self, alg: &str, claims: &Value) -> String {
        let header = json!({ "typ": "dpop+jwt", "alg": alg, "jwk": self.jwk });
        self.sign_header(&header, claims)
    }

    /// `claims` signed with this key under `header` exactly as given.
    pub fn sign_header(&self, header: &Value, claims: &Value) -> String {
        let part = |value: &Value| URL_SAFE_NO_PAD.encode(value.to_string());
        let signed = format!("{}.{}", part(header), part(claims));
        let signature =
            jsonwebtoken::crypto::sign(signed.as_bytes(), &self.encoding, self.algorithm).unwrap();
        format!("{signed}.{signature}")
    }

    /// `claims` signed with a proof's header as `edit` leaves it.
    pub fn sign_with(&self, claims: &Value, edit: impl FnOnce(&mut Header)) -> String {
        let mut header = Header::new(self.algorithm);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        edit(&mut header);
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

/// A proof's claims: a fresh `jti`, `htm`, `htu` and `iat`.
pub fn claims(method: &str, url: &str, iat: u64) -> Value {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let jti = format!(
        "proof-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    json!({ "jti": jti, "htm": method, "htu": url, "iat": iat })
}

/// `ath`: the access token's SHA-256 hash in base64url (RFC 9449 §4.2).
pub fn ath(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// A compact JWS made of `header` and `claims` as given, with a junk signature: for what must
/// be refused before any signature is checked.
pub fn unsigned(header: &Value, claims: &Value) -> String {
    let part = |value: &Value| URL_SAFE_NO_PAD.encode(value.to_string());
    format!(
        "{}.{}.{}",
        part(header),
        part(claims),
        URL_SAFE_NO_PAD.encode(b"signature")
    )
}
