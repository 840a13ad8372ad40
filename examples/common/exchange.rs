//! The demo's token exchange policy (RFC 8693), as CONTRACT.md has it: `service-client` may
//! trade a user's access token meant for the demo API for one aimed at either of the demo's
//! resources. grantor has already checked the rest: the subject token is active, the audience
//! names known resources, the scope is within the subject token's.

use grantor::exchange::{ExchangePolicy, ExchangeRefusal, ExchangeRequest};

/// The demo's policy; `api` is the demo API's audience, `{issuer}/api`.
pub struct DemoExchange {
    api: String,
}

/// The demo's other resource (CONTRACT.md).
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
