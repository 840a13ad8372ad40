//! The demo's audit trail: every grantor event as one JSON line on standard output.

use std::io::Write as _;

use grantor::events::{Event, EventKind, Events};

/// Prints each event as a JSON object on a line of its own:
/// `{"event":"token_issued","at":1767225600,"grant_type":"client_credentials","client_id":"demo-client","family":"…","jti":"…"}`.
pub struct JsonLines;

impl Events for JsonLines {
    fn record(&self, event: &Event) {
        let mut line = serde_json::Map::new();
        line.insert("event".into(), event.kind.as_str().into());
        line.insert("at".into(), event.at.as_secs().into());
        if let EventKind::TokenIssued(grant) = event.kind {
            line.insert("grant_type".into(), grant.as_str().into());
        }
        if let Some(client_id) = &event.client_id {
            line.insert("client_id".into(), client_id.as_str().into());
        }
        if let Some(user_id) = &event.user_id {
            line.insert("user_id".into(), user_id.as_str().into());
        }
        if let Some(family) = event.family {
            line.insert("family".into(), format!("{:032x}", family.as_u128()).into());
        }
        if let Some(jti) = &event.jti {
            line.insert("jti".into(), jti.as_str().into());
        }
        let line = serde_json::Value::Object(line).to_string();
        // A closed standard output loses the trail, never a request.
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }
}
