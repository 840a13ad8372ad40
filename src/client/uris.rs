//! What a registration's URIs may be, and how a presented redirect URI matches a registered
//! one: exactly, or for a loopback URI with any port (RFC 8252 §7.3).

use super::ClientError;

pub(super) fn check_audience(audience: &str) -> Result<(), ClientError> {
    crate::audience::is_resource(audience)
        .then_some(())
        .ok_or(ClientError::InvalidAudience)
}

/// Whether `registered` and `presented` are the same loopback `http` URI but for the port:
/// same host as written, same path and query byte for byte.
pub(super) fn same_loopback_but_port(registered: &str, presented: &str) -> bool {
    match (loopback_parts(registered), loopback_parts(presented)) {
        (Some((host, rest)), Some((other_host, other_rest))) => {
            host == other_host && rest == other_rest
        }
        _ => false,
    }
}

/// The host and everything after the authority of a loopback `http` URI with a valid port or
/// none; `None` for any other URI.
fn loopback_parts(uri: &str) -> Option<(&str, &str)> {
    let after_scheme = uri.strip_prefix("http://")?;
    let end = after_scheme
        .find(['/', '?', '#'])
        .unwrap_or(after_scheme.len());
    let (authority, rest) = after_scheme.split_at(end);
    let (host, port) = match authority.strip_prefix("[::1]") {
        Some(port) => ("[::1]", port),
        None => authority.split_at(authority.find(':').unwrap_or(authority.len())),
    };
    let port_ok = match port.strip_prefix(':') {
        None => port.is_empty(),
        Some(digits) => {
            (1..=5).contains(&digits.len())
                && digits.bytes().all(|b| b.is_ascii_digit())
                && digits.parse::<u16>().is_ok_and(|p| p > 0)
        }
    };
    let loopback = matches!(host, "127.0.0.1" | "[::1]" | "localhost");
    (loopback && port_ok).then_some((host, rest))
}

pub(super) fn check_redirect_uri(uri: &str) -> Result<(), ClientError> {
    // Printable ASCII (RFC 3986 characters; others percent-encoded), so that the URI goes into
    // a `Location` header exactly as registered.
    if !uri.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ClientError::InvalidRedirectUri);
    }
    let parsed = url::Url::parse(uri).map_err(|_| ClientError::InvalidRedirectUri)?;
    if parsed.fragment().is_some() || parsed.cannot_be_a_base() {
        return Err(ClientError::InvalidRedirectUri);
    }
    Ok(())
}

/// Whether `uri` (already [`check_redirect_uri`]'s) is safe to send codes to whoever
/// registered it: no user information (`user@`) and no backslash, which parsers read
/// differently (RFC 9700 §4.1.1 on redirect URI confusion), and `http` only on a loopback host
/// (`127.0.0.1`, `[::1]`, `localhost`: RFC 8252 §7.3, §8.3), where nothing but the device itself
/// can listen. Other schemes (`https`, a native app's own) pass.
pub(super) fn has_safe_transport(uri: &str) -> bool {
    if uri.contains('\\') {
        return false;
    }
    let Ok(parsed) = url::Url::parse(uri) else {
        return false;
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return false;
    }
    parsed.scheme() != "http"
        || matches!(
            parsed.host(),
            Some(url::Host::Domain("localhost"))
                | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
                | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
        )
}

/// Whether a client that registers itself (RFC 7591) may have `uri` as a redirect URI: what
/// [`check_redirect_uri`] and [`has_safe_transport`] accept, and only `https` with a host or
/// loopback `http` (no native app schemes: nobody vouches for who owns one).
pub(crate) fn is_self_registrable_redirect_uri(uri: &str) -> bool {
    if check_redirect_uri(uri).is_err() || !has_safe_transport(uri) {
        return false;
    }
    let Ok(parsed) = url::Url::parse(uri) else {
        return false;
    };
    match parsed.scheme() {
        "https" => parsed.host().is_some(),
        "http" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Client, GrantType};
    use super::is_self_registrable_redirect_uri;

    #[test]
    fn self_registered_redirect_uris_are_https_or_loopback_http() {
        for yes in [
            "https://app.example/cb",
            "https://app.example:8443/cb?x=1",
            "http://127.0.0.1:8081/callback",
            "http://localhost/cb",
            "http://[::1]:9/cb",
        ] {
            assert!(is_self_registrable_redirect_uri(yes), "{yes}");
        }
        for no in [
            "http://app.example/cb",
            "http://127.0.0.2/cb",
            "http://localhost.evil.example/cb",
            "https://app.example/cb#frag",
            "https://user@app.example/cb",
            "https://app.example\\@evil.example/cb",
            "com.example.app:/cb",
            "javascript:alert(1)",
            "data:text/html,hi",
            "ftp://app.example/cb",
            "/cb",
            "https://app.example/c b",
            "",
        ] {
            assert!(!is_self_registrable_redirect_uri(no), "{no}");
        }
    }

    #[test]
    fn loopback_redirect_uris_match_with_any_port_and_nothing_else_differs() {
        let client = Client::public("native")
            .redirect_uri("http://127.0.0.1:8081/callback")
            .redirect_uri("http://localhost/cb?x=1")
            .redirect_uri("http://[::1]:9/cb")
            .redirect_uri("https://app.example:8443/cb")
            .grant_types([GrantType::AuthorizationCode])
            .build()
            .unwrap();
        for yes in [
            "http://127.0.0.1:8081/callback",
            "http://127.0.0.1:51004/callback",
            "http://127.0.0.1/callback",
            "http://localhost:3000/cb?x=1",
            "http://[::1]:65535/cb",
        ] {
            assert!(client.has_redirect_uri(yes), "{yes}");
        }
        for no in [
            "http://127.0.0.1:51004/callback/",
            "http://127.0.0.1:51004/other",
            "http://127.0.0.2:8081/callback",
            "http://localhost:8081/callback",
            "https://127.0.0.1:8081/callback",
            "http://127.0.0.1:0/callback",
            "http://127.0.0.1:65536/callback",
            "http://127.0.0.1:80a/callback",
            "http://127.0.0.1.evil.example/callback",
            "http://127.0.0.1@evil.example/callback",
            "http://localhost:3000/cb?x=2",
            "https://app.example:9443/cb",
            "http://[::1]:9:9/cb",
        ] {
            assert!(!client.has_redirect_uri(no), "{no}");
        }
    }
}
