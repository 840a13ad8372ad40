//! One HTTP/1.1 keep-alive connection per simulated client, on hyper's connection API: the load
//! generator opens exactly `--connections` sockets (a pooled client would open more or fewer as
//! it pleases) and adds as little work per request as hyper allows.

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Bytes;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{HeaderMap, Method, Request};
use hyper_util::rt::TokioIo;

/// The server under load: where to connect and what to send as `Host`.
#[derive(Debug, Clone)]
pub struct Target {
    /// `host:port`, for `connect` and the `Host` header.
    pub authority: String,
    /// The base URL's path without its trailing slash ("" for a server at the root).
    pub prefix: String,
}

impl Target {
    /// Parses an `http://host:port[/prefix]` base URL.
    pub fn parse(base: &str) -> Result<Self, String> {
        let url = url::Url::parse(base).map_err(|e| format!("bad --base {base}: {e}"))?;
        if url.scheme() != "http" {
            return Err(format!("--base {base}: only http:// is supported"));
        }
        let host = url
            .host_str()
            .ok_or_else(|| format!("--base {base} has no host"))?;
        let port = url.port_or_known_default().unwrap_or(80);
        Ok(Self {
            authority: format!("{host}:{port}"),
            prefix: url.path().trim_end_matches('/').to_owned(),
        })
    }

    /// A request to `path` (under the base URL), with `Host`, an optional `Authorization`, a
    /// form body when `form` is given, and any `extra` headers.
    pub fn request(
        &self,
        method: Method,
        path: &str,
        authorization: Option<&HeaderValue>,
        form: Option<String>,
        extra: &[(&str, &str)],
    ) -> Result<Request<String>, String> {
        let mut builder = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.prefix))
            .header(HOST, &self.authority);
        if let Some(value) = authorization {
            builder = builder.header(AUTHORIZATION, value);
        }
        if form.is_some() {
            builder = builder.header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        }
        for (name, value) in extra {
            builder = builder.header(*name, *value);
        }
        builder
            .body(form.unwrap_or_default())
            .map_err(|e| format!("cannot build a request to {path}: {e}"))
    }
}

/// `Authorization: Basic …` for a client id and secret (RFC 6749 §2.3.1: form-encoded first).
pub fn basic(id: &str, secret: &str) -> HeaderValue {
    use base64::Engine;
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(id), encode(secret));
    let value = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    );
    HeaderValue::from_str(&value).expect("base64 is a valid header value")
}

/// `Authorization: Bearer …`.
pub fn bearer(token: &str) -> Result<HeaderValue, String> {
    HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| "the access token is not a valid header value".to_owned())
}

/// A form body, `application/x-www-form-urlencoded`.
pub fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// A response, read whole.
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON, or `Null` when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// What to say about an answer that was not the one expected.
    pub fn describe(&self) -> String {
        let body = String::from_utf8_lossy(&self.body);
        let body: String = body.chars().take(200).collect();
        format!("status {}: {body}", self.status)
    }
}

/// One keep-alive connection, reopened after it fails or the server closes it.
pub struct Conn {
    target: Target,
    sender: Option<SendRequest<String>>,
}

impl Conn {
    pub fn new(target: Target) -> Self {
        Self {
            target,
            sender: None,
        }
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Sends one request and reads the whole answer. An error (refused connection, reset, bad
    /// HTTP) drops the connection; the next call opens a new one.
    pub async fn send(&mut self, request: Request<String>) -> Result<Reply, String> {
        let sender = match self.sender.as_mut() {
            Some(sender) if !sender.is_closed() => sender,
            _ => self.sender.insert(self.open().await?),
        };
        let outcome = async {
            sender.ready().await.map_err(|e| e.to_string())?;
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| e.to_string())?;
            let (parts, body) = response.into_parts();
            let body = body.collect().await.map_err(|e| e.to_string())?;
            Ok(Reply {
                status: parts.status.as_u16(),
                headers: parts.headers,
                body: body.to_bytes(),
            })
        }
        .await;
        if outcome.is_err() {
            self.sender = None;
        }
        outcome
    }

    async fn open(&self) -> Result<SendRequest<String>, String> {
        let stream = match tokio::net::TcpStream::connect(&self.target.authority).await {
            Ok(stream) => stream,
            Err(error) => {
                // A server that is down refuses at once: pause so that a dead target costs a
                // trickle of counted errors rather than a busy loop.
                tokio::time::sleep(Duration::from_millis(20)).await;
                return Err(format!("connect {}: {error}", self.target.authority));
            }
        };
        // Requests are small and written whole: no reason to wait for Nagle.
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        // The connection task ends when the sender is dropped or the peer closes.
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }
}
