//! The demo's `GET /metrics`: grantor's series (`grantor::metrics`) in the Prometheus text
//! format, rendered on each scrape through the recorder's handle. The exporter serves nothing
//! itself (no listener, no push): the demo's own router answers the scrape.

use std::time::Duration;

use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Histogram buckets in seconds, from 100 µs (a memory store's answer) to 10 s (a store
/// timing out), so that `histogram_quantile` has buckets to read.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 10.0,
];

/// How often histogram samples are folded into their buckets between scrapes, so that they
/// do not pile up in memory under load.
const UPKEEP: Duration = Duration::from_secs(5);

/// The installed recorder's handle.
#[derive(Clone)]
pub struct Metrics(PrometheusHandle);

impl Metrics {
    /// Installs the process's Prometheus recorder and starts its upkeep thread.
    pub fn install() -> Result<Self, Box<dyn std::error::Error>> {
        let handle = PrometheusBuilder::new()
            .set_buckets(&BUCKETS)?
            .install_recorder()?;
        let upkeep = handle.clone();
        std::thread::Builder::new()
            .name("metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP);
                    upkeep.run_upkeep();
                }
            })?;
        Ok(Self(handle))
    }

    /// Every series, in the Prometheus text exposition format.
    pub fn scrape(&self) -> Response<String> {
        let mut response = Response::new(self.0.render());
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        );
        response
    }
}
