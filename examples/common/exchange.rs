//! The demo's token exchange policy (RFC 8693), as examples/README.md has it: `service-client` may
//! trade a user's access token meant for the demo API for one aimed at either of the demo's
//! resources. grantor has already checked the rest: the subject token is active, the audience
//! names known resources, the scope is within the subject token's. And its ID-JAG issuance
//! policy (draft-ietf-oauth-identity-assertion-authz-grant).

use grantor::client::{Client, ClientTier};
use grantor::exchange::{ExchangePolicy, ExchangeRefusal, ExchangeRequest};
use grantor::id_jag::{IdJagGrant, IdJagPolicy, IdJagRefusal, IdJagRequest};

/// The demo's policy; `api` is the demo API's audience, `{issuer}/api`.
pub struct DemoExchange {
    api: String,
}

/// The demo's other resource (examples/README.md).
const OTHER: &str = "https://resource.example/";

impl DemoExchange {
    pub fn new(api: &str) -> Self {
        Self {
            api: api.to_owned(),
        }
    }
}

#[async_trait::async_trait]
impl ExchangePolicy for DemoExchange {
    async fn decide(&self, request: &ExchangeRequest<'_>) -> Result<(), ExchangeRefusal> {
        if request.client.id().as_str() != "service-client" {
            return Err(ExchangeRefusal::Client);
        }
        // A user's token, meant for the demo API: what the service was called with.
        let subject = &request.subject.authorization;
        let for_the_api = subject.audience.is_empty() || subject.audience.contains(&self.api);
        if subject.user.is_none() || !for_the_api {
            return Err(ExchangeRefusal::Subject);
        }
        // Delegation only to the service itself: an actor token it got for itself.
        if let Some(actor) = request.actor {
            let actor = &actor.authorization;
            if actor.user.is_some() || actor.client_id != *request.client.id() {
                return Err(ExchangeRefusal::Actor);
            }
        }
        if !request.audience.iter().all(|r| r == OTHER || r == self.api) {
            return Err(ExchangeRefusal::Target);
        }
        Ok(())
    }
}

/// The demo as the enterprise's identity provider: `service-client` may
/// trade a user's ID token for an Identity Assertion JWT Authorization Grant aimed at any other
/// authorization server, which knows it by its own id here, with the scope it asked for.
/// grantor has already checked the rest: the ID token is this server's and unexpired, its user
/// exists, the audience and resource are absolute URIs.
pub struct DemoIdJag;

#[async_trait::async_trait]
impl IdJagPolicy for DemoIdJag {
    /// The service is the platform's own backend: it may exchange the ID tokens of the clients
    /// an administrator registered (the seeded ones), never those of a self-registered client
    /// or a metadata document, whose users never trusted it.
    fn accepts_id_tokens_of(&self, client: &Client, issued_to: &Client) -> bool {
        client.id().as_str() == "service-client" && issued_to.tier() == ClientTier::Administered
    }

    async fn decide(&self, request: &IdJagRequest<'_>) -> Result<IdJagGrant, IdJagRefusal> {
        if request.client.id().as_str() != "service-client" {
            return Err(IdJagRefusal::Client);
        }
        Ok(IdJagGrant::new(
            request.client.id().as_str(),
            request.scope.cloned(),
        ))
    }
}
