//! Identity Assertion JWT Authorization Grants (draft-ietf-oauth-identity-assertion-authz-grant)
//! issued by token exchange through the public API: the answer, the grant's header and claims
//! verified with the published keys alone, its lifetime, the key binding of a DPoP proof, every
//! subject token that is refused, the audience and resource rules, the host's policy, and a
//! server that does not issue them.

mod common;
#[path = "dpop_proofs/mod.rs"]
mod keys;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use common::*;
use grantor::client::*;
use grantor::dpop::Dpop;
use grantor::events::EventKind;
use grantor::id_jag::*;
use grantor::settings::OpenIdConnect;
use grantor::store::{Account, StoreError, User, UserAdmin as _, UserClaims, UserId, UserStore};
use grantor::{AuthorizationServer, ConfigError};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use keys::ProofKey;
use serde_json::{Value, json};

const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ACCESS: &str = "urn:ietf:params:oauth:token-type:access_token";
/// The other authorization server, and one the policy refuses.
const OTHER_AS: &str = "https://as.example/";
const REFUSED_AS: &str = "https://refused.example/";
const MCP: &str = "https://mcp.example/mcp";

/// The confidential client that signs users in and exchanges their ID tokens (an MCP client).
const AGENT: &str = "agent-client";
const AGENT_SECRET: &str = "agent-secret-of-at-least-thirty-two-bytes";

/// Grants every request with the asked scope, naming the client `{id}@as` at the audience;
/// refuses [`REFUSED_AS`]; lets any client exchange the ID tokens of `vouched_for`.
struct Policy {
    vouched_for: Option<&'static str>,
}

#[async_trait::async_trait]
impl IdJagPolicy for Policy {
    fn accepts_id_tokens_of(&self, _client: &Client, issued_to: &Client) -> bool {
        self.vouched_for == Some(issued_to.id().as_str())
    }

    async fn decide(&self, request: &IdJagRequest<'_>) -> Result<IdJagGrant, IdJagRefusal> {
        if request.audience == REFUSED_AS {
            return Err(IdJagRefusal::Target);
        }
        let at_audience = format!("{}@as", request.client.id());
        Ok(IdJagGrant::new(at_audience, request.scope.cloned()))
    }
}

/// The fixture store's users (set once the fixture is built), of whom Alice can be made to
/// leave.
#[derive(Default)]
struct Users {
    store: OnceLock<grantor::MemoryStore>,
    alice_gone: AtomicBool,
}

impl Users {
    fn store(&self) -> &grantor::MemoryStore {
        self.store.get().expect("the fixture's store")
    }

    fn gone(&self, id: &UserId) -> bool {
        self.alice_gone.load(Ordering::Relaxed) && id.as_str() == "alice-id"
    }
}

#[async_trait::async_trait]
impl UserStore for Users {
    async fn find_account(&self, username: &str) -> Result<Option<Account>, StoreError> {
        self.store().find_account(username).await
    }

    async fn find_user(&self, id: &UserId) -> Result<Option<User>, StoreError> {
        if self.gone(id) {
            return Ok(None);
        }
        self.store().find_user(id).await
    }

    async fn claims(&self, id: &UserId) -> Result<Option<UserClaims>, StoreError> {
        if self.gone(id) {
            return Ok(None);
        }
        self.store().claims(id).await
    }
}

struct IdJag {
    f: Fixture,
    users: Arc<Users>,
    events: Arc<KeptEvents>,
}

/// A server issuing ID-JAGs under `policy`, with OpenID Connect as `openid` has it, the agent
/// and `other` registered (`other`: code flow, public subjects unless `pairwise`), and Alice's
/// email among her claims.
fn setup_with(policy: Policy, openid: OpenIdConnect, dpop: bool) -> IdJag {
    let users = Arc::new(Users::default());
    let events = Arc::new(KeptEvents::default());
    let (seam, recorded) = (Arc::clone(&users), Arc::clone(&events));
    let f = fixture_with(|b| {
        let b = b
            .openid_connect(openid)
            .id_jag_issuance(Arc::new(policy))
            .events(recorded)
            .users(seam);
        if dpop { b.dpop(Dpop::new()) } else { b }
    });
    users.store.set(f.store.clone()).ok();
    f.register(agent(AGENT, |b| b));
    let claims = UserClaims::new().email(ALICE, true);
    assert!(at_once(f.store.set_claims(f.alice.id(), &claims)).unwrap());
    IdJag { f, users, events }
}

fn setup() -> IdJag {
    setup_with(
        Policy { vouched_for: None },
        OpenIdConnect::default(),
        false,
    )
}

/// A confidential client agreed the code flow and token exchange, as `build` leaves it.
fn agent(id: &str, build: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Client {
    let secret = ClientSecret::new(AGENT_SECRET);
    let builder = Client::confidential(id, SecretVerifier::digest(&secret).unwrap())
        .redirect_uri(REDIRECT)
        .grant_types([GrantType::AuthorizationCode, GrantType::TokenExchange])
        .scopes("profile email")
        .approval(Approval::NotRequired);
    build(builder).build().unwrap()
}

fn agent_basic(id: &str) -> String {
    basic(id, AGENT_SECRET)
}

/// The token response of Alice's code-flow sign-in at `client` (authenticating with
/// `authorization`, or its `client_id` for a public client) for `openid email`.
async fn signed_in(f: &Fixture, client: &str, authorization: Option<&str>) -> Value {
    let pkce = format!("&code_challenge={CHALLENGE}&code_challenge_method=S256");
    let extra = format!("&scope=openid%20email&nonce=n-1{pkce}");
    let code = f.code(client, &extra).await;
    let mut body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri={REDIRECT_ENCODED}\
         &code_verifier={VERIFIER}"
    );
    if authorization.is_none() {
        body.push_str(&format!("&client_id={client}"));
    }
    assert_tokens(&f.token(authorization, &body).await)
}

/// Alice's ID token from the agent.
async fn id_token(f: &Fixture) -> String {
    let tokens = signed_in(f, AGENT, Some(&agent_basic(AGENT))).await;
    tokens["id_token"].as_str().unwrap().to_owned()
}

/// The claims of a JWS, unverified.
fn claims_of(jwt: &str) -> Value {
    use base64::Engine as _;
    let part = jwt.split('.').nth(1).expect("a JWS");
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part);
    serde_json::from_slice(&decoded.unwrap()).unwrap()
}

/// An ID-JAG request's body for `subject` with `extra` parameters.
fn body(subject: &str, extra: &str) -> String {
    format!(
        "grant_type={GRANT}&requested_token_type={ID_JAG_TOKEN_TYPE}\
         &subject_token={subject}&subject_token_type={ID_TOKEN}{extra}"
    )
}

/// `audience` and `resource` of [`OTHER_AS`] and [`MCP`], and `scope`.
fn to_other_as(scope: &str) -> String {
    format!("&audience={OTHER_AS}&resource={MCP}&scope={scope}")
}

/// The agent asks for an ID-JAG for `subject` with `extra` parameters.
async fn exchange(f: &Fixture, subject: &str, extra: &str) -> http::Response<String> {
    f.token(Some(&agent_basic(AGENT)), &body(subject, extra))
        .await
}

/// Asserts the draft's token exchange answer ("Response"); answers its body.
fn assert_issued(response: &http::Response<String>) -> Value {
    assert_eq!(response.status(), 200, "{response:?}");
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body = json(response);
    assert_eq!(body["issued_token_type"], ID_JAG_TOKEN_TYPE, "{body}");
    assert_eq!(body["token_type"], "N_A", "{body}");
    assert!(body["access_token"].is_string(), "{body}");
    assert!(body.get("refresh_token").is_none(), "{body}");
    body
}

/// Asserts an RFC 6749 §5.2 error `code` whose description says `why`.
fn assert_refused(response: &http::Response<String>, code: &str, why: &str) {
    assert_error(response, 400, code);
    let description = json(response)["error_description"].to_string();
    assert!(description.contains(why), "{description}");
}

/// The header and claims of `jwt` after verifying its signature with the server's published
/// keys alone, its `iss` and its `aud` ([`OTHER_AS`]).
async fn verified(f: &Fixture, jwt: &str) -> (jsonwebtoken::Header, Value) {
    let jwks: JwkSet = serde_json::from_str(f.server.jwks().await.body()).unwrap();
    let header = jsonwebtoken::decode_header(jwt).unwrap();
    let jwk = jwks
        .find(header.kid.as_deref().expect("a kid"))
        .expect("published");
    let key = DecodingKey::from_jwk(jwk).unwrap();
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[OTHER_AS]);
    // The fixture's clock is not the system's: `exp` is checked below, against it.
    validation.validate_exp = false;
    validation.set_required_spec_claims(&["iss", "sub", "aud", "exp", "iat", "jti"]);
    let data = jsonwebtoken::decode::<Value>(jwt, &key, &validation).expect("it verifies");
    (data.header, data.claims)
}

#[tokio::test]
async fn an_id_jag_is_signed_with_the_published_keys_and_carries_the_drafts_claims() {
    let IdJag { f, events, .. } = setup();
    let subject = id_token(&f).await;
    let response = exchange(&f, &subject, &to_other_as("files.read%20files.write")).await;
    let body = assert_issued(&response);
    assert_eq!(body["expires_in"], 300);
    assert_eq!(body["scope"], "files.read files.write");
    let id_jag = body["access_token"].as_str().unwrap();
    let (header, claims) = verified(&f, id_jag).await;
    assert_eq!(header.typ.as_deref(), Some("oauth-id-jag+jwt"));
    assert_eq!(header.alg, Algorithm::RS256);
    assert_eq!(claims["iss"], ISSUER);
    assert_eq!(claims["sub"], "alice-id");
    assert_eq!(claims["aud"], OTHER_AS);
    assert_eq!(claims["client_id"], "agent-client@as");
    assert_eq!(claims["resource"], MCP);
    assert_eq!(claims["scope"], "files.read files.write");
    assert_eq!(claims["email"], ALICE);
    assert_eq!(claims["email_verified"], true);
    assert_eq!(claims["iat"], START);
    assert_eq!(claims["exp"], START + 300);
    assert_eq!(claims["amr"], json!(["pwd"]));
    assert_eq!(claims["jti"], body["jti"]);
    assert!(claims.get("cnf").is_none(), "{claims}");
    // The ID token the agent got is still its own: `sub` agrees with it.
    let id_claims = claims_of(&subject);
    assert_eq!(id_claims["sub"], claims["sub"]);
    let issued: Vec<_> = events.all().iter().map(|e| e.kind).collect();
    assert!(issued.contains(&EventKind::IdJagIssued), "{issued:?}");
}

#[tokio::test]
async fn every_id_jag_has_a_fresh_jti_and_no_scope_claim_when_none_is_asked() {
    let IdJag { f, .. } = setup();
    let subject = id_token(&f).await;
    let extra = format!("&audience={OTHER_AS}");
    let first = assert_issued(&exchange(&f, &subject, &extra).await);
    let second = assert_issued(&exchange(&f, &subject, &extra).await);
    assert_ne!(first["jti"], second["jti"]);
    assert_eq!(first["scope"], "");
    let (_, claims) = verified(&f, first["access_token"].as_str().unwrap()).await;
    assert!(claims.get("scope").is_none(), "{claims}");
    assert!(claims.get("resource").is_none(), "{claims}");
}

#[tokio::test]
async fn an_id_jag_never_outlives_the_key_rotation_period_nor_five_minutes() {
    assert_eq!(ID_JAG_LIFETIME, Duration::from_secs(300));
    let openid = OpenIdConnect::default()
        .key_rotation(Duration::from_secs(60))
        .id_token_lifetime(Duration::from_secs(60));
    let IdJag { f, .. } = setup_with(Policy { vouched_for: None }, openid, false);
    let subject = id_token(&f).await;
    let body = assert_issued(&exchange(&f, &subject, &to_other_as("files.read")).await);
    assert_eq!(body["expires_in"], 60);
    let (_, claims) = verified(&f, body["access_token"].as_str().unwrap()).await;
    assert_eq!(claims["exp"], START + 60);
}

#[tokio::test]
async fn a_dpop_proof_binds_the_id_jag_to_its_key() {
    let IdJag { f, .. } = setup_with(Policy { vouched_for: None }, OpenIdConnect::default(), true);
    let subject = id_token(&f).await;
    let key = ProofKey::es256(7);
    let proof = key.proof("POST", &format!("{ISSUER}/api/oauth/token"), START);
    let mut request = token_request(
        Some(&agent_basic(AGENT)),
        &body(&subject, &to_other_as("files.read")),
    );
    request.headers_mut().insert("dpop", proof.parse().unwrap());
    let response = f.server.token(&request).await;
    let body = assert_issued(&response);
    // The draft: the answer's `token_type` stays `N_A`; the binding is in the grant.
    let (_, claims) = verified(&f, body["access_token"].as_str().unwrap()).await;
    assert_eq!(claims["cnf"]["jkt"], key.jkt());
}

#[tokio::test]
async fn an_access_token_is_not_an_id_token() {
    let IdJag { f, .. } = setup();
    let tokens = signed_in(&f, AGENT, Some(&agent_basic(AGENT))).await;
    let access_token = tokens["access_token"].as_str().unwrap();
    let response = exchange(&f, access_token, &to_other_as("files.read")).await;
    assert_refused(&response, "invalid_grant", "not an ID token of this server");
}

#[tokio::test]
async fn a_jwt_signed_by_another_key_is_refused() {
    let IdJag { f, .. } = setup();
    let subject = id_token(&f).await;
    let claims = claims_of(&subject);
    let forged = ProofKey::rsa(Algorithm::RS256).sign_with(&claims, |header| {
        header.typ = Some("JWT".to_owned());
        header.jwk = None;
        header.kid = jsonwebtoken::decode_header(&subject).unwrap().kid;
    });
    let response = exchange(&f, &forged, &to_other_as("files.read")).await;
    assert_refused(&response, "invalid_grant", "not an ID token of this server");
}

#[tokio::test]
async fn an_expired_id_token_is_refused() {
    let IdJag { f, .. } = setup();
    let subject = id_token(&f).await;
    let exp = claims_of(&subject)["exp"].as_u64().unwrap();
    f.clock.set(grantor::clock::UnixTime::from_secs(exp - 1));
    assert_issued(&exchange(&f, &subject, &to_other_as("files.read")).await);
    f.clock.set(grantor::clock::UnixTime::from_secs(exp));
    let response = exchange(&f, &subject, &to_other_as("files.read")).await;
    assert_refused(&response, "invalid_grant", "expired");
}

#[tokio::test]
async fn an_id_jag_is_no_id_token_and_cannot_be_exchanged_again() {
    let IdJag { f, .. } = setup();
    let subject = id_token(&f).await;
    let body = assert_issued(&exchange(&f, &subject, &to_other_as("files.read")).await);
    let id_jag = body["access_token"].as_str().unwrap();
    let response = exchange(&f, id_jag, &to_other_as("files.read")).await;
    assert_refused(&response, "invalid_grant", "not an ID token of this server");
}

#[tokio::test]
async fn an_id_token_of_another_client_is_refused_unless_the_policy_vouches_for_it() {
    let IdJag { f, .. } = setup();
    f.register(agent("other-agent", |b| b));
    let theirs = signed_in(&f, "other-agent", Some(&agent_basic("other-agent"))).await;
    let subject = theirs["id_token"].as_str().unwrap();
    let response = exchange(&f, subject, &to_other_as("files.read")).await;
    assert_refused(&response, "invalid_grant", "issued to another client");

    let vouching = Policy {
        vouched_for: Some("other-agent"),
    };
    let IdJag { f, .. } = setup_with(vouching, OpenIdConnect::default(), false);
    f.register(agent("other-agent", |b| b));
    let theirs = signed_in(&f, "other-agent", Some(&agent_basic("other-agent"))).await;
    let subject = theirs["id_token"].as_str().unwrap();
    let body = assert_issued(&exchange(&f, subject, &to_other_as("files.read")).await);
    let (_, claims) = verified(&f, body["access_token"].as_str().unwrap()).await;
    assert_eq!(claims["sub"], "alice-id");
    assert_eq!(claims["client_id"], "agent-client@as");
}

#[tokio::test]
async fn an_id_token_whose_user_is_gone_is_refused() {
    let IdJag { f, users, .. } = setup();
    let subject = id_token(&f).await;
    users.alice_gone.store(true, Ordering::Relaxed);
    let response = exchange(&f, &subject, &to_other_as("files.read")).await;
    assert_refused(&response, "invalid_grant", "no longer exists");
}

#[tokio::test]
async fn a_pairwise_id_token_names_no_user_and_is_refused() {
    let secret = grantor::settings::PairwiseSecret::from_bytes([42; 32]);
    let openid = OpenIdConnect::default().pairwise_secret(secret);
    let IdJag { f, .. } = setup_with(Policy { vouched_for: None }, openid, false);
    f.register(agent("pairwise-agent", |b| {
        b.pairwise_subjects("agent.example")
    }));
    let tokens = signed_in(&f, "pairwise-agent", Some(&agent_basic("pairwise-agent"))).await;
    let subject = tokens["id_token"].as_str().unwrap();
    let response = f
        .token(
            Some(&agent_basic("pairwise-agent")),
            &body(subject, &to_other_as("files.read")),
        )
        .await;
    assert_refused(&response, "invalid_grant", "pairwise");
}

#[tokio::test]
async fn the_audience_is_one_absolute_uri_and_the_resource_at_most_one() {
    let IdJag { f, .. } = setup();
    let subject = id_token(&f).await;
    for extra in [
        // No audience at all: the draft requires one.
        format!("&resource={MCP}"),
        format!("&audience={OTHER_AS}&audience=https://second.example/"),
        "&audience=not-a-uri".to_owned(),
        format!("&audience={OTHER_AS}%23fragment"),
        format!("&audience={OTHER_AS}&resource={MCP}&resource=https://mcp.example/other"),
        format!("&audience={OTHER_AS}&resource=relative/path"),
    ] {
        let response = exchange(&f, &subject, &extra).await;
        assert_error(&response, 400, "invalid_target");
    }
}

#[tokio::test]
async fn an_audience_the_policy_refuses_is_invalid_target() {
    let IdJag { f, .. } = setup();
    let subject = id_token(&f).await;
    let extra = format!("&audience={REFUSED_AS}&resource={MCP}");
    let response = exchange(&f, &subject, &extra).await;
    assert_refused(
        &response,
        "invalid_target",
        "no identity assertion grant is issued",
    );
}

#[tokio::test]
async fn a_public_client_cannot_obtain_an_id_jag() {
    let IdJag { f, .. } = setup();
    f.register(
        Client::public("public-agent")
            .redirect_uri(REDIRECT)
            .grant_types([GrantType::AuthorizationCode, GrantType::TokenExchange])
            .scopes("profile email")
            .approval(Approval::NotRequired)
            .build()
            .unwrap(),
    );
    let tokens = signed_in(&f, "public-agent", None).await;
    let subject = tokens["id_token"].as_str().unwrap();
    let request = format!(
        "{}&client_id=public-agent",
        body(subject, &to_other_as("files.read"))
    );
    let response = f.token(None, &request).await;
    assert_refused(&response, "unauthorized_client", "public client");
}

#[tokio::test]
async fn the_subject_token_must_be_said_to_be_an_id_token_and_no_actor_is_taken() {
    let IdJag { f, .. } = setup();
    let subject = id_token(&f).await;
    let wrong_type = body(&subject, &to_other_as("files.read")).replace(ID_TOKEN, ACCESS);
    let response = f.token(Some(&agent_basic(AGENT)), &wrong_type).await;
    assert_refused(&response, "invalid_request", "subject_token_type");
    let with_actor = format!("&actor_token={subject}&actor_token_type={ID_TOKEN}");
    let extra = format!("{}{with_actor}", to_other_as("files.read"));
    let response = exchange(&f, &subject, &extra).await;
    assert_refused(&response, "invalid_request", "actor_token");
}

#[tokio::test]
async fn a_server_without_issuance_refuses_the_requested_token_type_and_lists_nothing() {
    let f = fixture_with(|b| b.openid_connect(OpenIdConnect::default()));
    f.register(agent(AGENT, |b| b));
    let subject = id_token(&f).await;
    let response = exchange(&f, &subject, &to_other_as("files.read")).await;
    assert_refused(&response, "invalid_request", "not issued by this server");
    let metadata = json(&f.server.metadata());
    assert!(
        metadata
            .get("identity_chaining_requested_token_types_supported")
            .is_none(),
        "{metadata}"
    );
}

#[tokio::test]
async fn the_metadata_lists_token_exchange_and_the_id_jag_token_type() {
    let IdJag { f, .. } = setup();
    let metadata = json(&f.server.metadata());
    let grants = metadata["grant_types_supported"].as_array().unwrap();
    assert!(grants.contains(&json!(GRANT)), "{metadata}");
    assert_eq!(
        metadata["identity_chaining_requested_token_types_supported"],
        json!([ID_JAG_TOKEN_TYPE])
    );
}

#[test]
fn issuance_without_openid_connect_is_a_configuration_error() {
    let built = AuthorizationServer::builder()
        .issuer(ISSUER)
        .store(grantor::MemoryStore::new())
        .id_jag_issuance(Arc::new(Policy { vouched_for: None }))
        .build();
    assert_eq!(built.err(), Some(ConfigError::IdJagWithoutOpenId));
}
