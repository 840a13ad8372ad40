//! RFC 9068 JWT access tokens (feature `jwt`): what is signed, the JWKS document, verification
//! with the JWKS alone, key rotation, and bearer validation that refuses every bad token.

mod common;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use grantor::clock::*;
use grantor::jwt::*;
use grantor::store::FamilyId;
use grantor::*;

const API: &str = "http://127.0.0.1:8080/api";
const DAY: Duration = Duration::from_secs(86_400);

fn jwt_fixture(keys: Arc<dyn SigningKeys>, check_revocation: bool) -> Fixture {
    fixture_with(|b| {
        b.default_audience(API)
            .resources(["https://files.example/"])
            .jwt_access_tokens(JwtAccessTokens::new(keys).check_revocation(check_revocation))
    })
}

fn static_keys(algorithm: SigningAlgorithm) -> Arc<dyn SigningKeys> {
    Arc::new(StaticKeys::new(
        SigningKey::generate(algorithm).unwrap(),
        [],
    ))
}

/// The decoded header and claims of a compact JWS, unverified.
fn parts(token: &str) -> (serde_json::Value, serde_json::Value) {
    let mut parts = token.split('.');
    let mut decode = || {
        let bytes = URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    };
    (decode(), decode())
}

async fn jwks(f: &Fixture) -> String {
    let response = f.server.jwks().await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    response.into_body()
}

async fn password_tokens(f: &Fixture) -> serde_json::Value {
    let body = "grant_type=password&username=alice%40example.com&password=alice-password-1";
    assert_tokens(&f.token(Some(&f.fast_basic()), body).await)
}

#[tokio::test]
async fn an_access_token_is_an_at_jwt_with_the_rfc_9068_claims() {
    let f = jwt_fixture(static_keys(SigningAlgorithm::EdDSA), false);
    let tokens = password_tokens(&f).await;
    let access = tokens["access_token"].as_str().unwrap();
    let (header, claims) = parts(access);
    assert_eq!(header["typ"], "at+jwt");
    assert_eq!(header["alg"], "EdDSA");
    let keys: serde_json::Value = serde_json::from_str(&jwks(&f).await).unwrap();
    assert_eq!(header["kid"], keys["keys"][0]["kid"]);
    assert_eq!(claims["iss"], ISSUER);
    assert_eq!(claims["aud"], API);
    assert_eq!(claims["sub"], f.alice.id().as_str());
    assert_eq!(claims["client_id"], f.fast_id.as_str());
    assert_eq!(claims["scope"], "profile");
    assert_eq!(claims["iat"], START);
    assert_eq!(claims["exp"], START + 3600);
    assert_eq!(claims["jti"], tokens["jti"]);
    assert_eq!(tokens["token_type"], "bearer");
    // A client-credentials token's subject is the client (RFC 9068 §2.2).
    let body = "grant_type=client_credentials&resource=https%3A%2F%2Ffiles.example%2F";
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), body).await);
    let (_, claims) = parts(tokens["access_token"].as_str().unwrap());
    assert_eq!(claims["sub"], f.fast_id.as_str());
    assert_eq!(claims["aud"], "https://files.example/");
}

#[tokio::test]
async fn a_user_s_token_carries_when_and_how_the_user_signed_in_and_reads_back_so() {
    let f = jwt_fixture(static_keys(SigningAlgorithm::EdDSA), false);
    let tokens = password_tokens(&f).await;
    let access = tokens["access_token"].as_str().unwrap();
    let (_, claims) = parts(access);
    // RFC 9068 §2.2.1: a password sign-in now, of no named class.
    assert_eq!(claims["auth_time"], START);
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]));
    assert!(claims.get("acr").is_none(), "{claims}");
    // Read back from the token alone (no store), as bearer validation does.
    let request = http::Request::get("/api/me")
        .header("authorization", format!("Bearer {access}"))
        .body(())
        .unwrap();
    let grant = f.server.bearer(&request, None).await.unwrap();
    let signed_in = grant.authorization.authentication.unwrap();
    assert_eq!(signed_in.auth_time(), UnixTime::from_secs(START));
    assert_eq!(signed_in.amr(), ["pwd"]);
    assert_eq!(signed_in.acr(), None);
    // A client's own token: nothing of a sign-in.
    let own = "grant_type=client_credentials";
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), own).await);
    let (_, claims) = parts(tokens["access_token"].as_str().unwrap());
    for claim in ["auth_time", "acr", "amr"] {
        assert!(claims.get(claim).is_none(), "{claim}: {claims}");
    }
}

#[tokio::test]
async fn the_aud_claim_is_the_resource_as_registered_not_as_requested() {
    let f = jwt_fixture(static_keys(SigningAlgorithm::EdDSA), false);
    // `HTTPS://FILES.example:443`: the registered `https://files.example/` in another spelling.
    let body = "grant_type=client_credentials&resource=HTTPS%3A%2F%2FFILES.example%3A443";
    let tokens = assert_tokens(&f.token(Some(&f.fast_basic()), body).await);
    let (_, claims) = parts(tokens["access_token"].as_str().unwrap());
    assert_eq!(claims["aud"], "https://files.example/");
}

#[tokio::test]
async fn a_resource_server_verifies_a_token_with_the_jwks_alone() {
    for algorithm in [SigningAlgorithm::EdDSA, SigningAlgorithm::ES256] {
        let f = jwt_fixture(static_keys(algorithm), false);
        let access = password_tokens(&f).await["access_token"]
            .as_str()
            .unwrap()
            .to_owned();
        let verifier = JwtVerifier::from_jwks(ISSUER, API, &jwks(&f).await).unwrap();
        let verified = verifier.verify(&access, f.clock.now()).unwrap();
        assert_eq!(verified.subject, f.alice.id().as_str());
        assert_eq!(verified.client_id.as_str(), f.fast_id);
        assert_eq!(verified.scope.as_str(), "profile");
        assert_eq!(verified.audience.as_str(), API);
        assert!(!verified.is_client_only());
        // Another resource, another issuer, a later time: refused.
        let files = JwtVerifier::from_jwks(ISSUER, "https://files.example/", &jwks(&f).await);
        let refused = files.unwrap().verify(&access, f.clock.now());
        assert_eq!(refused.unwrap_err(), JwtError::WrongAudience);
        let elsewhere = JwtVerifier::from_jwks("https://other.example", API, &jwks(&f).await);
        let refused = elsewhere.unwrap().verify(&access, f.clock.now());
        assert_eq!(refused.unwrap_err(), JwtError::WrongIssuer);
        let later = f.clock.now().plus(Duration::from_secs(3600 + 31));
        assert_eq!(
            verifier.verify(&access, later).unwrap_err(),
            JwtError::Expired
        );
    }
}

#[tokio::test]
async fn an_imported_rs256_key_signs_and_verifies() {
    let pem = include_bytes!("keys/rs256-test-only.pem");
    let key = SigningKey::from_pem(SigningAlgorithm::RS256, pem).unwrap();
    let f = jwt_fixture(Arc::new(StaticKeys::new(key, [])), false);
    let access = password_tokens(&f).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(parts(&access).0["alg"], "RS256");
    let verifier = JwtVerifier::from_jwks(ISSUER, API, &jwks(&f).await).unwrap();
    assert!(verifier.verify(&access, f.clock.now()).is_ok());
    assert!(SigningKey::from_pem(SigningAlgorithm::EdDSA, pem).is_err());
}

/// A key seam that counts the keys offered to it.
struct CountingKeys(MemoryStore, std::sync::atomic::AtomicUsize);

#[async_trait::async_trait]
impl store::KeyStore for CountingKeys {
    async fn insert_key(
        &self,
        name: &str,
        material: &[u8],
        expires_at: UnixTime,
        now: UnixTime,
    ) -> Result<bool, store::StoreError> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.insert_key(name, material, expires_at, now).await
    }

    async fn find_key(
        &self,
        name: &str,
        now: UnixTime,
    ) -> Result<Option<Vec<u8>>, store::StoreError> {
        self.0.find_key(name, now).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_rs256_keys_are_generated_once_for_a_burst_and_shared_by_every_node() {
    let store = MemoryStore::new();
    let counting = Arc::new(CountingKeys(store.clone(), Default::default()));
    let keys = Arc::new(RotatingKeys::new(
        SigningAlgorithm::RS256,
        DAY,
        counting.clone(),
    ));
    let now = UnixTime::from_secs(1_800_000_000);
    // Twenty first callers at once: one key is made for the period, and all sign with it.
    let burst: Vec<_> = (0..20)
        .map(|_| {
            let keys = Arc::clone(&keys);
            tokio::spawn(async move { keys.signing_key(now).await.unwrap().kid().to_owned() })
        })
        .collect();
    let mut kids = Vec::new();
    for handle in burst {
        kids.push(handle.await.unwrap());
    }
    kids.dedup();
    assert_eq!(kids.len(), 1, "one key for the period");
    assert_eq!(
        counting.1.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the burst made one RSA key, not one per caller"
    );
    let key = keys.signing_key(now).await.unwrap();
    assert_eq!(key.algorithm(), SigningAlgorithm::RS256);
    let jwk = serde_json::to_value(key.public_jwk()).unwrap();
    assert_eq!(jwk["kty"], "RSA");
    assert_eq!(jwk["alg"], "RS256");
    assert_eq!(
        URL_SAFE_NO_PAD
            .decode(jwk["n"].as_str().unwrap())
            .unwrap()
            .len(),
        256
    );
    // Another node reads the same key from the store, and the server signs and verifies with it.
    let node = RotatingKeys::new(SigningAlgorithm::RS256, DAY, Arc::new(store.clone()));
    assert_eq!(node.signing_key(now).await.unwrap().kid(), kids[0]);
    let f = jwt_fixture(keys, false);
    let access = password_tokens(&f).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(parts(&access).0["alg"], "RS256");
    let verifier = JwtVerifier::from_jwks(ISSUER, API, &jwks(&f).await).unwrap();
    assert!(verifier.verify(&access, f.clock.now()).is_ok());
}

#[tokio::test]
async fn the_server_validates_its_jwts_without_the_token_store() {
    let f = jwt_fixture(static_keys(SigningAlgorithm::EdDSA), false);
    let tokens = password_tokens(&f).await;
    let access = tokens["access_token"].as_str().unwrap();
    let grant = f
        .bearer(Some(&format!("Bearer {access}")), Some("profile"))
        .await
        .unwrap();
    assert_eq!(grant.authorization.user.as_ref().unwrap().username(), ALICE);
    assert_eq!(grant.jti().as_str(), tokens["jti"]);
    assert_eq!(
        grant.family,
        FamilyId::UNKNOWN,
        "the family is not in the token"
    );
    let refusal = f
        .bearer(Some(&format!("Bearer {access}")), Some("email"))
        .await
        .unwrap_err();
    assert_eq!(refusal.status(), 403);
    // Introspection finds it in the store as any token.
    let described = json(
        &f.introspect(Some(&f.fast_basic()), &format!("token={access}"))
            .await,
    );
    assert_eq!(described["active"], true);
    assert_eq!(described["jti"], tokens["jti"]);
    // Without a revocation check, a revoked JWT passes until it expires (the documented
    // trade-off); with one, it stops at once.
    let revoked = f
        .revoke(Some(&f.fast_basic()), &format!("token={access}"))
        .await;
    assert_eq!(revoked.status(), 200);
    assert!(
        f.bearer(Some(&format!("Bearer {access}")), None)
            .await
            .is_ok()
    );
    f.clock.advance(Duration::from_secs(3600));
    let expired = f.bearer(Some(&format!("Bearer {access}")), None).await;
    assert_eq!(expired.unwrap_err().status(), 401);
}

#[tokio::test]
async fn with_revocation_checked_a_revoked_jwt_is_refused_at_once() {
    let f = jwt_fixture(static_keys(SigningAlgorithm::EdDSA), true);
    let access = password_tokens(&f).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let header = format!("Bearer {access}");
    let grant = f.bearer(Some(&header), None).await.unwrap();
    assert_ne!(
        grant.family,
        FamilyId::UNKNOWN,
        "the store's grant names it"
    );
    f.revoke(Some(&f.fast_basic()), &format!("token={access}"))
        .await;
    let refusal = f.bearer(Some(&header), None).await.unwrap_err();
    assert_eq!(refusal.status(), 401);
}

#[tokio::test]
async fn forged_foreign_and_malformed_jwts_are_invalid_tokens() {
    let f = jwt_fixture(static_keys(SigningAlgorithm::EdDSA), false);
    let access = password_tokens(&f).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = jwt_fixture(static_keys(SigningAlgorithm::EdDSA), false);
    let foreign = password_tokens(&other).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let (header, claims) = {
        let mut split = access.split('.');
        (
            split.next().unwrap().to_owned(),
            split.next().unwrap().to_owned(),
        )
    };
    let mut tampered_claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&claims).unwrap()).unwrap();
    tampered_claims["scope"] = "profile email admin".into();
    let tampered = format!(
        "{header}.{}.{}",
        URL_SAFE_NO_PAD.encode(tampered_claims.to_string()),
        access.rsplit('.').next().unwrap()
    );
    let none = format!(
        "{}.{claims}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"at+jwt"}"#)
    );
    let hs256 = format!(
        "{}.{claims}.c2lnbmF0dXJl",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"at+jwt","kid":"k"}"#)
    );
    let untyped = format!(
        "{}.{claims}.{}",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"EdDSA","typ":"JWT"}"#),
        access.rsplit('.').next().unwrap()
    );
    for token in [tampered, none, hs256, untyped, foreign, "a.b.c".to_owned()] {
        let refusal = f
            .bearer(Some(&format!("Bearer {token}")), None)
            .await
            .unwrap_err();
        assert_eq!(refusal.status(), 401, "{token}");
        let challenge = refusal.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("invalid_token"), "{challenge}");
    }
}

#[tokio::test]
async fn rotating_keys_sign_with_the_current_key_and_publish_the_neighbours() {
    let store = MemoryStore::new();
    let keys = Arc::new(RotatingKeys::new(
        SigningAlgorithm::EdDSA,
        DAY,
        Arc::new(store.clone()),
    ));
    let f = jwt_fixture(keys.clone(), false);
    let kid = |token: &str| parts(token).0["kid"].as_str().unwrap().to_owned();
    let first = password_tokens(&f).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let published = |document: String| -> Vec<String> {
        let document: serde_json::Value = serde_json::from_str(&document).unwrap();
        let keys = document["keys"].as_array().unwrap().clone();
        keys.iter()
            .map(|k| k["kid"].as_str().unwrap().to_owned())
            .collect()
    };
    let today = published(jwks(&f).await);
    assert_eq!(today.len(), 2, "today's key and tomorrow's");
    assert!(today.contains(&kid(&first)));
    f.clock.advance(DAY);
    let second = password_tokens(&f).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(kid(&first), kid(&second), "a new day, a new key");
    assert!(
        today.contains(&kid(&second)),
        "published a day before it signs"
    );
    let tomorrow = published(jwks(&f).await);
    assert_eq!(tomorrow.len(), 3);
    assert!(
        tomorrow.contains(&kid(&first)),
        "yesterday's key stays published"
    );
    // Another node over the same store signs with the same key.
    let node = RotatingKeys::new(SigningAlgorithm::EdDSA, DAY, Arc::new(store.clone()));
    let current = node.signing_key(f.clock.now()).await.unwrap();
    assert_eq!(current.kid(), kid(&second));
    f.clock.advance(DAY);
    assert!(!published(jwks(&f).await).contains(&kid(&first)));
}

#[tokio::test]
async fn metadata_names_the_jwks_uri_only_with_jwt_access_tokens() {
    let f = jwt_fixture(static_keys(SigningAlgorithm::ES256), false);
    let metadata = json(&f.server.metadata());
    assert_eq!(
        metadata["jwks_uri"],
        format!("{ISSUER}/.well-known/jwks.json")
    );
    let plain = fixture();
    assert!(json(&plain.server.metadata()).get("jwks_uri").is_none());
    assert_eq!(plain.server.jwks().await.status(), 404);
}

#[test]
fn a_jwks_with_private_parts_or_nothing_usable_is_refused() {
    let private = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k","alg":"EdDSA",
        "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}]}"#;
    for document in [
        private,
        "{}",
        "not json",
        r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#,
    ] {
        assert_eq!(
            JwtVerifier::from_jwks(ISSUER, API, document).unwrap_err(),
            JwtError::Malformed
        );
    }
}

mod parsers {
    use super::*;
    use proptest::prelude::*;

    fn verifier() -> &'static JwtVerifier {
        static VERIFIER: std::sync::OnceLock<JwtVerifier> = std::sync::OnceLock::new();
        VERIFIER.get_or_init(|| {
            let key = SigningKey::generate(SigningAlgorithm::ES256).unwrap();
            let jwks = serde_json::json!({ "keys": [key.public_jwk()] }).to_string();
            JwtVerifier::from_jwks(ISSUER, API, &jwks).unwrap()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn arbitrary_bytes_never_verify_and_never_panic(token in "\\PC{0,300}") {
            prop_assert!(verifier().verify(&token, UnixTime::from_secs(START)).is_err());
        }

        #[test]
        fn arbitrary_three_part_tokens_never_verify(
            header in proptest::collection::vec(any::<u8>(), 0..120),
            claims in proptest::collection::vec(any::<u8>(), 0..200),
            signature in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            let token = format!(
                "{}.{}.{}",
                URL_SAFE_NO_PAD.encode(header),
                URL_SAFE_NO_PAD.encode(claims),
                URL_SAFE_NO_PAD.encode(signature)
            );
            prop_assert!(verifier().verify(&token, UnixTime::from_secs(START)).is_err());
        }
    }
}

#[tokio::test]
async fn rotating_keys_on_the_servers_key_seam_rest_encrypted_and_still_sign_and_verify() {
    use grantor::store::{KeyEncryptionKey, KeyStore as _};
    let f = fixture_with(|b| {
        b.default_audience(API)
            .jwt_access_tokens(JwtAccessTokens::rotating(SigningAlgorithm::EdDSA, DAY))
            .encrypt_keys_at_rest(KeyEncryptionKey::from_bytes([9; 32]))
    });
    let token = password_tokens(&f).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let (header, _) = parts(&token);
    assert_eq!(header["alg"], "EdDSA");
    let document: serde_json::Value = serde_json::from_str(&jwks(&f).await).unwrap();
    let kids: Vec<&str> = document["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap())
        .collect();
    assert!(kids.contains(&header["kid"].as_str().unwrap()), "{kids:?}");
    assert!(f.access_is_active(&token).await);

    // What the store holds under today's name is sealed (version byte, nonce, ciphertext and
    // tag), not the signing key's secret, and the server still signs and verifies with it.
    let period = START / DAY.as_secs();
    let stored = f
        .store
        .find_key(&format!("grantor:jwk:EdDSA:{period}"), f.clock.now())
        .await
        .unwrap()
        .expect("today's key is in the server's key seam");
    assert_eq!(stored[0], 0xE1, "the sealed format's version byte");
    let verifier = JwtVerifier::from_jwks(ISSUER, API, &jwks(&f).await).unwrap();
    assert!(verifier.verify(&token, f.clock.now()).is_ok());
}

/// A token must stay verifiable while it lives, and only the previous period's key stays
/// published after a rotation: keys may not rotate faster than access tokens live.
#[test]
fn keys_may_not_rotate_more_often_than_access_tokens_live() {
    let two_days = DAY * 2;
    let build = |tokens: JwtAccessTokens| {
        AuthorizationServer::builder()
            .issuer(ISSUER)
            .store(MemoryStore::new())
            .access_token_lifetime(two_days)
            .jwt_access_tokens(tokens)
            .build()
    };
    let rotating = JwtAccessTokens::rotating(SigningAlgorithm::EdDSA, DAY);
    assert_eq!(build(rotating).unwrap_err(), ConfigError::KeyRotationPeriod);
    let store: Arc<MemoryStore> = Arc::new(MemoryStore::new());
    let given = RotatingKeys::new(SigningAlgorithm::EdDSA, DAY, store);
    let given = JwtAccessTokens::new(Arc::new(given));
    assert_eq!(build(given).unwrap_err(), ConfigError::KeyRotationPeriod);
    let slow = JwtAccessTokens::rotating(SigningAlgorithm::EdDSA, two_days);
    assert!(build(slow).is_ok());
    // Keys the host rotates by hand say nothing of a period.
    assert!(build(JwtAccessTokens::new(static_keys(SigningAlgorithm::ES256))).is_ok());
}
