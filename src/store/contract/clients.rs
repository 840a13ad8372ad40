//! Rules for what a client record carries beyond the basics: secret rotation.

use super::accounts::{assert_same_client, find};
use super::{Must, at};
use crate::client::{Client, ClientCredentials, ClientKeys, GrantType, SecretVerifier};
use crate::secret::ClientSecret;
use crate::store::{Admin, ClientStore};

fn verifier() -> SecretVerifier {
    ClientCredentials::generate()
        .must("generate client credentials")
        .verifier
}

fn stored(client: &Option<Client>) -> (Option<String>, Option<(String, u64)>) {
    let client = client.as_ref().expect("the client is found");
    (
        client.secret().map(SecretVerifier::to_stored),
        client
            .retiring_secret()
            .map(|(v, until)| (v.to_stored(), until.as_secs())),
    )
}

/// A rotated client keeps its new verifier as current and its previous one as retiring with
/// its deadline, both round-trip through `replace_client` and `register_client`, a second
/// rotation retires the first rotation's verifier, and unknown or public clients are not
/// rotated.
pub(super) async fn a_rotated_client_keeps_both_verifiers_and_round_trips<
    S: ClientStore + Admin,
>(
    store: &S,
) {
    let (first, second, third) = (verifier(), verifier(), verifier());
    let client = Client::confidential("rotated", first.clone())
        .grant_types([GrantType::ClientCredentials])
        .build()
        .must("build a client");
    store.register_client(&client).await.must("register_client");
    let rotated = store
        .rotate_client_secret("rotated", &second, at(600))
        .await;
    assert!(
        rotated.must("rotate_client_secret"),
        "a confidential client rotates"
    );
    let found = find(store, "rotated").await;
    let expected = (
        Some(second.to_stored()),
        Some((first.to_stored(), at(600).as_secs())),
    );
    assert_eq!(stored(&found), expected, "after one rotation");

    let found = found.expect("the client is found");
    assert!(store.replace_client(&found).await.must("replace_client"));
    assert_same_client(find(store, "rotated").await, &found);

    let rotated = store.rotate_client_secret("rotated", &third, at(900)).await;
    assert!(rotated.must("rotate_client_secret"));
    let expected = (
        Some(third.to_stored()),
        Some((second.to_stored(), at(900).as_secs())),
    );
    assert_eq!(stored(&find(store, "rotated").await), expected, "after two");

    let chosen = SecretVerifier::argon2id(&ClientSecret::new("a chosen secret"))
        .must("make an Argon2id verifier");
    let registered = Client::confidential("registered-rotated", first.clone())
        .retiring_secret(chosen, at(60))
        .grant_types([GrantType::ClientCredentials])
        .build()
        .must("build a client");
    store
        .register_client(&registered)
        .await
        .must("register_client");
    assert_same_client(find(store, "registered-rotated").await, &registered);

    let unknown = store.rotate_client_secret("nobody", &third, at(60)).await;
    assert!(
        !unknown.must("rotate_client_secret"),
        "an unknown client rotates"
    );
    let public = Client::public("public-rotated")
        .grant_types([GrantType::RefreshToken])
        .build()
        .must("build a client");
    store.register_client(&public).await.must("register_client");
    let refused = store
        .rotate_client_secret("public-rotated", &third, at(60))
        .await;
    assert!(
        !refused.must("rotate_client_secret"),
        "a public client rotates"
    );
    assert_same_client(find(store, "public-rotated").await, &public);
}

/// A `private_key_jwt` client (RFC 7523 §2.2) keeps its JWK Set, or its `jwks_uri`, through
/// registering and replacing, and is neither public nor given a secret.
pub(super) async fn a_private_key_jwt_client_keeps_its_keys<S: ClientStore + Admin>(store: &S) {
    let jwks = r#"{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}"#;
    let keys = ClientKeys::jwks(jwks).must("read a JWK Set");
    let client = Client::private_key_jwt("keyed", keys)
        .grant_types([GrantType::ClientCredentials])
        .build()
        .must("build a client");
    store.register_client(&client).await.must("register_client");
    let found = find(store, "keyed").await;
    assert!(
        found
            .as_ref()
            .is_some_and(|c| !c.is_public() && c.secret().is_none()),
        "a private_key_jwt client is confidential without a secret"
    );
    assert_same_client(found, &client);
    let uri = ClientKeys::jwks_uri("https://app.example/jwks.json").must("read a jwks_uri");
    let replaced = Client::private_key_jwt("keyed", uri)
        .grant_types([GrantType::ClientCredentials])
        .build()
        .must("build a client");
    assert!(store.replace_client(&replaced).await.must("replace_client"));
    assert_same_client(find(store, "keyed").await, &replaced);
}
