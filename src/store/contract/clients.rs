//! Rules for what a client record carries beyond the basics: secret rotation.

use super::accounts::{assert_same_client, find};
use super::{Must, at};
use crate::client::{
    Client, ClientCredentials, ClientKeys, GrantType, SecretVerifier, TlsClientAuth,
};
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

/// RFC 8705 §2: a `tls_client_auth` client keeps its subject, a `self_signed_tls_client_auth`
/// one its keys and its method, and each stays confidential without a secret.
pub(super) async fn certificate_clients_keep_their_method_and_subject<S: ClientStore + Admin>(
    store: &S,
) {
    let subject = TlsClientAuth::SubjectDn("CN=payments, O=Example Corp, C=GB".into());
    let tls = Client::tls_client_auth("tls", subject.clone())
        .grant_types([GrantType::ClientCredentials])
        .build()
        .must("build a tls_client_auth client");
    let jwks = r#"{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","x5c":["MIIBsjCCAVmgAwIBAgIU"]}]}"#;
    let keys = ClientKeys::jwks(jwks).must("read a JWK Set");
    let self_signed = Client::self_signed_tls_client_auth("self-signed", keys)
        .grant_types([GrantType::ClientCredentials])
        .build()
        .must("build a self_signed_tls_client_auth client");
    for client in [&tls, &self_signed] {
        store.register_client(client).await.must("register_client");
        let found = find(store, client.id().as_str()).await;
        assert!(
            found
                .as_ref()
                .is_some_and(|c| !c.is_public() && c.secret().is_none()),
            "a certificate client is confidential without a secret"
        );
        assert_same_client(found, client);
    }
    let found = find(store, "tls").await;
    assert_eq!(found.as_ref().and_then(Client::tls_subject), Some(&subject));
    let found = find(store, "self-signed").await;
    assert!(found.is_some_and(|c| c.uses_self_signed_certificate() && c.tls_subject().is_none()));
    let san = TlsClientAuth::SanIp("2001:db8::7".parse().must("parse an IP address"));
    let replaced = Client::tls_client_auth("tls", san.clone())
        .grant_types([GrantType::ClientCredentials])
        .build()
        .must("build a tls_client_auth client");
    assert!(store.replace_client(&replaced).await.must("replace_client"));
    let found = find(store, "tls").await;
    assert_eq!(found.as_ref().and_then(Client::tls_subject), Some(&san));
}

/// A self-registered client: a public one with a registration access token.
fn self_registered(id: &str) -> Client {
    Client::public(id)
        .redirect_uri("https://app.example/cb")
        .grant_types([GrantType::AuthorizationCode])
        .registration_access_token(crate::secret::SecretDigest::of(id))
        .build()
        .must("build a self-registered client")
}

/// [`ClientActivity`](crate::store::ClientActivity): a self-registered client's last use is
/// kept (never moved back), an administrator's is never recorded; the clients idle before a
/// time are listed longest idle first, within the limit; a removed client is neither.
pub(super) async fn self_registered_clients_record_their_last_use<
    S: ClientStore + Admin + crate::store::ClientActivity,
>(
    store: &S,
) {
    let (first, second) = (self_registered("first"), self_registered("second"));
    for client in [&first, &second] {
        store.register_client(client).await.must("register_client");
    }
    let administered = Client::public("administered")
        .redirect_uri("https://app.example/cb")
        .grant_types([GrantType::AuthorizationCode])
        .build()
        .must("build a client");
    store
        .register_client(&administered)
        .await
        .must("register_client");
    let last =
        |id: &'static str| async move { store.client_last_used(id).await.must("client_last_used") };
    assert_eq!(last("first").await, None, "no use is recorded yet");
    for (id, when) in [("first", 100), ("second", 200), ("administered", 100)] {
        store.touch_client(id, at(when)).await.must("touch_client");
    }
    store
        .touch_client("unknown", at(100))
        .await
        .must("touch_client of an unknown client");
    store
        .touch_client("first", at(50))
        .await
        .must("touch_client");
    assert_eq!(last("first").await, Some(at(100)), "never moved back");
    assert_eq!(last("second").await, Some(at(200)));
    assert_eq!(
        last("administered").await,
        None,
        "an administrator's client"
    );
    store
        .touch_client("first", at(150))
        .await
        .must("touch_client");
    assert_eq!(last("first").await, Some(at(150)));

    let idle = |before: u64, limit: usize| async move {
        store
            .idle_clients(at(before), limit)
            .await
            .must("idle_clients")
    };
    assert_eq!(idle(150, 10).await, Vec::<String>::new(), "strictly before");
    assert_eq!(idle(151, 10).await, ["first"]);
    assert_eq!(
        idle(1_000, 10).await,
        ["first", "second"],
        "longest idle first"
    );
    assert_eq!(idle(1_000, 1).await, ["first"], "within the limit");
    assert!(store.remove_client("first").await.must("remove_client"));
    assert_eq!(idle(1_000, 10).await, ["second"]);
    assert_eq!(last("first").await, None);
}
