//! Outbound HTTP, a seam: what grantor sends to other servers (OpenID Connect Back-Channel
//! Logout tokens) and fetches from them (client ID metadata documents) goes through
//! [`Outbound`], which the host can replace. The default,
//! `HttpOutbound` (feature `outbound`), posts with `reqwest` over rustls, off the request
//! path, and never reaches a private, loopback, link-local or other special address whatever
//! a name resolves to ([`is_public_address`]): it connects to the very addresses it checked, so
//! a name that resolves differently the second time (DNS rebinding) gains nothing. It bounds
//! the fetches in flight to one server, however many names point at it, and the posts in
//! flight server-wide (see `HttpOutbound`).

#[cfg(feature = "outbound")]
mod http;

use std::fmt;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "outbound")]
pub use http::{HttpOutbound, NameResolver};

use crate::client::ClientId;

/// A form `POST` grantor wants delivered (a logout token to a client's
/// `backchannel_logout_uri`, say). `Debug` shows the URL and the form's names, never values.
#[derive(Clone)]
#[non_exhaustive]
pub struct OutboundPost {
    /// Where to post: an absolute `https` URL (or loopback `http` a test allowed).
    pub url: String,
    /// The `application/x-www-form-urlencoded` body's fields.
    pub form: Vec<(&'static str, String)>,
    /// The client it is for, for the events that report it.
    pub client_id: ClientId,
}

impl OutboundPost {
    /// A post of `form` to `url`, for `client_id`.
    pub fn new(
        url: impl Into<String>,
        form: Vec<(&'static str, String)>,
        client_id: ClientId,
    ) -> Self {
        Self {
            url: url.into(),
            form,
            client_id,
        }
    }
}

impl fmt::Debug for OutboundPost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.form.iter().map(|(name, _)| *name).collect();
        f.debug_struct("OutboundPost")
            .field("url", &self.url)
            .field("form", &names)
            .field("client_id", &self.client_id)
            .finish()
    }
}

/// How a post went, reported once its attempts are over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivery {
    /// The server answered `2xx`.
    Delivered,
    /// Every attempt failed: refused address, no connection, timeout, or a non-`2xx` answer.
    Failed,
}

/// A `GET` grantor wants answered (a client ID metadata document, say), with its bounds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OutboundGet {
    /// What to fetch: an absolute `https` URL (or loopback `http` a test allowed).
    pub url: String,
    /// The largest body taken; a longer one is [`FetchError::TooLarge`].
    pub max_bytes: usize,
    /// How long the whole fetch may take, connecting and reading included.
    pub timeout: Duration,
    /// What the fetch is for, as `grantor_outbound_total` counts it: one of a fixed set.
    pub(crate) call: &'static str,
}

impl OutboundGet {
    /// A `GET` of `url`, its body at most `max_bytes`, all of it within `timeout`.
    pub fn new(url: impl Into<String>, max_bytes: usize, timeout: Duration) -> Self {
        Self {
            url: url.into(),
            max_bytes,
            timeout,
            call: "other_get",
        }
    }

    /// The same fetch, counted as `call` (`client_document`, `jwks`).
    pub(crate) fn counted_as(self, call: &'static str) -> Self {
        Self { call, ..self }
    }
}

/// What a `GET` got: a `200` answer's body, within its bounds, and the headers grantor reads.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Fetched {
    /// The body.
    pub body: Vec<u8>,
    /// The `Cache-Control` header, if one was sent.
    pub cache_control: Option<String>,
    /// The `Content-Type` header, if one was sent.
    pub content_type: Option<String>,
}

impl Fetched {
    /// A `200` answer of `body`, with no headers.
    pub fn new(body: impl Into<Vec<u8>>) -> Self {
        Self {
            body: body.into(),
            ..Self::default()
        }
    }

    /// The same answer with its `Cache-Control` header.
    pub fn cache_control(mut self, value: impl Into<String>) -> Self {
        self.cache_control = Some(value.into());
        self
    }
}

/// Why a `GET` got no document: each variant says why in words a refusal can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// Not an `https` URL, or its host is (or resolves only to) a private, loopback,
    /// link-local or other special address.
    #[error("the URL may not be fetched: not https, or its host is a private or special address")]
    Refused,
    /// No connection, or the connection failed.
    #[error("the server could not be reached")]
    Unreachable,
    /// The fetch took longer than its timeout.
    #[error("the server did not answer in time")]
    Timeout,
    /// A `3xx` answer: redirects are never followed.
    #[error("the server answered with a redirect, which is not followed")]
    Redirected,
    /// Any other answer than `200`.
    #[error("the server answered with another status than 200")]
    Status(u16),
    /// A body over the bound.
    #[error("the document is larger than allowed")]
    TooLarge,
    /// Too many fetches to that server are in flight; nothing was sent. A later fetch may
    /// succeed.
    #[error("too many fetches to that server are in flight")]
    Busy,
    /// The outbound implementation does not fetch.
    #[error("this server's outbound client does not fetch documents")]
    Unsupported,
}

/// A fetch in flight.
pub type FetchFuture<'a> = Pin<Box<dyn Future<Output = Result<Fetched, FetchError>> + Send + 'a>>;

/// Sends grantor's outbound requests. [`post`](Outbound::post) returns at once: the request
/// is sent off the request path (with whatever retries the implementation makes), and `done`
/// is called with the outcome when it is over (grantor records it as an event).
/// [`get`](Outbound::get) fetches a document on the request path, within its bounds.
pub trait Outbound: Send + Sync {
    /// Queues `post` for delivery.
    fn post(&self, post: OutboundPost, done: Box<dyn FnOnce(Delivery) + Send>);

    /// Fetches `get`: a `200` answer's body of at most `get.max_bytes`, within `get.timeout`,
    /// no redirect followed, never from a private or special address. An implementation that
    /// bounds what it has in flight answers [`FetchError::Busy`] past its bound (grantor then
    /// answers `temporarily_unavailable` and keeps nothing). The default fetches nothing
    /// ([`FetchError::Unsupported`]).
    fn get(&self, get: OutboundGet) -> FetchFuture<'_> {
        let _ = get;
        Box::pin(std::future::ready(Err(FetchError::Unsupported)))
    }
}

/// The outbound seam, its requests counted by outcome in `grantor_outbound_total`
/// ([`crate::metrics`]). The builder puts it around the host's seam with the `metrics`
/// feature.
pub(crate) struct MeteredOutbound(pub(crate) Arc<dyn Outbound>);

impl MeteredOutbound {
    /// `outbound`, counted with the `metrics` feature, else as it is.
    pub(crate) fn around(outbound: Arc<dyn Outbound>) -> Arc<dyn Outbound> {
        if cfg!(feature = "metrics") {
            Arc::new(Self(outbound))
        } else {
            outbound
        }
    }
}

impl Outbound for MeteredOutbound {
    fn post(&self, post: OutboundPost, done: Box<dyn FnOnce(Delivery) + Send>) {
        self.0.post(
            post,
            Box::new(move |delivery| {
                let outcome = match delivery {
                    Delivery::Delivered => "ok",
                    Delivery::Failed => "failed",
                };
                crate::metrics::outbound("backchannel_logout", outcome);
                done(delivery);
            }),
        );
    }

    fn get(&self, get: OutboundGet) -> FetchFuture<'_> {
        let call = get.call;
        let fetch = self.0.get(get);
        Box::pin(async move {
            let fetched = fetch.await;
            crate::metrics::outbound(call, fetch_outcome(&fetched));
            fetched
        })
    }
}

/// A fetch's outcome as `grantor_outbound_total` names it.
fn fetch_outcome(fetched: &Result<Fetched, FetchError>) -> &'static str {
    match fetched {
        Ok(_) => "ok",
        Err(FetchError::Refused) => "refused",
        Err(FetchError::Unreachable) => "unreachable",
        Err(FetchError::Timeout) => "timeout",
        Err(FetchError::Redirected) => "redirected",
        Err(FetchError::Status(_)) => "status",
        Err(FetchError::TooLarge) => "too_large",
        Err(FetchError::Busy) => "busy",
        Err(FetchError::Unsupported) => "unsupported",
    }
}

/// Whether `address` is one grantor may send to: a globally routable unicast address. Refused:
/// loopback, private (RFC 1918, IPv6 unique local), link-local, carrier-grade NAT (RFC 6598),
/// unspecified, broadcast, multicast, documentation and benchmarking ranges, reserved and
/// IETF-protocol blocks, and IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64,
/// 6to4, Teredo) unless the embedded address is itself public.
///
/// ```
/// use grantor::outbound::is_public_address;
///
/// assert!(is_public_address("93.184.216.34".parse().unwrap()));
/// for refused in ["127.0.0.1", "10.1.2.3", "169.254.169.254", "100.64.0.1", "::1",
///                 "fd00::1", "::ffff:127.0.0.1", "64:ff9b::a00:1"] {
///     assert!(!is_public_address(refused.parse().unwrap()), "{refused}");
/// }
/// ```
pub fn is_public_address(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // Carrier-grade NAT (RFC 6598).
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments (RFC 6890), including 192.0.0.0/29 (DS-Lite).
        || (a == 192 && b == 0 && c == 0)
        // Benchmarking (RFC 2544).
        || (a == 198 && (b == 18 || b == 19))
        // Reserved (RFC 1112), 240.0.0.0/4.
        || a >= 240;
    !special
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let segments = ip.segments();
    let special = ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        // Unique local (RFC 4193), fc00::/7.
        || (segments[0] & 0xfe00) == 0xfc00
        // Link-local, fe80::/10, and the deprecated site-local, fec0::/10.
        || (segments[0] & 0xffc0) == 0xfe80
        || (segments[0] & 0xffc0) == 0xfec0
        // Documentation, 2001:db8::/32.
        || (segments[0] == 0x2001 && segments[1] == 0x0db8)
        // Teredo, 2001::/32, and other IETF protocol assignments under 2001::/23.
        || (segments[0] == 0x2001 && segments[1] < 0x0200)
        // Discard-only, 100::/64.
        || (segments[0] == 0x0100 && segments[1..4] == [0, 0, 0]);
    !special
}

/// The IPv4 address an IPv6 one carries: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::/96`, RFC 6052) and 6to4 (`2002::/16`, RFC 3056).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    if let Some(mapped) = ip.to_ipv4_mapped() {
        return Some(mapped);
    }
    match s {
        [0, 0, 0, 0, 0, 0, high, low] if high != 0 || low > 1 => Some(v4(high, low)),
        [0x0064, 0xff9b, 0, 0, 0, 0, high, low] => Some(v4(high, low)),
        [0x2002, high, low, ..] => Some(v4(high, low)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(address: &str) -> bool {
        is_public_address(address.parse().unwrap())
    }

    #[test]
    fn special_ipv4_ranges_are_refused() {
        for refused in [
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "127.255.0.1",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!public(refused), "{refused}");
        }
        for allowed in [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.0.1",
            "100.128.0.1",
            "172.32.0.1",
        ] {
            assert!(public(allowed), "{allowed}");
        }
    }

    #[test]
    fn special_ipv6_ranges_and_embedded_private_ipv4_are_refused() {
        for refused in [
            "::",
            "::1",
            "fc00::1",
            "fdff::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
            "100::1",
            "::ffff:10.0.0.1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "64:ff9b::192.168.0.1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::",
        ] {
            assert!(!public(refused), "{refused}");
        }
        for allowed in [
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2a00:1450::1",
        ] {
            assert!(public(allowed), "{allowed}");
        }
    }
}
