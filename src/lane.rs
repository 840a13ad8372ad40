//! A fixed set of threads over two bounded queues, for CPU-heavy work that must not run on the
//! host's async executor: Argon2 checks (`crate::hash`) and slow signatures (RS256, in the JWT
//! code). Each user builds its own lanes; nothing here is process-wide. Each lane's depth, wait
//! and refusals are measured ([`crate::metrics`]) under its name.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

use futures_channel::oneshot;

use crate::error::StoreError;
use crate::metrics::{self, Timer};

/// Which queue of a lane a check waits in: workers take every `Normal` job before any `Low` one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Priority {
    Normal,
    Low,
}

impl Priority {
    /// Its name in the lane's metrics.
    fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Low => "low",
        }
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// A fixed number of threads over two bounded queues. Dropping the lane lets its threads finish
/// what is queued and end.
pub(crate) struct Lane {
    shared: Arc<Shared>,
}

struct Shared {
    name: &'static str,
    threads: usize,
    /// How many jobs may wait in the normal and the low queue.
    bounds: [usize; 2],
    state: Mutex<State>,
    job_queued: Condvar,
}

struct State {
    normal: VecDeque<Job>,
    low: VecDeque<Job>,
    /// Threads whose loop is running; below `threads` only if spawning failed.
    alive: usize,
    closed: bool,
}

impl Lane {
    /// Starts `threads` threads named after `name`; `bounds` are how many jobs may wait in the
    /// normal and the low queue.
    pub(crate) fn new(name: &'static str, threads: usize, bounds: [usize; 2]) -> Self {
        let shared = Arc::new(Shared {
            name,
            threads,
            bounds,
            state: Mutex::new(State {
                normal: VecDeque::new(),
                low: VecDeque::new(),
                alive: 0,
                closed: false,
            }),
            job_queued: Condvar::new(),
        });
        spawn_missing(&shared, &mut shared.lock());
        Self { shared }
    }

    /// Queues `work` and awaits its result, on any executor.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        priority: Priority,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, StoreError> {
        let result = self.submit(priority, work)?;
        // The sender is dropped unanswered only if the job panicked (queued jobs run even
        // after the lane is dropped).
        result
            .await
            .map_err(|_| StoreError::failed(format!("a {} job panicked", self.shared.name)))
    }

    /// Whether a job of `priority` would be queued now.
    pub(crate) fn has_room(&self, priority: Priority) -> bool {
        let shared = &*self.shared;
        let state = shared.lock();
        match priority {
            Priority::Normal => state.normal.len() < shared.bounds[0],
            Priority::Low => state.low.len() < shared.bounds[1],
        }
    }

    /// Queues `work`, or refuses at once: `unavailable` if its queue is full.
    pub(crate) fn submit<T: Send + 'static>(
        &self,
        priority: Priority,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<oneshot::Receiver<T>, StoreError> {
        let (done, result) = oneshot::channel();
        let lane = self.shared.name;
        let queued = Timer::start();
        let job: Job = Box::new(move || {
            metrics::lane_wait(lane, queued);
            let _ = done.send(work());
        });
        let shared = &*self.shared;
        let mut state = shared.lock();
        spawn_missing(&self.shared, &mut state);
        if state.alive == 0 {
            return Err(StoreError::failed(format!(
                "no {} thread could be started",
                shared.name
            )));
        }
        let (queue, bound) = match priority {
            Priority::Normal => (&mut state.normal, shared.bounds[0]),
            Priority::Low => (&mut state.low, shared.bounds[1]),
        };
        if queue.len() >= bound {
            metrics::lane_refused(shared.name);
            return Err(StoreError::unavailable(format!(
                "the {} queue is full",
                shared.name
            )));
        }
        queue.push_back(job);
        metrics::lane_depth(shared.name, priority.as_str(), queue.len());
        drop(state);
        // Every idle worker waits for the same thing, any job; one of them is enough.
        shared.job_queued.notify_one();
        Ok(result)
    }
}

impl Drop for Lane {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.job_queued.notify_all();
    }
}

impl Shared {
    /// The state; never left half-changed (each change is one push, pop or count), so a
    /// poisoned lock is still good.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Blocks until a job waits, real accounts' first; `None` once the lane is dropped and
    /// nothing is left.
    fn next_job(&self) -> Option<Job> {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.normal.pop_front() {
                metrics::lane_depth(self.name, Priority::Normal.as_str(), state.normal.len());
                return Some(job);
            }
            if let Some(job) = state.low.pop_front() {
                metrics::lane_depth(self.name, Priority::Low.as_str(), state.low.len());
                return Some(job);
            }
            if state.closed {
                return None;
            }
            state = self
                .job_queued
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Brings the lane up to its number of threads. Called at start and on every submission, so a
/// thread that could not be spawned (or whose loop ended) is replaced on the next check. If
/// none can be spawned, submissions fail rather than queue for no one.
fn spawn_missing(shared: &Arc<Shared>, state: &mut State) {
    while state.alive < shared.threads && !state.closed {
        let worker = Arc::clone(shared);
        let spawned = thread::Builder::new()
            .name(format!("{}-{}", shared.name, state.alive))
            .spawn(move || work(&worker));
        if spawned.is_err() {
            return;
        }
        state.alive += 1;
    }
}

fn work(shared: &Shared) {
    let _alive = Alive(shared);
    while let Some(job) = shared.next_job() {
        // A panicking job drops its result's sender as it unwinds, so its caller gets an
        // error; the thread goes on to the next job and the lane keeps its size.
        let _ = catch_unwind(AssertUnwindSafe(job));
    }
}

/// Counts a worker out when its loop ends, however it ends.
struct Alive<'a>(&'a Shared);

impl Drop for Alive<'_> {
    fn drop(&mut self) {
        self.0.lock().alive -= 1;
    }
}
