//! Lines written by a thread of their own, in batches: the demo's log and its event trail.
//!
//! A request appends its line to a buffer under a lock and goes on; the writer thread takes
//! the whole buffer every few milliseconds and writes it with one call. So no request waits on
//! a write to stdout or stderr (one system call per line, otherwise, and the largest cost of the
//! demo's client-credentials answer once measured), and no request wakes a thread either: the
//! writer keeps its own time. `tracing-appender` was measured first: its channel's receiver
//! spins and yields while waiting, about a tenth of the demo's CPU under load on two cores.

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// How often the writer takes what waits: the most a line is late.
const WRITE_EVERY: Duration = Duration::from_millis(5);

/// How many bytes may wait. Past it, a lossy writer drops lines (and says how many it dropped),
/// another makes the writer wait for room.
const MAX_WAITING: usize = 4 << 20;

/// Where lines go: clone it freely; every clone appends to the same buffer.
#[derive(Clone)]
pub struct Batched {
    shared: Arc<Shared>,
}

/// Ends the writer thread once what waits is written; keep it for as long as lines are written.
#[must_use = "dropping the guard stops the writer"]
pub struct WriterGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when the writer took the buffer (room for a waiting line) or must stop.
    changed: Condvar,
    lossy: bool,
}

#[derive(Default)]
struct State {
    waiting: Vec<u8>,
    dropped: u64,
    closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Batched {
    /// Starts a thread named `name` writing to `out`; `lossy`: drop lines rather than wait when
    /// `MAX_WAITING` bytes already wait.
    pub fn start(
        name: &str,
        out: impl Write + Send + 'static,
        lossy: bool,
    ) -> io::Result<(Self, WriterGuard)> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            lossy,
        });
        let worker = Arc::clone(&shared);
        let thread = thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || write_batches(&worker, out))?;
        let guard = WriterGuard {
            shared: Arc::clone(&shared),
            thread: Some(thread),
        };
        Ok((Self { shared }, guard))
    }
}

impl Write for Batched {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        let shared = &*self.shared;
        let mut state = shared.lock();
        while state.waiting.len() + line.len() > MAX_WAITING && !state.closed {
            if shared.lossy {
                state.dropped += 1;
                return Ok(line.len());
            }
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.waiting.extend_from_slice(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Batched {
    type Writer = Batched;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// The writer thread: every `WRITE_EVERY`, swaps the waiting bytes out and writes them.
fn write_batches(shared: &Shared, mut out: impl Write) {
    let mut batch = Vec::new();
    loop {
        let (closed, dropped) = {
            let state = shared.lock();
            let (mut state, _) = shared
                .changed
                .wait_timeout_while(state, WRITE_EVERY, |state| !state.closed)
                .unwrap_or_else(PoisonError::into_inner);
            std::mem::swap(&mut state.waiting, &mut batch);
            (state.closed, std::mem::take(&mut state.dropped))
        };
        shared.changed.notify_all();
        if dropped > 0 {
            let _ = writeln!(
                batch,
                "{dropped} lines dropped: more than {MAX_WAITING} bytes waited"
            );
        }
        // A closed output loses the lines, never a request.
        if !batch.is_empty() {
            let _ = out.write_all(&batch);
            let _ = out.flush();
            batch.clear();
        }
        if closed {
            let rest = std::mem::take(&mut shared.lock().waiting);
            let _ = out.write_all(&rest);
            let _ = out.flush();
            return;
        }
    }
}

impl Drop for WriterGuard {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
