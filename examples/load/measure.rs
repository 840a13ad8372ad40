//! The timed window: every connection sends its flow's requests back to back until the
//! deadline, and each answer's latency is kept; then the Markdown row.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::flows::{Outcome, Plan, Worker};

/// What one connection saw.
#[derive(Default)]
struct Tally {
    /// Latencies of the answered requests, in nanoseconds.
    latencies: Vec<u64>,
    non_2xx: usize,
    /// Requests without an answer (refused, reset, bad HTTP).
    errors: usize,
    exhausted: bool,
}

/// One flow's numbers.
pub struct Row {
    pub requests: usize,
    pub elapsed: Duration,
    pub p50: Duration,
    pub p99: Duration,
    pub non_2xx: usize,
    pub errors: usize,
    /// The one-use items ran out before the deadline.
    pub exhausted: bool,
    /// One-use items spent in the warm-up and in the timed window.
    pub warm_used: usize,
    pub timed_used: usize,
}

/// Runs `plan` on every worker until `deadline` (requests in flight then are finished and
/// counted); answers the workers for the next phase and what they saw.
async fn phase(
    plan: &Arc<Plan>,
    workers: Vec<Worker>,
    duration: Duration,
    warming: bool,
) -> (Vec<Worker>, Vec<Tally>, Duration) {
    let started = Instant::now();
    let deadline = started + duration;
    let handles: Vec<_> = workers
        .into_iter()
        .map(|mut worker| {
            let plan = Arc::clone(plan);
            tokio::spawn(async move {
                let mut tally = Tally::default();
                while Instant::now() < deadline {
                    match plan.step(&mut worker, warming).await {
                        Outcome::Answered(status, latency) => {
                            if !(200..300).contains(&status) {
                                tally.non_2xx += 1;
                            }
                            tally.latencies.push(latency.as_nanos() as u64);
                        }
                        Outcome::Failed => tally.errors += 1,
                        Outcome::Exhausted => {
                            tally.exhausted = true;
                            break;
                        }
                    }
                }
                (worker, tally)
            })
        })
        .collect();
    let mut workers = Vec::with_capacity(handles.len());
    let mut tallies = Vec::with_capacity(handles.len());
    for handle in handles {
        // A worker task only ends by returning: `step` counts failures instead of panicking.
        if let Ok((worker, tally)) = handle.await {
            workers.push(worker);
            tallies.push(tally);
        }
    }
    (workers, tallies, started.elapsed())
}

/// Warms the flow up for `warmup` (answers discarded), then measures it for `duration`.
pub async fn measure(
    plan: Arc<Plan>,
    workers: Vec<Worker>,
    warmup: Duration,
    duration: Duration,
) -> (Vec<Worker>, Row) {
    let (workers, _, _) = phase(&plan, workers, warmup, true).await;
    let warm_used = plan.used();
    let (workers, tallies, elapsed) = phase(&plan, workers, duration, false).await;
    let mut latencies: Vec<u64> = Vec::new();
    let mut row = Row {
        requests: 0,
        elapsed,
        p50: Duration::ZERO,
        p99: Duration::ZERO,
        non_2xx: 0,
        errors: 0,
        exhausted: false,
        warm_used,
        timed_used: plan.used() - warm_used,
    };
    for tally in tallies {
        latencies.extend(tally.latencies);
        row.non_2xx += tally.non_2xx;
        row.errors += tally.errors;
        row.exhausted |= tally.exhausted;
    }
    latencies.sort_unstable();
    row.requests = latencies.len();
    row.p50 = percentile(&latencies, 0.50);
    row.p99 = percentile(&latencies, 0.99);
    (workers, row)
}

/// The nearest-rank percentile of sorted samples (zero when there are none).
fn percentile(sorted: &[u64], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Duration::from_nanos(sorted[rank - 1])
}

pub const HEADER: &str = "| flow | requests | req/s | p50 | p99 | non-2xx | errors | note |\n\
                          |---|---:|---:|---:|---:|---:|---:|---|";

impl Row {
    /// The Markdown row: answered requests, their rate over the whole window, latencies in ms.
    pub fn markdown(&self, flow: &str, note: &str) -> String {
        let rate = self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9);
        format!(
            "| {flow} | {} | {rate:.0} | {} | {} | {} | {} | {note} |",
            self.requests,
            millis(self.p50),
            millis(self.p99),
            self.non_2xx,
            self.errors,
        )
    }
}

fn millis(latency: Duration) -> String {
    format!("{:.2} ms", latency.as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::percentile;
    use std::time::Duration;

    #[test]
    fn nearest_rank() {
        let samples: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&samples, 0.50), Duration::from_nanos(50));
        assert_eq!(percentile(&samples, 0.99), Duration::from_nanos(99));
        assert_eq!(percentile(&[7], 0.99), Duration::from_nanos(7));
        assert_eq!(percentile(&[], 0.5), Duration::ZERO);
    }
}
