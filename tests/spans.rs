//! One `tracing` span per endpoint call, named `grantor`, with its documented fields
//! (`endpoint`, `grant_type`, `client_id`, `outcome`, `status`) and never a secret.

mod common;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use common::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::with_default;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::{LookupSpan, Registry};

/// A span's fields, as text.
type Fields = BTreeMap<String, String>;

/// Keeps the fields of every `grantor` span when it closes.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Fields>>>);

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S> Layer<S> for Spans
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut Collect(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(&mut Collect(fields));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && span.name() == "grantor"
            && let Some(fields) = span.extensions_mut().remove::<Fields>()
        {
            self.0.lock().unwrap().push(fields);
        }
    }
}

/// Runs `calls` on a current-thread runtime with the span collector installed; answers the
/// spans closed meanwhile.
fn spans_of<F>(calls: impl FnOnce() -> F) -> Vec<Fields>
where
    F: std::future::Future<Output = ()>,
{
    let spans = Spans::default();
    let subscriber = Registry::default().with(spans.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    with_default(subscriber, || runtime.block_on(calls()));
    spans.0.lock().unwrap().clone()
}

fn fields(pairs: &[(&str, &str)]) -> Fields {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

#[test]
fn token_endpoint_calls_carry_grant_type_client_outcome_and_status() {
    let f = fixture();
    let (id, secret) = (f.fast_id.clone(), f.fast_secret.clone());
    let spans = spans_of(|| async {
        let good = f
            .token(Some(&basic(&id, &secret)), "grant_type=client_credentials")
            .await;
        assert_eq!(good.status(), 200);
        let refused = f
            .token(Some(&basic(&id, "not-it")), "grant_type=client_credentials")
            .await;
        assert_error(&refused, 401, "invalid_client");
        let unknown = f
            .token(
                Some(&basic(&id, &secret)),
                "grant_type=refresh_token&refresh_token=x",
            )
            .await;
        assert_error(&unknown, 400, "invalid_grant");
    });
    assert_eq!(
        spans,
        [
            fields(&[
                ("endpoint", "token"),
                ("grant_type", "client_credentials"),
                ("client_id", &id),
                ("outcome", "ok"),
                ("status", "200"),
            ]),
            // Refused before the grant is read: no grant type, and no client.
            fields(&[
                ("endpoint", "token"),
                ("outcome", "invalid_client"),
                ("status", "401"),
            ]),
            fields(&[
                ("endpoint", "token"),
                ("grant_type", "refresh_token"),
                ("client_id", &id),
                ("outcome", "invalid_grant"),
                ("status", "400"),
            ]),
        ]
    );
    assert!(
        !format!("{spans:?}").contains(&secret),
        "a span shows a secret"
    );
}

#[test]
fn the_authorization_endpoint_and_the_decision_have_spans_of_their_own() {
    let f = fixture();
    let id = f.fast_id.clone();
    let spans = spans_of(|| async {
        let code = f.code(&id, "").await;
        assert!(!code.is_empty());
        let (server, request) = (&f.server, authorize_request("client_id=nobody"));
        assert!(matches!(
            server.authorize(&request).await,
            grantor::Authorize::Reject(_)
        ));
        let basic = basic(&id, &f.fast_secret);
        let introspected = f.introspect(Some(&basic), "token=unknown").await;
        assert_eq!(introspected.status(), 200);
        let revoked = f.revoke(Some(&basic), "token=unknown").await;
        assert_eq!(revoked.status(), 200);
    });
    let summary: Vec<(String, String)> = spans
        .iter()
        .map(|span| (span["endpoint"].clone(), span["outcome"].clone()))
        .collect();
    let expected = [
        ("authorize", "sign_in"),
        ("decide", "ok"),
        ("authorize", "invalid_request"),
        ("introspect", "ok"),
        ("revoke", "ok"),
    ];
    assert_eq!(
        summary,
        expected.map(|(endpoint, outcome)| (endpoint.to_owned(), outcome.to_owned()))
    );
    assert_eq!(spans[1]["status"], "303");
}
