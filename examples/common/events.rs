//! The demo's audit trail: every grantor event as one JSON line on standard output.

use std::io::Write as _;

use grantor::events::{Event, EventKind, Events};

use super::batched::{Batched, WriterGuard};

/// Prints each event as a JSON object on a line of its own:
/// `{"event":"token_issued","at":1767225600,"grant_type":"client_credentials","client_id":"demo-client","family":"…","jti":"…"}`.
///
/// The line is made where the event happens and written in batches by a thread of its own
/// ([`Batched`]): a request never waits on a write to standard output (one per token,
/// otherwise). No line is dropped: when 4 MiB wait, the next event waits for room. Dropping
/// the trail (with the server) writes what waits.
pub struct JsonLines {
    out: Batched,
    _writer: WriterGuard,
}

impl JsonLines {
    /// The trail on standard output.
    pub fn stdout() -> std::io::Result<Self> {
        let (out, writer) = Batched::start("demo-events", std::io::stdout(), false)?;
        Ok(Self {
            out,
            _writer: writer,
        })
    }
}

/// One event's line; absent fields are left out.
#[derive(serde::Serialize)]
struct Line<'a> {
    event: &'a str,
    at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    grant_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    family: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jti: Option<&'a str>,
}

impl Events for JsonLines {
    fn record(&self, event: &Event) {
        let line = Line {
            event: event.kind.as_str(),
            at: event.at.as_secs(),
            grant_type: match event.kind {
                EventKind::TokenIssued(grant) => Some(grant.as_str()),
                _ => None,
            },
            client_id: event.client_id.as_ref().map(|id| id.as_str()),
            user_id: event.user_id.as_ref().map(|id| id.as_str()),
            family: event
                .family
                .map(|family| format!("{:032x}", family.as_u128())),
            jti: event.jti.as_ref().map(|jti| jti.as_str()),
        };
        let Ok(mut bytes) = serde_json::to_vec(&line) else {
            return;
        };
        bytes.push(b'\n');
        // A closed standard output loses the trail, never a request.
        let _ = self.out.clone().write_all(&bytes);
    }
}
