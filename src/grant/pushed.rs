//! Pushed authorization requests (RFC 9126): validating a pushed request exactly as the
//! authorization endpoint would, keeping it under a `request_uri`, and handing it to the
//! authorization endpoint for the client that pushed it until the sign-in it starts is
//! answered, once.

use super::authorize::{self, ResponseType, Rules, Validated};
use super::pending::{self, PendingAuthorization};
use super::proof::{Possession, ProofOfPossession};
use crate::budget::{Budget, CallerAddress, Payer, Spending};
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError, StoreError};
use crate::mint;
use crate::request::AuthorizationRequest;
use crate::settings::PushedRequests;
use crate::store::seam::ClientSeam;
use crate::store::{AttemptCounter, SingleUseStore, namespace};

/// What pushing and redeeming requests needs.
#[derive(Clone, Copy)]
pub(crate) struct Pushes<'a> {
    pub(crate) settings: &'a PushedRequests,
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) rules: Rules<'a>,
    pub(crate) single_use: &'a dyn SingleUseStore,
    pub(crate) attempts: &'a dyn AttemptCounter,
    /// Set when DPoP is on: a pushed request's proof binds its code (RFC 9449 §10.1).
    pub(crate) proofs: Option<&'a dyn ProofOfPossession>,
    /// How long after its push a request's sign-in may be answered (the authorization
    /// request lifetime): how long a visited request is kept.
    pub(crate) sign_in_window: std::time::Duration,
}

/// A request kept: what the PAR endpoint answers (RFC 9126 §2.2). No `Debug`: the reference
/// starts the authorization it names, so it stays out of logs.
pub(crate) struct Pushed {
    pub(crate) request_uri: String,
    pub(crate) expires_in: u64,
}

impl Pushes<'_> {
    /// Validates `request` for the authenticated `client` as the authorization endpoint would
    /// (RFC 9126 §2.1) and keeps it under a new `request_uri`. Every error is answered to the
    /// client directly, never redirected (RFC 9126 §2.3). With a DPoP proof (`possession`),
    /// the code will be bound to its key (RFC 9449 §10.1), which `dpop_jkt`, if sent, must name.
    pub(crate) async fn push(
        &self,
        client: &Client,
        request: &AuthorizationRequest<'_>,
        possession: Option<&dyn Possession>,
        caller: Option<CallerAddress>,
        now: UnixTime,
    ) -> Result<Pushed, OAuthError> {
        if request.request_uri.is_some() {
            return Err(OAuthError::invalid_request(
                "a pushed request may not carry request_uri (RFC 9126 section 2.1)",
            ));
        }
        if request
            .client_id
            .is_some_and(|id| id != client.id().as_str())
        {
            return Err(OAuthError::invalid_request(
                "client_id differs from the authenticated client",
            ));
        }
        let request = AuthorizationRequest {
            client_id: Some(client.id().as_str()),
            ..request.clone()
        };
        let rules = Rules {
            pushed: true,
            ..self.rules
        };
        let mut pending = match authorize::validate(self.clients, rules, &request, now).await {
            Validated::SignIn(pending) => pending,
            Validated::Redirect(error, _) | Validated::Reject(error) => return Err(error),
        };
        if let Some(possession) = possession {
            let jkt = possession.jkt();
            if pending.dpop_jkt.is_some_and(|named| named != jkt) {
                return Err(OAuthError::new(
                    ErrorCode::InvalidDpopProof,
                    "dpop_jkt is not the thumbprint of the DPoP proof's key (RFC 9449 section 10.1)",
                ));
            }
            // Only a code carries the binding to its redemption.
            if pending.response_type == ResponseType::Code {
                pending.dpop_jkt = Some(jkt);
            }
        }
        self.count(client, caller, now).await?;
        if let Some(possession) = possession {
            possession.spend(client.tier(), now).await?;
        }
        let lifetime = self.settings.lifetime_value();
        // The mark keeps each tier's pushed requests a kind of their own in the store.
        let reference = format!(
            "{}{}",
            namespace::pushed_reference_mark(client.tier()),
            mint::request_reference()?
        );
        let kept = self
            .single_use
            .insert_once(
                &namespace::pushed_request(&reference),
                pending::to_session(&pending).as_bytes(),
                now.plus(lifetime),
                now,
            )
            .await?;
        if !kept {
            // 256 random bits never collide; a store that says so is broken.
            return Err(StoreError::failed("a fresh request_uri was already taken").into());
        }
        Ok(Pushed {
            request_uri: format!("{}{reference}", PushedRequests::REQUEST_URI_PREFIX),
            expires_in: lifetime.as_secs(),
        })
    }

    /// Counts a push against the client's budget and its tier's pool, per lifetime window
    /// ([`budget`](crate::budget)); a public client's pushes also per caller network. A client
    /// an administrator registered has only its own budget, so a flood from clients anyone
    /// can make never refuses it.
    async fn count(
        &self,
        client: &Client,
        caller: Option<CallerAddress>,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let budget = Budget {
            spending: Spending::Pushes,
            window: self.settings.lifetime_value(),
            per_client: Some(self.settings.per_client_limit()),
            per_tier: self.settings.total_limit(),
        };
        budget
            .spend(&Payer::new(client, caller), self.attempts, now)
            .await
    }

    /// The pushed request behind `request_uri`, for the client that pushed it only (RFC 9126
    /// §4). The first visit moves it out of its push's short lifetime into the sign-in's
    /// (`sign_in_window` from the push), and every visit until the sign-in is answered gets it
    /// again, so a reloaded or revisited page still works (RFC 9126 §4 allows it for reloads;
    /// FAPI 2.0 recommends it). Answering the sign-in spends it
    /// ([`spend_visited`]), so it is still answered once. Every error is shown by the host,
    /// never redirected: the request's redirect URI is not known to be the client's until the
    /// request is found.
    pub(crate) async fn redeem(
        &self,
        client_id: Option<&str>,
        request_uri: &str,
        now: UnixTime,
    ) -> Result<PendingAuthorization, OAuthError> {
        let client_id = client_id.ok_or_else(|| {
            OAuthError::invalid_request("client_id is missing (RFC 9126 section 4)")
        })?;
        let reference = request_uri
            .strip_prefix(PushedRequests::REQUEST_URI_PREFIX)
            .ok_or_else(unusable)?;
        let pushed = namespace::pushed_request(reference);
        let visited = namespace::visited_pushed_request(reference);
        // Looked at before it is moved, so another client naming it cannot spend it.
        let mut pending = match self.single_use.peek(&pushed, now).await? {
            Some(peeked) => {
                let text = owned_by(peeked, client_id)?;
                // It will wait longer than it was pushed for: counted, per client and tier in
                // each sign-in window, as pushes are in theirs, before anything moves.
                let owner = pending::from_session(&text, self.clients).await?;
                self.count_visit(&owner.client, now).await?;
                // Of concurrent first visits one moves it; the others find it moved.
                if self.single_use.take(&pushed, now).await?.is_some() {
                    let created_at =
                        UnixTime::from_secs(pending::created_at(&text).map_err(|_| corrupt())?);
                    let kept = self
                        .single_use
                        .insert_once(
                            &visited,
                            text.as_bytes(),
                            created_at.plus(self.sign_in_window),
                            now,
                        )
                        .await?;
                    if !kept {
                        // Only the visit that took it moves it here; a store that says the
                        // place is held is broken.
                        return Err(StoreError::failed(
                            "a visited pushed request was already kept",
                        )
                        .into());
                    }
                    owner
                } else {
                    self.visited(&visited, client_id, now).await?
                }
            }
            None => self.visited(&visited, client_id, now).await?,
        };
        pending.pushed = Some(visited.into());
        Ok(pending)
    }

    /// Counts a first visit of `client`'s pushed request against the visit budget: the push
    /// quotas' numbers, per authorization request lifetime, so the requests waiting for their
    /// sign-in are bounded as pushed ones are (per client, and per tier for the tiers anyone
    /// can make) however much longer they wait.
    async fn count_visit(&self, client: &Client, now: UnixTime) -> Result<(), OAuthError> {
        let budget = Budget {
            spending: Spending::Visits,
            window: self.sign_in_window,
            per_client: Some(self.settings.per_client_limit()),
            per_tier: self.settings.total_limit(),
        };
        budget
            .spend(&Payer::new(client, None), self.attempts, now)
            .await
    }

    /// A pushed request a browser visited before, while its sign-in is unanswered.
    async fn visited(
        &self,
        key: &str,
        client_id: &str,
        now: UnixTime,
    ) -> Result<PendingAuthorization, OAuthError> {
        match self.single_use.peek(key, now).await? {
            Some(peeked) => {
                pending::from_session(&owned_by(peeked, client_id)?, self.clients).await
            }
            None => Err(unusable()),
        }
    }
}

/// Spends the visited pushed request under `key` that a sign-in came from, as the sign-in is
/// answered: answers whether it was still unspent. Of two sign-ins started from one
/// `request_uri` (two tabs, a revisit) only the first answered gets anything.
pub(crate) async fn spend_visited(
    single_use: &dyn SingleUseStore,
    key: &str,
    now: UnixTime,
) -> Result<bool, StoreError> {
    Ok(single_use.take(key, now).await?.is_some())
}

/// The refusal of a `request_uri` that serves nothing, whichever the reason.
fn unusable() -> OAuthError {
    OAuthError::new(
        ErrorCode::InvalidRequestUri,
        "request_uri is unknown, expired, already used or pushed by another client",
    )
}

/// A kept pushed request's text, if `client_id` pushed it.
fn owned_by(kept: Vec<u8>, client_id: &str) -> Result<String, OAuthError> {
    let text = String::from_utf8(kept).map_err(|_| corrupt())?;
    if pending::client_id(&text).map_err(|_| corrupt())? != client_id {
        return Err(unusable());
    }
    Ok(text)
}

fn corrupt() -> OAuthError {
    StoreError::failed("a stored pushed request is malformed").into()
}
