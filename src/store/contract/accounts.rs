//! The rules of [`ClientStore`] and [`Admin`]: clients.

use super::Must as _;
use crate::client::{Approval, Client, ClientCredentials, GrantType, SecretVerifier};
use crate::secret::{ClientSecret, SecretDigest};
use crate::store::{Admin, AdminError, ClientStore};

/// Three clients that between them use every column: generated credentials with every grant,
/// a chosen (Argon2id-verified) secret, and a public client.
fn clients() -> [Client; 3] {
    let creds = ClientCredentials::generate().must("generate client credentials");
    let chosen = SecretVerifier::argon2id(&ClientSecret::new("a chosen secret"));
    [
        Client::confidential(creds.client_id.as_str(), creds.verifier)
            .name("Generated")
            .redirect_uri("https://app.example/cb")
            .redirect_uri("https://app.example/other?a=1&b=%22two%22")
            .grant_types(GrantType::ALL)
            .scopes("profile email")
            .default_scope("profile")
            .build()
            .must("build a client"),
        Client::confidential("chosen", chosen.must("make an Argon2id verifier"))
            .grant_types([GrantType::ClientCredentials, GrantType::Password])
            .secret_in_body(true)
            .scopes("reports")
            .approval(Approval::NotRequired)
            .resource_server("https://api.example/")
            .build()
            .must("build a client"),
        Client::public("public")
            .redirect_uri("http://127.0.0.1:8081/callback")
            .grant_types([GrantType::AuthorizationCode])
            .resource("https://files.example/")
            .resource("https://api.example/")
            .require_dpop(true)
            .require_pushed_requests(true)
            .id_token_signing_algorithm(crate::signing::SigningAlgorithm::EdDSA)
            .post_logout_redirect_uri("http://127.0.0.1:8081/logged-out")
            .native_application(true)
            .backchannel_logout_uri("https://app.example/backchannel-logout")
            .build()
            .must("build a client"),
    ]
}

/// A client registered as `public` is, with everything else changed.
fn renamed_public_client() -> Client {
    Client::public("public")
        .name("Renamed")
        .redirect_uri("http://localhost:8081/callback")
        .grant_types([GrantType::AuthorizationCode, GrantType::Implicit])
        .scopes("email")
        .build()
        .must("build a client")
}

pub(super) async fn find(store: &impl ClientStore, client_id: &str) -> Option<Client> {
    let found = store.find_client(client_id).await.must("find_client");
    found.map(|client| Client::clone(&client))
}

#[track_caller]
pub(super) fn assert_same_client(found: Option<Client>, expected: &Client) {
    let Some(found) = found else {
        panic!("client {} is not found", expected.id().as_str());
    };
    assert_eq!(found.id(), expected.id());
    assert_eq!(found.name(), expected.name());
    assert_eq!(
        found.secret().map(SecretVerifier::to_stored),
        expected.secret().map(SecretVerifier::to_stored)
    );
    assert_eq!(found.is_public(), expected.is_public());
    assert_eq!(found.redirect_uris(), expected.redirect_uris());
    for grant in GrantType::ALL {
        assert_eq!(found.allows(grant), expected.allows(grant), "{grant:?}");
    }
    assert_eq!(found.scopes(), expected.scopes());
    assert_eq!(found.default_scope(), expected.default_scope());
    assert_eq!(found.approval(), expected.approval());
    assert_eq!(
        found.audiences(),
        expected.audiences(),
        "resource server of"
    );
    assert_eq!(found.resources(), expected.resources(), "allowed resources");
    assert_eq!(
        found.requires_dpop(),
        expected.requires_dpop(),
        "DPoP required"
    );
    assert_eq!(
        found.requires_pushed_requests(),
        expected.requires_pushed_requests(),
        "pushed requests required"
    );
    assert_eq!(found.keys(), expected.keys(), "the private_key_jwt keys");
    assert_eq!(
        found.tls_subject(),
        expected.tls_subject(),
        "the tls_client_auth subject"
    );
    assert_eq!(
        found.uses_self_signed_certificate(),
        expected.uses_self_signed_certificate(),
        "self_signed_tls_client_auth"
    );
    assert_eq!(
        found.id_token_signing_algorithm(),
        expected.id_token_signing_algorithm(),
        "id_token_signed_response_alg"
    );
    assert_eq!(
        found.post_logout_redirect_uris(),
        expected.post_logout_redirect_uris(),
        "post_logout_redirect_uris"
    );
    assert_eq!(
        found.backchannel_logout_uri(),
        expected.backchannel_logout_uri(),
        "backchannel_logout_uri"
    );
    assert_eq!(
        found.sends_secret_in_body(),
        expected.sends_secret_in_body(),
        "client_secret_post"
    );
    assert_eq!(
        found.is_native_application(),
        expected.is_native_application(),
        "application_type"
    );
    let retiring = |c: &Client| c.retiring_secret().map(|(v, until)| (v.to_stored(), until));
    assert_eq!(retiring(&found), retiring(expected), "the retiring secret");
    let digest = |c: &Client| c.registration_access_token().map(|d| *d.as_bytes());
    assert_eq!(
        digest(&found),
        digest(expected),
        "the registration token digest"
    );
}

/// RFC 7592: a self-registered client's registration access token digest is kept, replaced
/// with the client, and absent for an administrator's client.
pub(super) async fn a_registration_access_token_digest_round_trips<S: ClientStore + Admin>(
    store: &S,
) {
    let creds = ClientCredentials::generate().must("generate client credentials");
    let token = SecretDigest::of("a registration access token of 256 bits, say");
    let registered = Client::confidential(creds.client_id.as_str(), creds.verifier.clone())
        .redirect_uri("https://app.example/cb")
        .grant_types([GrantType::AuthorizationCode, GrantType::RefreshToken])
        .registration_access_token(token)
        .build()
        .must("build a client");
    store
        .register_client(&registered)
        .await
        .must("register_client");
    let found = find(store, creds.client_id.as_str()).await;
    assert_same_client(found.clone(), &registered);
    let kept = found.and_then(|c| c.registration_access_token().copied());
    assert!(kept.is_some_and(|d| d.ct_eq(&token)), "the digest is kept");

    let other = SecretDigest::of("another registration access token");
    let replaced = Client::confidential(creds.client_id.as_str(), creds.verifier)
        .redirect_uri("https://app.example/other")
        .grant_types([GrantType::AuthorizationCode])
        .registration_access_token(other)
        .build()
        .must("build a client");
    assert!(store.replace_client(&replaced).await.must("replace_client"));
    assert_same_client(find(store, creds.client_id.as_str()).await, &replaced);

    let [_, _, public] = clients();
    store.register_client(&public).await.must("register_client");
    let found = find(store, "public").await;
    assert!(
        found.is_some_and(|c| c.registration_access_token().is_none()),
        "an administrator's client has no registration token digest"
    );
}

pub(super) async fn clients_round_trip<S: ClientStore + Admin>(store: &S) {
    let registered = clients();
    for client in &registered {
        store.register_client(client).await.must("register_client");
    }
    for client in &registered {
        assert_same_client(find(store, client.id().as_str()).await, client);
    }
    assert!(
        find(store, "nobody").await.is_none(),
        "an unknown client is found"
    );
}

pub(super) async fn registering_refuses_a_taken_id_and_replace_and_remove_say_if_there_was_one<S>(
    store: &S,
) where
    S: ClientStore + Admin,
{
    let [_, _, public] = clients();
    let renamed = renamed_public_client();
    let replaced = store.replace_client(&renamed).await.must("replace_client");
    assert!(!replaced, "replacing a client nobody registered");
    assert!(
        find(store, "public").await.is_none(),
        "replacing registered a client"
    );

    store.register_client(&public).await.must("register_client");
    let refused = store.register_client(&renamed).await;
    assert!(
        matches!(refused, Err(AdminError::ClientIdTaken)),
        "registering a taken id: {refused:?}"
    );
    assert_same_client(find(store, "public").await, &public);

    let replaced = store.replace_client(&renamed).await.must("replace_client");
    assert!(replaced, "replacing a registered client");
    assert_same_client(find(store, "public").await, &renamed);

    assert!(store.remove_client("public").await.must("remove_client"));
    assert!(!store.remove_client("public").await.must("remove_client"));
    assert!(
        find(store, "public").await.is_none(),
        "a removed client is found"
    );
}
