//! One `tracing` span per endpoint call, named `grantor` at `INFO`, with these fields (the names
//! are stable; none ever holds a secret):
//!
//! | field | value |
//! |---|---|
//! | `endpoint` | `authorize`, `decide`, `token`, `revoke`, `introspect`, `par`, `device_authorization`, `register`, `client_configuration` |
//! | `grant_type` | the token request's `grant_type`, once it is read (after the client is authenticated) |
//! | `client_id` | the client, once it is authenticated (or, at the authorization endpoint, identified) |
//! | `outcome` | `ok`; the RFC error code (`invalid_grant`, `invalid_client`, …); or `sign_in` when the authorization endpoint hands over to the sign-in page |
//! | `status` | the HTTP status of the answer |
//!
//! Events and log lines made during the call are inside the span, so a subscriber that prints
//! spans (`tracing_subscriber::fmt`) shows them with the endpoint and the client.
//!
//! The same endpoint and outcome are counted, and the call timed, in
//! `grantor_requests_total` and `grantor_request_duration_seconds` ([`crate::metrics`]).

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Response;
use tracing::field::Empty;

use crate::error::ErrorCode;
use crate::metrics::{self, Timer};

/// The span of a call of `endpoint`, its later fields still empty.
fn span(endpoint: &'static str) -> tracing::Span {
    tracing::info_span!(
        "grantor",
        endpoint,
        grant_type = Empty,
        client_id = Empty,
        outcome = Empty,
        status = Empty
    )
}

/// Runs the call `start` makes in the span of `endpoint` and records its answer's status (and
/// `ok` for a success: an error's code is recorded where it is rendered), and counts it.
///
/// The endpoint's future is made here, in this future's frame: a future made before and handed
/// over would be kept twice in it (as handed over, and instrumented), kilobytes each time.
pub(crate) async fn traced<F>(endpoint: &'static str, start: impl FnOnce() -> F) -> Response<String>
where
    F: Future<Output = Response<String>>,
{
    let started = Timer::start();
    let span = span(endpoint);
    let mut call = std::pin::pin!(start());
    let response = poll_fn(|cx| in_span(&span, call.as_mut(), cx)).await;
    finish(&span, &response);
    metrics::request(endpoint, outcome(&response), started);
    response
}

/// Polls `call` in `span`, as `tracing`'s `Instrumented` does. The call is polled where it was
/// made: `instrument` would first move it into a wrapper (kilobytes for the token endpoint),
/// a copy on every request.
fn in_span<F: Future>(
    span: &tracing::Span,
    call: Pin<&mut F>,
    cx: &mut Context<'_>,
) -> Poll<F::Output> {
    let _entered = span.enter();
    call.poll(cx)
}

/// The authorization endpoint's call in its span, made here as [`traced`]'s: `sign_in` when
/// the request is valid.
pub(crate) async fn traced_authorize<F>(start: impl FnOnce() -> F) -> super::authorize::Authorize
where
    F: Future<Output = super::authorize::Authorize>,
{
    let started = Timer::start();
    let span = span("authorize");
    let mut call = std::pin::pin!(start());
    let answer = poll_fn(|cx| in_span(&span, call.as_mut(), cx)).await;
    let outcome = match &answer {
        super::authorize::Authorize::SignIn(_) => {
            span.record("outcome", "sign_in");
            "sign_in"
        }
        super::authorize::Authorize::Redirect(redirect) => {
            finish(&span, redirect.response());
            redirect.error().code().as_str()
        }
        super::authorize::Authorize::Reject(error) => {
            span.record("outcome", error.code().as_str());
            span.record("status", error.status().as_u16());
            error.code().as_str()
        }
    };
    metrics::request("authorize", outcome, started);
    answer
}

/// The outcome of an answer: the RFC error code its renderer put in its extensions, else `ok`
/// for a 2xx or 3xx; an error no renderer marked (none is known) counts as `server_error` or
/// `invalid_request` by its status, so the label stays one of the fixed set.
fn outcome(response: &Response<String>) -> &'static str {
    match response.extensions().get::<ErrorCode>() {
        Some(code) => code.as_str(),
        None if response.status().is_server_error() => ErrorCode::ServerError.as_str(),
        None if response.status().is_client_error() => ErrorCode::InvalidRequest.as_str(),
        None => "ok",
    }
}

fn finish(span: &tracing::Span, response: &Response<String>) {
    let status = response.status();
    span.record("status", status.as_u16());
    if status.is_success() || status.is_redirection() {
        span.record("outcome", "ok");
    }
}
