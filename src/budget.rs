//! Who a request spends for, and every budget of what callers can make the server keep, in
//! one table.
//!
//! A request that makes the server keep something (a pushed request, a client assertion's
//! `jti`, a device flow, a DPoP proof's `jti`) spends for its client, and how far it may go is
//! decided by the client's [`ClientTier`] alone, never by a side fact such as whether it has a
//! registration access token:
//!
//! | what is kept | every client | a public client, per caller network | all self-registered clients | all document clients |
//! |---|---|---|---|---|
//! | pushed requests ([`PushedRequests`](crate::settings::PushedRequests)) | `per_client` a lifetime | `per_client` (the client: 10 × `per_client`) | `total` | `total` |
//! | client assertions (`private_key_jwt`) | `ASSERTIONS_PER_CLIENT` per six minutes | — (they are signed) | `ASSERTIONS_SELF_REGISTERED` | `ASSERTIONS_SELF_REGISTERED` |
//! | device flows ([`DeviceFlow`](crate::settings::DeviceFlow)) | `per_client` a lifetime | `per_client` (the client: 10 × `per_client`) | 5 × `per_client` | 5 × `per_client` |
//! | DPoP proofs at the token and PAR endpoints | per key | — | `PROOFS_PER_POOL` | `PROOFS_PER_POOL` |
//! | request objects' `jti`s (RFC 9101) | 10 000 per 61 minutes | — (they are signed) | 20 000 | 20 000 |
//!
//! An administrator's client has budgets of its own only. Clients anyone can make (a
//! registration, or a metadata document URL named in a request) spend their own budgets and
//! then a pool their whole tier shares, one pool per tier: filling one refuses nobody of
//! another tier. A public client's id is all a caller needs to speak for it, so its requests
//! also spend per caller network ([`CallerAddress`]), when the host hands the address over:
//! anonymous callers of one network do not refuse a public client's users elsewhere.
//!
//! The one-time values these budgets guard are kept apart by tier too (their names carry it:
//! `grantor:par-doc:…`, `grantor:assertion-self:…`, `grantor:dpop-doc:…`), and a store bounds
//! each kind apart, so a full pool or a full kind of one tier answers that tier alone.

use std::net::IpAddr;
use std::time::Duration;

use http::Request;

use crate::client::{Client, ClientTier};
use crate::clock::UnixTime;
use crate::error::OAuthError;
use crate::id::ClientId;
use crate::store::{AttemptCounter, namespace};
use crate::throttle::{Counted, Quota};

/// The network address a request came from, as the host hands it over: put into the
/// request's extensions before calling an endpoint (the axum glue takes it from
/// `ConnectInfo<SocketAddr>` when the app is served with connect info, the actix-web glue
/// from the connection's peer address). A host behind a proxy sets the address its proxy
/// reports, and only for a proxy it trusts.
///
/// What it is used for: requests of a public client (anyone who knows its id can make them)
/// spend per caller network as well as per client, so a flood from one network does not
/// refuse the client's users on another; failed client secrets count per client and caller
/// network, so a flood of wrong secrets does not lock the right one out. An IPv4 address
/// counts alone, an IPv6 address by its /64 (what one subscriber gets). Without it, those
/// budgets are per client, as if every request came from one network.
///
/// ```
/// use std::net::{IpAddr, Ipv4Addr};
/// let mut request = http::Request::new(Vec::<u8>::new());
/// request
///     .extensions_mut()
///     .insert(grantor::CallerAddress::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7))));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallerAddress(IpAddr);

impl CallerAddress {
    /// The caller at `address`.
    pub fn new(address: IpAddr) -> Self {
        Self(address.to_canonical())
    }

    /// Its address.
    pub fn address(&self) -> IpAddr {
        self.0
    }

    /// The caller of `request`, if the host handed it over.
    pub(crate) fn of<B>(request: &Request<B>) -> Option<Self> {
        request.extensions().get::<Self>().copied()
    }

    /// The network counted as one caller: an IPv4 address, an IPv6 /64.
    pub(crate) fn network(&self) -> String {
        match self.0 {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        }
    }
}

/// Who a request spends for: its client, the client's tier, and the caller's network when
/// the client is public (anyone may speak for it) and the host handed the address over.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Payer<'a> {
    client: &'a ClientId,
    tier: ClientTier,
    /// The caller's address, for a public client's request.
    anonymous: Option<CallerAddress>,
}

impl<'a> Payer<'a> {
    /// `client`'s request from `caller`.
    pub(crate) fn new(client: &'a Client, caller: Option<CallerAddress>) -> Self {
        Self {
            client: client.id(),
            tier: client.tier(),
            anonymous: caller.filter(|_| client.is_public()),
        }
    }
}

/// What a budget counts: each has its counters' names and its refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spending {
    /// Pushed authorization requests (RFC 9126).
    Pushes,
    /// Pushed requests a browser visited first, each then kept until its sign-in is answered
    /// (RFC 9126 §4): counted per sign-in window, so what waits is bounded as pushes are.
    Visits,
    /// Client assertions' `jti`s (`private_key_jwt`).
    #[cfg_attr(
        not(feature = "private-key-jwt"),
        allow(dead_code, reason = "spent by feature private-key-jwt")
    )]
    Assertions,
    /// Device authorizations (RFC 8628).
    DeviceStarts,
    /// DPoP proofs' `jti`s at the token and PAR endpoints.
    #[cfg_attr(
        not(feature = "dpop"),
        allow(dead_code, reason = "spent by feature dpop")
    )]
    DpopProofs,
    /// Request objects' `jti`s (RFC 9101).
    RequestObjects,
}

impl Spending {
    /// The counters' prefix (`par:` and the digest of the client id is the client's counter;
    /// `par:*` the self-registered pool, `par:doc` the documents' pool).
    fn prefix(self) -> &'static str {
        match self {
            Self::Pushes => "par",
            Self::Visits => "par-visit",
            Self::Assertions => "assertion",
            Self::DeviceStarts => "device",
            Self::DpopProofs => "dpop-client",
            Self::RequestObjects => "request-object",
        }
    }

    /// The 429's description when `whose` budget of this spending is spent.
    fn refusal(self, whose: Whose) -> &'static str {
        macro_rules! said {
            ($what:literal) => {
                match whose {
                    Whose::Network => {
                        concat!("too many ", $what, " from this network; try again later")
                    }
                    Whose::Client => {
                        concat!("too many ", $what, " by this client; try again later")
                    }
                    Whose::SelfRegistered => {
                        concat!(
                            "too many ",
                            $what,
                            " by self-registered clients; try again later"
                        )
                    }
                    Whose::Documents => concat!(
                        "too many ",
                        $what,
                        " by clients named by metadata documents; try again later"
                    ),
                }
            };
        }
        match self {
            Self::Pushes => said!("pushed requests"),
            Self::Visits => said!("pushed requests waiting for a sign-in"),
            Self::Assertions => said!("client assertions"),
            Self::DeviceStarts => said!("device authorizations"),
            Self::DpopProofs => said!("DPoP proofs"),
            Self::RequestObjects => said!("request objects"),
        }
    }

    /// The name of the pool `tier` shares, `None` for a tier with budgets of its own only.
    pub(crate) fn pool(self, tier: ClientTier) -> Option<&'static str> {
        let pools = match self {
            Self::Pushes => ["par:*", "par:doc"],
            Self::Visits => ["par-visit:*", "par-visit:doc"],
            Self::Assertions => ["assertion:*", "assertion:doc"],
            Self::DeviceStarts => ["device:*", "device:doc"],
            Self::DpopProofs => ["dpop-client:*", "dpop-client:doc"],
            Self::RequestObjects => ["request-object:*", "request-object:doc"],
        };
        match tier {
            ClientTier::Administered => None,
            ClientTier::SelfRegistered => Some(pools[0]),
            ClientTier::MetadataDocument => Some(pools[1]),
        }
    }
}

/// Whose budget a count spends, as its refusal names it.
#[derive(Debug, Clone, Copy)]
enum Whose {
    Network,
    Client,
    SelfRegistered,
    Documents,
}

impl Whose {
    /// Its name as a refusal's `tier` in `grantor_budget_refusals_total`.
    fn as_str(self) -> &'static str {
        match self {
            Self::Network => "network",
            Self::Client => "client",
            Self::SelfRegistered => "self_registered",
            Self::Documents => "document",
        }
    }
}

/// A public client's budget is this many times its per-network one: what bounds the state
/// callers of every network together make for it.
pub(crate) const NETWORKS_PER_PUBLIC_CLIENT: u32 = 10;

/// One budget: what it counts, over which window, and its limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) spending: Spending,
    pub(crate) window: Duration,
    /// What one client may spend in a window (`None`: no limit per client, as for DPoP
    /// proofs, which their key's budget bounds).
    pub(crate) per_client: Option<u32>,
    /// What all clients of one tier other than the administrator's may spend together.
    pub(crate) per_tier: u32,
}

impl Budget {
    /// Counts one spending of `payer`'s: the caller network's count (a public client's),
    /// the client's, then its tier's pool, narrowest first, so a refused request spends no
    /// wider budget. Past a limit, 429 `temporarily_unavailable`.
    pub(crate) async fn spend(
        &self,
        payer: &Payer<'_>,
        attempts: &dyn AttemptCounter,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let prefix = self.spending.prefix();
        if let Some(per_client) = self.per_client {
            let mut client_limit = per_client;
            if let Some(caller) = payer.anonymous {
                let key = namespace::network_spent(prefix, payer.client, &caller.network());
                self.count(&key, per_client, Whose::Network, attempts, now)
                    .await?;
                client_limit = per_client.saturating_mul(NETWORKS_PER_PUBLIC_CLIENT);
            }
            let key = namespace::client_spent(prefix, payer.client);
            self.count(&key, client_limit, Whose::Client, attempts, now)
                .await?;
        }
        self.spend_for_tier(payer.tier, attempts, now).await
    }

    /// Counts one spending against `tier`'s pool alone (nothing for an administrator's
    /// client): for what another budget already bounds per client or per key.
    pub(crate) async fn spend_for_tier(
        &self,
        tier: ClientTier,
        attempts: &dyn AttemptCounter,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        match self.spending.pool(tier) {
            Some(pool) => {
                let whose = match tier {
                    ClientTier::MetadataDocument => Whose::Documents,
                    ClientTier::SelfRegistered => Whose::SelfRegistered,
                    ClientTier::Administered => Whose::Client,
                };
                self.count(pool, self.per_tier, whose, attempts, now).await
            }
            None => Ok(()),
        }
    }

    async fn count(
        &self,
        key: &str,
        limit: u32,
        whose: Whose,
        attempts: &dyn AttemptCounter,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let quota = Quota {
            key,
            window: self.window,
            limit,
            refusal: self.spending.refusal(whose),
            counted: Counted {
                kind: self.spending.prefix(),
                tier: whose.as_str(),
            },
        };
        quota.count(attempts, now).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;
    use crate::client::{ClientSecret, SecretVerifier};
    use crate::secret::SecretDigest;

    fn client(tier: ClientTier, public: bool) -> Client {
        let id = format!("{tier:?}-{public}");
        let builder = if public {
            Client::public(&id)
        } else {
            Client::confidential(
                &id,
                SecretVerifier::digest(&ClientSecret::new("s".repeat(43))).unwrap(),
            )
        };
        let builder = builder.redirect_uri("https://app.example/cb");
        let builder = match tier {
            ClientTier::Administered => builder,
            ClientTier::SelfRegistered => {
                builder.registration_access_token(SecretDigest::of("rat"))
            }
            ClientTier::MetadataDocument => builder.read_from_document(),
        };
        builder.build().unwrap()
    }

    fn budget() -> Budget {
        Budget {
            spending: Spending::Pushes,
            window: Duration::from_secs(60),
            per_client: Some(2),
            per_tier: 3,
        }
    }

    async fn spends(payer: &Payer<'_>, store: &MemoryStore, times: usize) -> usize {
        let mut ok = 0;
        for _ in 0..times {
            if budget()
                .spend(payer, store, UnixTime::from_secs(1_000))
                .await
                .is_ok()
            {
                ok += 1;
            }
        }
        ok
    }

    #[tokio::test]
    async fn every_tier_but_the_administrators_shares_a_pool_of_its_own() {
        let store = MemoryStore::new();
        let documents: Vec<Client> = (0..3)
            .map(|i| {
                Client::public(format!("https://app{i}.example/doc"))
                    .redirect_uri("https://app.example/cb")
                    .read_from_document()
                    .build()
                    .unwrap()
            })
            .collect();
        let mut spent = 0;
        for document in &documents {
            spent += spends(&Payer::new(document, None), &store, 2).await;
        }
        assert_eq!(spent, 3, "the documents' pool holds three");
        // Neither the self-registered pool nor an administrator's client felt it.
        let registered = client(ClientTier::SelfRegistered, true);
        assert_eq!(spends(&Payer::new(&registered, None), &store, 5).await, 2);
        let administered = client(ClientTier::Administered, false);
        assert_eq!(spends(&Payer::new(&administered, None), &store, 5).await, 2);
    }

    #[tokio::test]
    async fn a_public_clients_callers_spend_per_network() {
        let store = MemoryStore::new();
        let public = client(ClientTier::Administered, true);
        let at = |ip: &str| Some(CallerAddress::new(ip.parse().unwrap()));
        let flood = Payer::new(&public, at("192.0.2.1"));
        assert_eq!(spends(&flood, &store, 10).await, 2);
        let user = Payer::new(&public, at("198.51.100.9"));
        assert_eq!(
            spends(&user, &store, 1).await,
            1,
            "another network still pushes"
        );
        // One IPv6 subscriber's /64 is one network.
        let v6 = Payer::new(&public, at("2001:db8:1:2::1"));
        let same = Payer::new(&public, at("2001:db8:1:2:ffff::9"));
        assert_eq!(spends(&v6, &store, 2).await, 2);
        assert_eq!(spends(&same, &store, 1).await, 0);
        // A confidential client's callers are the client: no network is counted.
        let confidential = client(ClientTier::Administered, false);
        assert!(
            Payer::new(&confidential, at("192.0.2.1"))
                .anonymous
                .is_none()
        );
    }

    #[test]
    fn every_pool_is_named_once_and_never_forgotten() {
        let tiers = [ClientTier::SelfRegistered, ClientTier::MetadataDocument];
        let spendings = [
            Spending::Pushes,
            Spending::Visits,
            Spending::Assertions,
            Spending::DeviceStarts,
            Spending::DpopProofs,
            Spending::RequestObjects,
        ];
        let mut named: Vec<&str> = spendings
            .iter()
            .flat_map(|s| tiers.map(|t| s.pool(t).unwrap()))
            .collect();
        named.sort_unstable();
        named.dedup();
        let mut pools = namespace::POOLS.to_vec();
        pools.sort_unstable();
        assert_eq!(named, pools);
        for pool in pools {
            assert!(namespace::is_server_wide(pool), "{pool}");
        }
        for spending in spendings {
            assert_eq!(spending.pool(ClientTier::Administered), None);
        }
    }

    #[test]
    fn the_stores_bound_for_each_kind_is_above_the_pools_that_fill_it() {
        // A pool may be kept twice over at a window's edge (the window's values and what is
        // left of the one before).
        let bound = crate::MemoryStore::MAX_SINGLE_USE as u64;
        let twice = |pool: u32| 2 * u64::from(pool);
        // Pushed requests, assertions and DPoP proofs: each tier's values are a kind apart.
        assert!(twice(crate::settings::PushedRequests::MAX_TOTAL) <= bound / 2);
        #[cfg(feature = "private-key-jwt")]
        assert!(twice(crate::client_assertion::ASSERTIONS_SELF_REGISTERED) <= bound / 2);
        #[cfg(feature = "dpop")]
        assert!(twice(crate::dpop::PROOFS_PER_POOL) <= bound / 2);
        assert!(twice(crate::grant::request_object::JTIS_PER_TIER) <= bound / 2);
        // Device flows share their kinds: both pools, and a public client's callers at the
        // default limits, together stay within half of it.
        let per_client = crate::settings::DeviceFlow::DEFAULT_PER_CLIENT;
        let pools = 2 * per_client * crate::grant::device::DEVICE_FLOWS_PER_TIER_PER_CLIENT_LIMIT;
        let public = per_client * NETWORKS_PER_PUBLIC_CLIENT;
        assert!(twice(pools + public) <= bound / 2);
    }

    #[test]
    fn an_ipv4_mapped_address_is_the_ipv4_caller() {
        let mapped = CallerAddress::new("::ffff:192.0.2.1".parse().unwrap());
        assert_eq!(mapped.network(), "192.0.2.1");
    }
}
