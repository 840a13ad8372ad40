//! Outcomes to `http::Response`: token JSON, RFC 6749 §5.2 errors, redirects. The only place
//! grantor formats HTTP.

use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, LOCATION, PRAGMA, WWW_AUTHENTICATE};
use http::{HeaderValue, Response, StatusCode};
use serde::Serialize;

use crate::error::{ErrorCode, OAuthError};

const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
const POST: HeaderValue = HeaderValue::from_static("POST");

/// A JSON response that no cache keeps (RFC 6749 §5.1).
pub(crate) fn json(status: StatusCode, body: &impl Serialize) -> Response<String> {
    // Serializing plain structs of strings and integers cannot fail; the fallback keeps this
    // total all the same.
    let body =
        serde_json::to_string(body).unwrap_or_else(|_| r#"{"error":"server_error"}"#.to_owned());
    json_text(status, body)
}

/// A JSON response from text already serialized.
pub(crate) fn json_text(status: StatusCode, body: String) -> Response<String> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, JSON);
    headers.insert(CACHE_CONTROL, NO_STORE);
    headers.insert(PRAGMA, NO_CACHE);
    response
}

/// A JSON object written member by member into one buffer sized up front: the hot answers
/// (token responses) skip serde's generic machinery and its string escaping, since their values
/// almost never need escaping.
pub(crate) struct JsonObject(String);

impl JsonObject {
    /// An object whose text is expected to take about `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut text = String::with_capacity(capacity);
        text.push('{');
        Self(text)
    }

    /// `name` is a member name of grantor's own: plain ASCII, nothing to escape.
    fn name(&mut self, name: &'static str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        self.0.push('"');
        self.0.push_str(name);
        self.0.push_str("\":");
    }

    /// A string member, escaped as JSON requires.
    pub(crate) fn string(&mut self, name: &'static str, value: &str) -> &mut Self {
        self.name(name);
        // One pass without early exit (vectorized) over values that almost never need escapes.
        let mut escapes = 0u8;
        for &b in value.as_bytes() {
            escapes |= u8::from(b < 0x20) | u8::from(b == b'"') | u8::from(b == b'\\');
        }
        if escapes == 0 {
            self.0.push('"');
            self.0.push_str(value);
            self.0.push('"');
        } else {
            // Serializing a string cannot fail.
            let escaped = serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_owned());
            self.0.push_str(&escaped);
        }
        self
    }

    /// A non-negative integer member.
    pub(crate) fn number(&mut self, name: &'static str, value: u64) -> &mut Self {
        self.name(name);
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = value;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        for &digit in &digits[at..] {
            self.0.push(char::from(digit));
        }
        self
    }

    /// A boolean member.
    pub(crate) fn boolean(&mut self, name: &'static str, value: bool) -> &mut Self {
        self.name(name);
        self.0.push_str(if value { "true" } else { "false" });
        self
    }

    /// The object's text.
    pub(crate) fn finish(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'static str,
    error_description: &'a str,
}

/// An RFC 6749 §5.2 error. `invalid_client` carries a Basic challenge for `realm`.
pub(crate) fn error(error: &OAuthError, realm: &HeaderValue) -> Response<String> {
    log(error);
    let body = ErrorBody {
        error: error.code().as_str(),
        error_description: error.description(),
    };
    let mut response = json(error.status(), &body);
    if error.code() == ErrorCode::InvalidClient {
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, realm.clone());
    }
    if error.status() == StatusCode::METHOD_NOT_ALLOWED {
        // Only the POST-only endpoints answer 405 themselves.
        response.headers_mut().insert(ALLOW, POST);
    }
    response
}

/// A `303 See Other` to `location`: 303 so that a redirect answering the host's sign-in POST is
/// followed with a GET (RFC 9700 §4.12).
pub(crate) fn redirect(location: String) -> Result<Response<String>, OAuthError> {
    // From a `String` whose length is its capacity, the header takes the buffer as it is.
    let location = HeaderValue::try_from(location).map_err(|_| {
        OAuthError::new(
            ErrorCode::ServerError,
            "the redirect URI cannot be sent in a Location header",
        )
    })?;
    let mut response = Response::new(String::new());
    *response.status_mut() = StatusCode::SEE_OTHER;
    let headers = response.headers_mut();
    headers.insert(LOCATION, location);
    headers.insert(CACHE_CONTROL, NO_STORE);
    Ok(response)
}

/// Hands a server-side failure's cause to the host's logs. Client mistakes are not logged.
pub(crate) fn log(error: &OAuthError) {
    if let Some(source) = std::error::Error::source(error) {
        tracing::error!(code = %error.code(), cause = %source, "grantor: store failure");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_objects_match_serde() {
        let mut object = JsonObject::with_capacity(8);
        object
            .string("plain", "abc-_~ %")
            .string("escaped", "a\"b\\c\n\u{1}\u{e9}")
            .number("zero", 0)
            .number("max", u64::MAX)
            .boolean("yes", true)
            .boolean("no", false);
        let text = object.finish();
        let expected = serde_json::json!({
            "plain": "abc-_~ %",
            "escaped": "a\"b\\c\n\u{1}\u{e9}",
            "zero": 0,
            "max": u64::MAX,
            "yes": true,
            "no": false,
        });
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, expected);
        assert!(
            text.starts_with(r#"{"plain":"abc-_~ %","escaped":"#),
            "{text}"
        );
        assert_eq!(JsonObject::with_capacity(0).finish(), "{}");
    }
}
