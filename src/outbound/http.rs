//! [`HttpOutbound`]: the default [`Outbound`], `reqwest` over rustls on the host's tokio
//! runtime.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::{
    Delivery, FetchError, FetchFuture, Fetched, Outbound, OutboundGet, OutboundPost,
    is_public_address,
};

/// Looks names up: the system's resolver by default; a test's own
/// ([`HttpOutbound::resolver`]) to see which addresses are refused without a network.
pub trait NameResolver: Send + Sync {
    /// The addresses `host` resolves to.
    fn resolve(
        &self,
        host: &str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>;
}

/// The system's resolver (`getaddrinfo`, through tokio).
struct SystemResolver;

impl NameResolver for SystemResolver {
    fn resolve(
        &self,
        host: &str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>
    {
        let host = host.to_owned();
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(found.map(|address| address.ip()).collect())
        })
    }
}

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one attempt may take in all.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// The waits before the second and third attempts.
const RETRY_WAITS: [Duration; 2] = [Duration::from_millis(500), Duration::from_millis(1500)];

/// Posts grantor's outbound requests with `reqwest` over rustls, each on a task of the host's
/// tokio runtime (never on the request path): at most three attempts (a connection failure, a
/// timeout or a `5xx` is tried again after 0.5 s, then 1.5 s; any other answer is final), 2 s
/// to connect and 5 s per attempt, no redirects followed, no proxy. It sends only to `https`
/// URLs whose host resolves to public addresses ([`is_public_address`]); the connection goes to
/// the addresses checked.
///
/// What bounds what, whoever names the URLs:
/// - **Fetches by destination.** A `GET`'s host is looked up once; the fetch connects only to
///   the first address of each family in the answer, and takes a place at each of those
///   destinations (an IPv4 address, or an IPv6 `/64`, what one party is likely to hold). At
///   most [`MAX_FETCHES_PER_DESTINATION`](Self::MAX_FETCHES_PER_DESTINATION) fetches are in
///   flight to one destination; past it a fetch is [`FetchError::Busy`] at once. So any
///   number of names pointing at one slow server (wildcard DNS) holds no more than that. The
///   table of destinations in flight holds one entry per fetch at most (about 100 bytes each),
///   and the names being fetched with their answers (two addresses each, the name at most its
///   URL's length): the caller's own bound on fetches in flight bounds both. Names that
///   each resolve to another address (many servers, or unused addresses that never accept a
///   connection, each held up to the 2 s connect timeout) are bounded by the caller's bound
///   alone.
/// - **Posts.** At most [`MAX_POSTS_IN_FLIGHT`](Self::MAX_POSTS_IN_FLIGHT) posts are being
///   delivered (retries included) at once, server-wide, each holding its URL and form (for a
///   logout token, a registered URI of at most the server's parameter bound, 4 KiB by default,
///   and a token of about 1 KiB) and one connection; past it a post fails at once
///   ([`Delivery::Failed`], which grantor reports as an event).
///
/// By default only public addresses are reached and only the platform's certificate roots
/// are trusted: [`extra_root`](Self::extra_root) trusts one more root (a private CA), and
/// [`allow_loopback`](Self::allow_loopback) lets a test reach loopback; they are separate
/// settings.
///
/// ```
/// use grantor::outbound::HttpOutbound;
///
/// let outbound = HttpOutbound::new().unwrap();
/// # let _ = outbound;
/// ```
#[derive(Clone)]
pub struct HttpOutbound {
    client: reqwest::Client,
    options: Options,
    in_flight: Arc<InFlight>,
}

/// What an [`HttpOutbound`] is built from; each setter rebuilds the client from it.
#[derive(Clone)]
struct Options {
    allow_loopback: bool,
    extra_root: Option<Vec<u8>>,
    resolver: Arc<dyn NameResolver>,
}

impl std::fmt::Debug for HttpOutbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOutbound")
            .field("allow_loopback", &self.options.allow_loopback)
            .field("extra_root", &self.options.extra_root.is_some())
            .finish_non_exhaustive()
    }
}

/// Why an [`HttpOutbound`] could not be made.
#[derive(Debug, thiserror::Error)]
#[error("the outbound HTTP client could not be built: {0}")]
pub struct OutboundError(String);

impl HttpOutbound {
    /// The most fetches in flight to one destination (an IPv4 address, an IPv6 `/64`).
    pub const MAX_FETCHES_PER_DESTINATION: usize = 4;
    /// The most posts being delivered at once, server-wide.
    pub const MAX_POSTS_IN_FLIGHT: usize = 64;

    /// An outbound client that trusts the platform's certificate roots and reaches public
    /// addresses only.
    pub fn new() -> Result<Self, OutboundError> {
        Self::with(Options {
            allow_loopback: false,
            extra_root: None,
            resolver: Arc::new(SystemResolver),
        })
    }

    /// For tests only: [`new`](Self::new), then [`allow_loopback`](Self::allow_loopback) and,
    /// if given, [`extra_root`](Self::extra_root). A deployment that trusts a private CA wants
    /// `HttpOutbound::new()?.extra_root(pem)?` alone.
    pub fn for_tests(extra_root: Option<&[u8]>) -> Result<Self, OutboundError> {
        Self::with(Options {
            allow_loopback: true,
            extra_root: extra_root.map(<[u8]>::to_vec),
            resolver: Arc::new(SystemResolver),
        })
    }

    /// The same client trusting `pem` (a PEM certificate, say a private CA's) beside the
    /// platform's roots. It changes which servers are believed, not which are reached:
    /// loopback and every private or special address stay refused.
    pub fn extra_root(self, pem: &[u8]) -> Result<Self, OutboundError> {
        let mut options = self.options;
        options.extra_root = Some(pem.to_vec());
        Self::with(options)
    }

    /// For tests only: the same client reaching loopback addresses (`127.0.0.0/8`, `::1`) too,
    /// over `http` as well as `https`. Every other private or special address stays refused.
    pub fn allow_loopback(self) -> Result<Self, OutboundError> {
        let mut options = self.options;
        options.allow_loopback = true;
        Self::with(options)
    }

    /// The same client looking names up with `resolver` (whose answers are checked as the
    /// system's are): for tests that need a name to resolve to a given address.
    pub fn resolver(self, resolver: Arc<dyn NameResolver>) -> Result<Self, OutboundError> {
        let mut options = self.options;
        options.resolver = resolver;
        Self::with(options)
    }

    fn with(options: Options) -> Result<Self, OutboundError> {
        let in_flight = Arc::new(InFlight::default());
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(ATTEMPT_TIMEOUT)
            .dns_resolver(Arc::new(PublicOnly {
                allow_loopback: options.allow_loopback,
                resolver: Arc::clone(&options.resolver),
                in_flight: Arc::clone(&in_flight),
            }));
        if let Some(pem) = &options.extra_root {
            let root =
                reqwest::Certificate::from_pem(pem).map_err(|e| OutboundError(e.to_string()))?;
            builder = builder.add_root_certificate(root);
        }
        let client = builder.build().map_err(|e| OutboundError(e.to_string()))?;
        Ok(Self {
            client,
            options,
            in_flight,
        })
    }

    /// Where `url` may go, before any name is resolved: `https` (or loopback `http` when
    /// allowed), no userinfo, and an IP-literal host only if its address may be reached (a
    /// literal is never resolved, so it is checked here).
    fn target(&self, url: &str) -> Option<Target> {
        let url = url::Url::parse(url).ok()?;
        let target = match url.host()? {
            url::Host::Ipv4(ip) => Target::Address(IpAddr::V4(ip)),
            url::Host::Ipv6(ip) => Target::Address(IpAddr::V6(ip)),
            url::Host::Domain(name) => Target::Name(name.to_owned()),
        };
        let loopback = match &target {
            Target::Address(ip) => ip.is_loopback(),
            Target::Name(name) => name == "localhost",
        };
        let scheme_ok = match url.scheme() {
            "https" => true,
            "http" => self.options.allow_loopback && loopback,
            _ => false,
        };
        let reachable = match &target {
            Target::Address(ip) => allowed(*ip, self.options.allow_loopback),
            Target::Name(_) => true,
        };
        let ok = scheme_ok && url.username().is_empty() && url.password().is_none() && reachable;
        ok.then_some(target)
    }

    async fn deliver(&self, post: &OutboundPost) -> Delivery {
        if self.target(&post.url).is_none() {
            return Delivery::Failed;
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(
                post.form
                    .iter()
                    .map(|(name, value)| (*name, value.as_str())),
            )
            .finish();
        for wait in std::iter::once(Duration::ZERO).chain(RETRY_WAITS) {
            tokio::time::sleep(wait).await;
            let sent = self
                .client
                .post(&post.url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body.clone())
                .send()
                .await;
            match sent {
                Ok(answer) if answer.status().is_success() => return Delivery::Delivered,
                // The server may be back soon: try again.
                Ok(answer) if answer.status().is_server_error() => continue,
                // A refusal or a redirect (never followed) will not change: no retry.
                Ok(_) => return Delivery::Failed,
                Err(_) => continue,
            }
        }
        Delivery::Failed
    }

    /// The host's addresses that may be reached, looked up once, and a place among the
    /// fetches in flight to them ([`FetchError::Busy`] when one is full).
    async fn place(&self, target: Target) -> Result<Place, FetchError> {
        let name = match target {
            Target::Address(ip) => return self.in_flight.take(None, &[ip]),
            Target::Name(name) => name,
        };
        let answer = self
            .options
            .resolver
            .resolve(&name)
            .await
            .map_err(|_| FetchError::Unreachable)?;
        let reachable: Vec<IpAddr> = answer
            .into_iter()
            .filter(|ip| allowed(*ip, self.options.allow_loopback))
            .collect();
        if reachable.is_empty() {
            return Err(FetchError::Refused);
        }
        self.in_flight.take(Some(pin_key(&name)), &reachable)
    }

    /// One `GET`, its body read up to the bound.
    async fn fetch(&self, get: &OutboundGet) -> Result<Fetched, FetchError> {
        let target = self.target(&get.url).ok_or(FetchError::Refused)?;
        // Held until the fetch is over (or dropped at its timeout).
        let _place = self.place(target).await?;
        let sent = self
            .client
            .get(&get.url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| fetch_error(&e))?;
        let status = sent.status();
        if status.is_redirection() {
            return Err(FetchError::Redirected);
        }
        if status != reqwest::StatusCode::OK {
            return Err(FetchError::Status(status.as_u16()));
        }
        let header = |name| {
            sent.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let cache_control = header(reqwest::header::CACHE_CONTROL);
        let content_type = header(reqwest::header::CONTENT_TYPE);
        if sent
            .content_length()
            .is_some_and(|length| length > get.max_bytes as u64)
        {
            return Err(FetchError::TooLarge);
        }
        let mut sent = sent;
        let mut body = Vec::new();
        while let Some(chunk) = sent.chunk().await.map_err(|e| fetch_error(&e))? {
            if body.len() + chunk.len() > get.max_bytes {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched {
            body,
            cache_control,
            content_type,
        })
    }
}

/// A URL's host: an address written in it, or a name to look up.
enum Target {
    Address(IpAddr),
    Name(String),
}

/// What a `reqwest` failure was: a refused address (the resolver's answer), a timeout, or no
/// connection.
fn fetch_error(error: &reqwest::Error) -> FetchError {
    if error.is_timeout() {
        return FetchError::Timeout;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::PermissionDenied
        {
            return FetchError::Refused;
        }
        source = cause.source();
    }
    FetchError::Unreachable
}

impl Outbound for HttpOutbound {
    fn get(&self, get: OutboundGet) -> FetchFuture<'_> {
        Box::pin(async move {
            match tokio::time::timeout(get.timeout, self.fetch(&get)).await {
                Ok(fetched) => fetched,
                Err(_) => Err(FetchError::Timeout),
            }
        })
    }

    fn post(&self, post: OutboundPost, done: Box<dyn FnOnce(Delivery) + Send>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            done(Delivery::Failed);
            return;
        };
        let Some(place) = PostPlace::take(&self.in_flight) else {
            done(Delivery::Failed);
            return;
        };
        let outbound = self.clone();
        runtime.spawn(async move {
            let delivery = outbound.deliver(&post).await;
            drop(place);
            done(delivery);
        });
    }
}

/// Whether an address may be connected to.
fn allowed(ip: IpAddr, allow_loopback: bool) -> bool {
    is_public_address(ip) || (allow_loopback && ip.is_loopback())
}

/// What is in flight, shared by the clones of one [`HttpOutbound`] and its resolver, behind a
/// lock held for no await.
#[derive(Default)]
struct InFlight {
    places: Mutex<Places>,
    /// Posts being delivered.
    posts: AtomicUsize,
}

#[derive(Default)]
struct Places {
    /// The names being fetched: the addresses their fetches connect to (the first answer's,
    /// whatever a later lookup says) and how many fetches use them.
    names: HashMap<String, (Vec<IpAddr>, usize)>,
    /// Fetches in flight by destination ([`destination`]).
    destinations: HashMap<IpAddr, usize>,
}

impl InFlight {
    fn places(&self) -> std::sync::MutexGuard<'_, Places> {
        // Every change leaves the maps consistent before anything that could panic.
        self.places.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for a fetch of `name` (pinned to `reachable` unless another fetch pinned it
    /// first), or of an address written in the URL.
    fn take(
        self: &Arc<Self>,
        name: Option<String>,
        reachable: &[IpAddr],
    ) -> Result<Place, FetchError> {
        let mut places = self.places();
        let addresses = match name.as_ref().and_then(|name| places.names.get(name)) {
            Some((pinned, _)) => pinned.clone(),
            None => first_of_each_family(reachable),
        };
        let mut destinations: Vec<IpAddr> = addresses.iter().map(|ip| destination(*ip)).collect();
        destinations.dedup();
        let full = |d: &IpAddr| {
            places.destinations.get(d).copied().unwrap_or(0)
                >= HttpOutbound::MAX_FETCHES_PER_DESTINATION
        };
        if destinations.iter().any(full) {
            return Err(FetchError::Busy);
        }
        for d in &destinations {
            *places.destinations.entry(*d).or_default() += 1;
        }
        if let Some(name) = &name {
            places.names.entry(name.clone()).or_insert((addresses, 0)).1 += 1;
        }
        Ok(Place {
            in_flight: Arc::clone(self),
            name,
            destinations,
        })
    }

    /// The addresses a fetch in flight pinned `name` to, if any.
    fn pinned(&self, name: &str) -> Option<Vec<IpAddr>> {
        let places = self.places();
        places
            .names
            .get(&pin_key(name))
            .map(|(pinned, _)| pinned.clone())
    }
}

/// A fetch's place in flight, given back when dropped.
struct Place {
    in_flight: Arc<InFlight>,
    name: Option<String>,
    destinations: Vec<IpAddr>,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut places = self.in_flight.places();
        for d in &self.destinations {
            if let Some(count) = places.destinations.get_mut(d) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    places.destinations.remove(d);
                }
            }
        }
        if let Some(name) = &self.name
            && let Some((_, count)) = places.names.get_mut(name)
        {
            *count = count.saturating_sub(1);
            if *count == 0 {
                places.names.remove(name);
            }
        }
    }
}

/// A post's place among those being delivered, given back when dropped.
struct PostPlace(Arc<InFlight>);

impl PostPlace {
    fn take(in_flight: &Arc<InFlight>) -> Option<Self> {
        let before = in_flight.posts.fetch_add(1, Ordering::SeqCst);
        let place = Self(Arc::clone(in_flight));
        (before < HttpOutbound::MAX_POSTS_IN_FLIGHT).then_some(place)
    }
}

impl Drop for PostPlace {
    fn drop(&mut self) {
        self.0.posts.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The first IPv4 and the first IPv6 address of an answer, in its order: what a fetch
/// connects to (one of each, so a server without IPv6 still reaches a dual-stack host).
fn first_of_each_family(answer: &[IpAddr]) -> Vec<IpAddr> {
    let v4 = answer.iter().find(|ip| ip.is_ipv4());
    let v6 = answer.iter().find(|ip| ip.is_ipv6());
    let mut first: Vec<IpAddr> = v4.into_iter().chain(v6).copied().collect();
    // Keep the answer's preference.
    first.sort_by_key(|ip| answer.iter().position(|a| a == ip));
    first
}

/// Whose server an address is, as far as a bound can tell: an IPv4 address, or an IPv6 `/64`
/// (one site's usual share; an IPv4-mapped address counts as its IPv4 one).
fn destination(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u128::MAX >> 64))),
    }
}

/// A name as the pins know it: without case or a trailing dot.
fn pin_key(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// A resolver that answers only the addresses that may be reached, so the connection is made
/// to an address that was checked: for a name a fetch in flight looked up, that fetch's
/// addresses (so a second answer, DNS rebinding or another server, changes nothing).
struct PublicOnly {
    allow_loopback: bool,
    resolver: Arc<dyn NameResolver>,
    in_flight: Arc<InFlight>,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        if let Some(pinned) = self.in_flight.pinned(name.as_str()) {
            let addresses = pinned.into_iter().map(|ip| SocketAddr::new(ip, 0));
            let addresses: Vec<SocketAddr> = addresses.collect();
            return Box::pin(std::future::ready(Ok(
                Box::new(addresses.into_iter()) as Addrs
            )));
        }
        let allow_loopback = self.allow_loopback;
        let lookup = self.resolver.resolve(name.as_str());
        Box::pin(async move {
            let found = lookup.await?;
            let reachable: Vec<SocketAddr> = found
                .into_iter()
                .filter(|ip| allowed(*ip, allow_loopback))
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            if reachable.is_empty() {
                let refused = std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "the name resolves to no public address",
                );
                return Err(Box::new(refused) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(reachable.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destination_is_an_ipv4_address_or_an_ipv6_64() {
        let d = |s: &str| destination(s.parse().unwrap()).to_string();
        assert_eq!(d("93.184.216.34"), "93.184.216.34");
        assert_eq!(d("::ffff:93.184.216.34"), "93.184.216.34");
        assert_eq!(d("2001:4860:1:2:aaaa::1"), "2001:4860:1:2::");
        assert_eq!(d("2001:4860:1:2:bbbb::9"), "2001:4860:1:2::");
    }

    #[test]
    fn a_fetch_connects_to_the_first_address_of_each_family() {
        let ips = |s: &[&str]| {
            s.iter()
                .map(|a| a.parse().unwrap())
                .collect::<Vec<IpAddr>>()
        };
        let answer = ips(&["2001:4860::1", "1.1.1.1", "2001:4860::2", "8.8.8.8"]);
        assert_eq!(
            first_of_each_family(&answer),
            ips(&["2001:4860::1", "1.1.1.1"])
        );
        assert_eq!(first_of_each_family(&ips(&["8.8.8.8"])), ips(&["8.8.8.8"]));
    }

    #[test]
    fn names_cannot_multiply_a_destinations_fetches() {
        let in_flight = Arc::new(InFlight::default());
        let slow: IpAddr = "203.0.114.7".parse().unwrap();
        let mut held = Vec::new();
        for n in 0..HttpOutbound::MAX_FETCHES_PER_DESTINATION {
            let name = format!("n{n}.attacker.example");
            held.push(in_flight.take(Some(name), &[slow]).unwrap());
        }
        let another = in_flight.take(Some("n99.attacker.example".into()), &[slow]);
        assert!(matches!(another, Err(FetchError::Busy)));
        // Another server is not held up, and a place given back is free again.
        let other: IpAddr = "198.51.101.1".parse().unwrap();
        assert!(in_flight.take(Some("app.example".into()), &[other]).is_ok());
        held.pop();
        assert!(
            in_flight
                .take(Some("n100.attacker.example".into()), &[slow])
                .is_ok()
        );
        drop(held);
        assert!(in_flight.places().destinations.is_empty());
        assert!(in_flight.places().names.is_empty());
    }

    #[test]
    fn a_name_in_flight_keeps_its_first_answer() {
        let in_flight = Arc::new(InFlight::default());
        let first: IpAddr = "203.0.114.7".parse().unwrap();
        let second: IpAddr = "198.51.101.1".parse().unwrap();
        let _a = in_flight
            .take(Some("app.example".into()), &[first])
            .unwrap();
        let _b = in_flight
            .take(Some("app.example".into()), &[second])
            .unwrap();
        assert_eq!(in_flight.pinned("APP.example."), Some(vec![first]));
        assert_eq!(in_flight.places().destinations.get(&first), Some(&2));
        assert!(!in_flight.places().destinations.contains_key(&second));
    }
}
