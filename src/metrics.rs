//! What grantor measures, through the [`metrics`](https://docs.rs/metrics) facade (feature
//! `metrics`): the host installs the recorder it likes (Prometheus, OpenTelemetry, StatsD…) and
//! every series below reaches it. Without the feature nothing is measured and nothing is
//! linked; with it and no recorder installed, each measurement is a call that does nothing.
//!
//! Names follow the Prometheus and OpenTelemetry conventions: a `grantor_` prefix, counters
//! ending in `_total`, durations in seconds (`_seconds` histograms).
//!
//! | series | type | labels | what |
//! |---|---|---|---|
//! | `grantor_requests_total` | counter | `endpoint`, `outcome` | endpoint calls by their answer (`endpoint`: `authorize`, `sign_in` (the sign-in form's `POST`), `decide`, `token`, `revoke`, `introspect`, `par`, `device_authorization`, `register`, `client_configuration`, `userinfo`; `outcome`: `ok`, `sign_in` (the sign-in page is shown: by the authorization endpoint, or again after a wrong password) or the RFC error code: `invalid_client`, `invalid_grant`, `temporarily_unavailable`, …) |
//! | `grantor_request_duration_seconds` | histogram | `endpoint` | time from the call to its answer |
//! | `grantor_store_duration_seconds` | histogram | `seam`, `operation` | time of each call of a store seam (`seam`: `clients`, `users`, `tokens`, `sessions`, `attempts`, `single_use`, `keys`, `user_sessions`, `consents`; `operation`: the seam's method, `find_client`, `redeem_code`, …). grantor's [`MemoryStore`](crate::MemoryStore) as the client or token seam answers in place and is not timed |
//! | `grantor_lane_depth` | gauge | `lane`, `priority` | jobs waiting in a lane's queue (`lane`: `grantor-hash-user`, `grantor-hash-client` for Argon2 checks, `grantor-sign` for RS256 signatures; `priority`: `normal`, `low`) |
//! | `grantor_lane_wait_seconds` | histogram | `lane` | time a job waited in the queue before a thread took it |
//! | `grantor_lane_refusals_total` | counter | `lane` | jobs refused because the lane's queue was full (answered `temporarily_unavailable`) |
//! | `grantor_budget_refusals_total` | counter | `kind`, `tier` | requests refused for a budget (`kind`: `par`, `assertion`, `device`, `dpop-client`, `request-object`, `dpop-key`, `dpop-account`, `issuer-assertion`, `registration`, `sign_in`, `second_factor`, `client_secret`, `user-code` (wrong user codes typed at the device verification page: `server` for those typed signed out, `account` for a signed-in user's), `device-poll` (a device polling faster than its interval, answered `slow_down`); `tier`, whose budget was spent: `client`, `network`, `self_registered`, `document`, `key`, `account`, `issuer`, `server`) |
//! | `grantor_one_time_values_total` | counter | `kind`, `result` | one-time values offered to the single-use store (`kind`: `par`, `dpop`, `assertion`, `request-object`, `device`, `user-code`, `signed-in`, … and `other`, each with its tier suffix where it has one; `result`: `kept`, or `replayed` when a live value held the name) |
//! | `grantor_outbound_total` | counter | `call`, `outcome` | outbound requests (`call`: `client_document`, `jwks`, `sector_identifier` (a pairwise client's `sector_identifier_uri`, fetched at registration), `other_get`, `backchannel_logout`; `outcome`: `ok`, `refused`, `unreachable`, `timeout`, `redirected`, `status`, `too_large`, `busy`, `unsupported`, `failed`) |
//! | `grantor_sign_on_sessions_started_total` | counter | — | single sign-on sessions started (a browser signed in) |
//! | `grantor_sign_on_sessions_ended_total` | counter | — | single sign-on sessions ended by a logout |
//! | `grantor_key_rotations_total` | counter | `algorithm` | signing keys this process made for a new rotation period (`RS256`, `ES256`, `EdDSA`) |
//!
//! Live sign-on sessions are two counters, not a gauge: sessions also end by expiring inside
//! the store, on whatever node, so no node can know the live count without asking the store;
//! `started − ended` over a window is the trend, and the store can be asked for the count.
//!
//! No label holds anything a caller chooses (no client id, username, path or scope): every
//! value comes from a fixed set in grantor's code, so the number of label sets is bounded
//! whatever the traffic: at most 11 endpoints × 30 outcomes for the requests, 40 seam
//! operations, 3 lanes × 2 priorities, 14 kinds × 8 tiers for refusals, 21 kinds × 2 results
//! for one-time values, 5 calls × 10 outcomes outbound and 3 algorithms: under 600 in all (an
//! exporter renders each histogram's label set as its buckets, a sum and a count).
//!
//! The store seams are measured by a wrapper the builder puts around each seam given to it;
//! the client registry, the user admin and client activity (administration, not the request
//! path) are not timed.
//!
//! Histogram quantiles need the exporter to render histograms with buckets (for
//! `metrics-exporter-prometheus`, `PrometheusBuilder::set_buckets`). Five queries an operator
//! runs against a Prometheus scrape:
//!
//! ```text
//! # sign-in latency, p99 (the sign-in form's POST, the password checked)
//! histogram_quantile(0.99, sum by (le) (rate(grantor_request_duration_seconds_bucket{endpoint="sign_in"}[5m])))
//! # refusals by reason
//! sum by (kind, tier) (rate(grantor_budget_refusals_total[5m]))
//! # lane saturation: the deepest queue in five minutes (and `grantor_lane_refusals_total`)
//! max by (lane) (max_over_time(grantor_lane_depth[5m]))
//! # store latency, p99 by seam and operation
//! histogram_quantile(0.99, sum by (le, seam, operation) (rate(grantor_store_duration_seconds_bucket[5m])))
//! # outbound failures
//! sum by (call, outcome) (rate(grantor_outbound_total{outcome!="ok"}[5m]))
//! ```

/// When a measured span of time began; nothing at all without the feature.
#[derive(Clone, Copy)]
pub(crate) struct Timer {
    #[cfg(feature = "metrics")]
    started: std::time::Instant,
}

impl Timer {
    /// Starts measuring now.
    #[inline]
    pub(crate) fn start() -> Self {
        Self {
            #[cfg(feature = "metrics")]
            started: std::time::Instant::now(),
        }
    }

    #[cfg(feature = "metrics")]
    fn seconds(self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

/// An endpoint call answered with `outcome`, `started` when it was made.
#[inline]
pub(crate) fn request(endpoint: &'static str, outcome: &'static str, started: Timer) {
    #[cfg(feature = "metrics")]
    {
        ::metrics::counter!("grantor_requests_total", "endpoint" => endpoint, "outcome" => outcome)
            .increment(1);
        ::metrics::histogram!("grantor_request_duration_seconds", "endpoint" => endpoint)
            .record(started.seconds());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (endpoint, outcome, started);
}

/// A call of the store seam `seam`'s method `operation`, `started` when it was made.
#[inline]
pub(crate) fn store_call(seam: &'static str, operation: &'static str, started: Timer) {
    #[cfg(feature = "metrics")]
    ::metrics::histogram!("grantor_store_duration_seconds", "seam" => seam, "operation" => operation)
        .record(started.seconds());
    #[cfg(not(feature = "metrics"))]
    let _ = (seam, operation, started);
}

/// `depth` jobs now wait in `lane`'s queue of `priority`.
#[inline]
pub(crate) fn lane_depth(lane: &'static str, priority: &'static str, depth: usize) {
    #[cfg(feature = "metrics")]
    ::metrics::gauge!("grantor_lane_depth", "lane" => lane, "priority" => priority)
        .set(depth as f64);
    #[cfg(not(feature = "metrics"))]
    let _ = (lane, priority, depth);
}

/// A job of `lane`, queued when `queued`, was taken by a thread.
#[inline]
pub(crate) fn lane_wait(lane: &'static str, queued: Timer) {
    #[cfg(feature = "metrics")]
    ::metrics::histogram!("grantor_lane_wait_seconds", "lane" => lane).record(queued.seconds());
    #[cfg(not(feature = "metrics"))]
    let _ = (lane, queued);
}

/// A job refused because `lane`'s queue was full.
#[inline]
pub(crate) fn lane_refused(lane: &'static str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!("grantor_lane_refusals_total", "lane" => lane).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = lane;
}

/// A request refused because the budget of `kind` spent by `tier` was exhausted.
#[inline]
pub(crate) fn budget_refused(kind: &'static str, tier: &'static str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!("grantor_budget_refusals_total", "kind" => kind, "tier" => tier)
        .increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = (kind, tier);
}

/// A one-time value of `kind` offered to the single-use store: `kept`, or refused as a replay.
#[inline]
pub(crate) fn one_time_value(kind: &'static str, kept: bool) {
    #[cfg(feature = "metrics")]
    {
        let result = if kept { "kept" } else { "replayed" };
        ::metrics::counter!("grantor_one_time_values_total", "kind" => kind, "result" => result)
            .increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (kind, kept);
}

/// An outbound request `call` ended with `outcome`.
#[inline]
pub(crate) fn outbound(call: &'static str, outcome: &'static str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!("grantor_outbound_total", "call" => call, "outcome" => outcome)
        .increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = (call, outcome);
}

/// A single sign-on session started.
#[inline]
pub(crate) fn sign_on_session_started() {
    #[cfg(feature = "metrics")]
    ::metrics::counter!("grantor_sign_on_sessions_started_total").increment(1);
}

/// `ended` single sign-on sessions ended by a logout.
#[inline]
pub(crate) fn sign_on_sessions_ended(ended: u64) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!("grantor_sign_on_sessions_ended_total").increment(ended);
    #[cfg(not(feature = "metrics"))]
    let _ = ended;
}

/// This process made the signing key of a new rotation period for `algorithm`.
#[cfg_attr(
    not(feature = "jwt"),
    allow(dead_code, reason = "keys rotate with feature jwt")
)]
#[inline]
pub(crate) fn key_rotated(algorithm: &'static str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!("grantor_key_rotations_total", "algorithm" => algorithm).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = algorithm;
}
