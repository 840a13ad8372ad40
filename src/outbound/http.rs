//! [`HttpOutbound`]: the default [`Outbound`], `reqwest` over rustls on the host's tokio
//! runtime.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
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
/// to connect and 5 s per attempt, no redirects followed, no proxy. It sends only to `https` URLs whose host resolves
/// to public addresses ([`is_public_address`]); the connection goes to the addresses checked.
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
    allow_loopback: bool,
    extra_root: Option<Vec<u8>>,
}

impl std::fmt::Debug for HttpOutbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOutbound")
            .field("allow_loopback", &self.allow_loopback)
            .finish_non_exhaustive()
    }
}

/// Why an [`HttpOutbound`] could not be made.
#[derive(Debug, thiserror::Error)]
#[error("the outbound HTTP client could not be built: {0}")]
pub struct OutboundError(String);

impl HttpOutbound {
    /// An outbound client that trusts the platform's certificate roots.
    pub fn new() -> Result<Self, OutboundError> {
        Self::build(false, None)
    }

    /// For tests only: loopback addresses (`127.0.0.0/8`, `::1`) are allowed too, over `http`
    /// as well as `https`, and `extra_root` (a PEM certificate, say a test's own CA) is
    /// trusted beside the platform's roots. Every other private or special address stays
    /// refused.
    pub fn for_tests(extra_root: Option<&[u8]>) -> Result<Self, OutboundError> {
        Self::build(true, extra_root)
    }

    /// The same client looking names up with `resolver` (whose answers are checked as the
    /// system's are): for tests that need a name to resolve to a given address.
    pub fn resolver(self, resolver: Arc<dyn NameResolver>) -> Result<Self, OutboundError> {
        Self::with(self.allow_loopback, self.extra_root.as_deref(), resolver)
    }

    fn build(allow_loopback: bool, extra_root: Option<&[u8]>) -> Result<Self, OutboundError> {
        Self::with(allow_loopback, extra_root, Arc::new(SystemResolver))
    }

    fn with(
        allow_loopback: bool,
        extra_root: Option<&[u8]>,
        resolver: Arc<dyn NameResolver>,
    ) -> Result<Self, OutboundError> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(ATTEMPT_TIMEOUT)
            .dns_resolver(Arc::new(PublicOnly {
                allow_loopback,
                resolver,
            }));
        if let Some(pem) = extra_root {
            let root =
                reqwest::Certificate::from_pem(pem).map_err(|e| OutboundError(e.to_string()))?;
            builder = builder.add_root_certificate(root);
        }
        let client = builder.build().map_err(|e| OutboundError(e.to_string()))?;
        Ok(Self {
            client,
            allow_loopback,
            extra_root: extra_root.map(<[u8]>::to_vec),
        })
    }

    /// Whether `url` may be posted to before any name is resolved: `https` (or loopback `http`
    /// when allowed), and an IP-literal host only if its address may be reached (a literal is
    /// never resolved, so it is checked here).
    fn may_post(&self, url: &str) -> bool {
        let Ok(url) = url::Url::parse(url) else {
            return false;
        };
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(_)) => None,
            None => return false,
        };
        let loopback = match (literal, url.host_str()) {
            (Some(ip), _) => ip.is_loopback(),
            (None, host) => host == Some("localhost"),
        };
        let scheme_ok = match url.scheme() {
            "https" => true,
            "http" => self.allow_loopback && loopback,
            _ => false,
        };
        scheme_ok
            && url.username().is_empty()
            && url.password().is_none()
            && literal.is_none_or(|ip| allowed(ip, self.allow_loopback))
    }

    async fn deliver(&self, post: &OutboundPost) -> Delivery {
        if !self.may_post(&post.url) {
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
}

impl HttpOutbound {
    /// One `GET`, its body read up to the bound.
    async fn fetch(&self, get: &OutboundGet) -> Result<Fetched, FetchError> {
        if !self.may_post(&get.url) {
            return Err(FetchError::Refused);
        }
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
        let outbound = self.clone();
        runtime.spawn(async move {
            let delivery = outbound.deliver(&post).await;
            done(delivery);
        });
    }
}

/// Whether an address may be connected to.
fn allowed(ip: IpAddr, allow_loopback: bool) -> bool {
    is_public_address(ip) || (allow_loopback && ip.is_loopback())
}

/// A resolver that answers only the addresses that may be reached, so the connection is made
/// to an address that was checked.
struct PublicOnly {
    allow_loopback: bool,
    resolver: Arc<dyn NameResolver>,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
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
