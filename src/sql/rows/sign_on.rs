//! The rows of signed-in browsers, the grants issued in them, and remembered approvals.

use super::{corrupt, family_id, time};
use crate::audience::Audience;
use crate::client::ClientId;
use crate::error::StoreError;
use crate::scope::Scope;
use crate::store::{Consent, FamilyId, User, UserId, UserSession};

/// A signed-in browser, without its grants.
pub(in crate::sql) struct UserSessionRow {
    user_id: String,
    username: String,
    sid: String,
    auth_time: i64,
    /// The authentication methods, a JSON array of strings.
    amr: String,
    /// The authentication context class (NULL: none named).
    acr: Option<String>,
    expires_at: i64,
}

by_column_name!(UserSessionRow {
    user_id,
    username,
    sid,
    auth_time,
    amr,
    acr,
    expires_at
});

impl UserSessionRow {
    /// The session, with `grants` (oldest first).
    pub(in crate::sql) fn into_session(
        self,
        grants: Vec<(ClientId, FamilyId)>,
    ) -> Result<UserSession, StoreError> {
        let amr: Vec<String> =
            serde_json::from_str(&self.amr).map_err(|_| corrupt("authentication method list"))?;
        let user = User::new(UserId::new(self.user_id), self.username);
        Ok(UserSession::new(
            user,
            self.sid,
            time(self.auth_time),
            amr,
            time(self.expires_at),
        )
        .with_acr(self.acr)
        .with_grants(grants))
    }
}

/// A client and the family of its tokens, as one grant of a session.
fn session_grant(client_id: &str, family: &[u8]) -> Result<(ClientId, FamilyId), StoreError> {
    let client = ClientId::new(client_id).map_err(|_| corrupt("client id"))?;
    Ok((client, family_id(family)?))
}

/// A signed-in browser with one of its grants, or with none (the grant's columns NULL): what
/// [`FIND_USER_SESSION`](crate::sql::text::FIND_USER_SESSION) answers, a row per grant.
pub(in crate::sql) struct UserSessionGrantRow {
    session: UserSessionRow,
    client_id: Option<String>,
    family_id: Option<Vec<u8>>,
}

by_column_name!(UserSessionGrantRow { client_id, family_id; session });

impl UserSessionGrantRow {
    /// The session these rows (in the order of its grants) describe; `None` for no row.
    pub(in crate::sql) fn into_session(rows: Vec<Self>) -> Result<Option<UserSession>, StoreError> {
        let mut grants = Vec::with_capacity(rows.len());
        let mut session = None;
        for row in rows {
            match (&row.client_id, &row.family_id) {
                (Some(client), Some(family)) => grants.push(session_grant(client, family)?),
                (None, None) => {}
                _ => return Err(corrupt("session grant")),
            }
            session.get_or_insert(row.session);
        }
        session.map(|s| s.into_session(grants)).transpose()
    }
}

/// A grant a session's end took with it, and its place among them.
pub(in crate::sql) struct SessionGrantRow {
    pub(in crate::sql) seq: i64,
    client_id: String,
    family_id: Vec<u8>,
}

by_column_name!(SessionGrantRow {
    seq,
    client_id,
    family_id
});

impl SessionGrantRow {
    pub(in crate::sql) fn into_grant(self) -> Result<(ClientId, FamilyId), StoreError> {
        session_grant(&self.client_id, &self.family_id)
    }
}

/// The number a new grant of a session takes, and the session's expiry (which the grant
/// shares).
pub(in crate::sql) struct NextGrantRow {
    pub(in crate::sql) last_grant: i64,
    pub(in crate::sql) expires_at: i64,
}

by_column_name!(NextGrantRow {
    last_grant,
    expires_at
});

/// A remembered approval: its scope and audience (NULL: kept before audiences were, the
/// default audience).
pub(in crate::sql) struct ConsentRow {
    scope: String,
    audience: Option<String>,
}

by_column_name!(ConsentRow { scope, audience });

impl ConsentRow {
    pub(in crate::sql) fn into_consent(self) -> Result<Consent, StoreError> {
        let scope = Scope::parse(&self.scope).map_err(|_| corrupt("scope"))?;
        let audience = match self.audience.as_deref() {
            None => Audience::default(),
            Some(stored) => Audience::from_stored(stored).ok_or_else(|| corrupt("audience"))?,
        };
        Ok(Consent::new(scope, audience))
    }
}

/// A remembered approval with its client: a row of a user's listing.
pub(in crate::sql) struct ClientConsentRow {
    client_id: String,
    consent: ConsentRow,
}

by_column_name!(ClientConsentRow { client_id; consent });

impl ClientConsentRow {
    pub(in crate::sql) fn into_consent(self) -> Result<(ClientId, Consent), StoreError> {
        let client = ClientId::new(self.client_id).map_err(|_| corrupt("client id"))?;
        Ok((client, self.consent.into_consent()?))
    }
}
