//! A validated authorization request waiting for its user ([`PendingAuthorization`]): what it
//! asks, how its user signed in, and the small JSON document a sign-in session keeps it as,
//! turned back into one with the client as it is registered now.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::response::{ReplyTo, ResponseMode, ResponseType};
use crate::audience::Audience;
use crate::client::{Approval, Client, ClientId};
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError, StoreError};
use crate::oidc::{AcrRequest, OpenIdRequest, Prompt};
use crate::pkce::CodeChallenge;
use crate::scope::Scope;
use crate::secret::SecretDigest;
use crate::store::seam::ClientSeam;
use crate::store::{JwkThumbprint, UserAuthentication};

/// The user's answer on the approval page (or the host's, for clients without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The user approves: the client gets a code or a token.
    Approve,
    /// The user denies: the client gets `access_denied`.
    Deny,
}

/// A validated authorization request waiting for the user to sign in.
///
/// Only [`AuthorizationServer::authorize`](crate::AuthorizationServer::authorize) makes one,
/// and it cannot be changed: the host keeps it where the browser cannot alter it (server-side,
/// or sealed as [`AuthorizationServer::begin_sign_in`](crate::AuthorizationServer::begin_sign_in) does until the sign-in, then in the session
/// seam) while its sign-in page runs, then hands it to
/// [`AuthorizationServer::decide`](crate::AuthorizationServer::decide). Nothing the browser
/// sends afterwards can alter the client, redirect URI, scope or PKCE challenge it carries.
pub struct PendingAuthorization {
    pub(crate) client: Arc<Client>,
    pub(crate) response_type: ResponseType,
    pub(crate) redirect_uri: String,
    pub(crate) scope: Scope,
    /// The resources the tokens will be for (RFC 8707).
    pub(crate) audience: Audience,
    pub(crate) state: Option<String>,
    /// How the answer goes back.
    pub(crate) response_mode: ResponseMode,
    pub(crate) code_challenge: Option<CodeChallenge>,
    /// The DPoP key the code will be bound to (RFC 9449 §10).
    pub(crate) dpop_jkt: Option<JwkThumbprint>,
    pub(crate) created_at: UnixTime,
    /// The device flow this authorization answers (RFC 8628), for [`ResponseType::Device`].
    pub(crate) device: Option<DeviceRef>,
    /// What an OpenID Connect request (the scope holds `openid`) asks beyond OAuth's; boxed,
    /// so that a plain OAuth request carries a pointer's worth.
    pub(crate) openid: Option<Box<OpenIdRequest>>,
    /// Who signed in for it and when, once grantor's sign-in has: `None` while the user has
    /// not, and for a host that signs users in itself (then the decision is the sign-in).
    pub(crate) authenticated: Option<Box<Authenticated>>,
    /// What the request asks of the sign-in's `acr` (and its `max_age`, without OpenID
    /// Connect); boxed, as most requests ask nothing.
    pub(crate) acr: Option<Box<AcrRequest>>,
    /// Where the pushed request this one came from waits (RFC 9126 §4; a key of digests, never
    /// the reference itself, which would start the request again): answering the
    /// sign-in spends it, so a browser may visit its `request_uri` again until then.
    pub(crate) pushed: Option<Box<str>>,
}

/// How the user of a pending authorization signed in: by a password now, or earlier in the
/// browser's signed-in session (single sign-on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Authenticated {
    /// When (`auth_time`).
    pub(crate) auth_time: UnixTime,
    /// How (`amr`).
    pub(crate) amr: Vec<String>,
    /// The browser session's public id, with single sign-on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sid: Option<String>,
    /// The digest of the browser session's cookie (never the cookie; kept only server-side),
    /// where the decision records what it issued, for logout to end it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "digest_text")]
    pub(crate) session: Option<SecretDigest>,
    /// The authentication context class the sign-in satisfied (`acr`), when the deployment
    /// names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) acr: Option<String>,
    /// Who, while a step of grantor's sign-in is still to come (the second factor's page):
    /// the user the password named. `None` once the sign-in is complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) user: Option<String>,
}

impl Authenticated {
    /// A password sign-in at `now`, in the browser session `sid` under the cookie digest
    /// `session` when single sign-on opened one.
    pub(crate) fn by_password(now: UnixTime, session: Option<(String, SecretDigest)>) -> Self {
        let (sid, session) = session.unzip();
        Self {
            auth_time: now,
            amr: vec!["pwd".to_owned()],
            sid,
            session,
            acr: None,
            user: None,
        }
    }

    /// The same sign-in at the class `acr`.
    pub(crate) fn with_acr(mut self, acr: Option<String>) -> Self {
        self.acr = acr;
        self
    }

    /// What the tokens of this sign-in remember of it.
    pub(crate) fn authentication(&self) -> UserAuthentication {
        UserAuthentication::new(self.auth_time)
            .with_acr(self.acr.clone())
            .with_amr(self.amr.iter().cloned())
    }
}

/// A digest as base64url text in the pending authorization's JSON.
mod digest_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::secret::{SecretDigest, base64url};

    pub(super) fn serialize<S: Serializer>(
        digest: &Option<SecretDigest>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match digest {
            Some(digest) => serializer.serialize_str(&base64url(digest.as_bytes())),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SecretDigest>, D::Error> {
        use base64::Engine as _;
        let Some(text) = Option::<String>::deserialize(deserializer)? else {
            return Ok(None);
        };
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .map_err(serde::de::Error::custom)?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| serde::de::Error::custom("a digest is 32 bytes"))?;
        Ok(Some(SecretDigest::from_bytes(bytes)))
    }
}

impl PendingAuthorization {
    /// The client asking.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The scope that will be granted on approval.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The resources the tokens will be for (RFC 8707): the request's `resource`s, or the
    /// default audience.
    pub fn audience(&self) -> &Audience {
        &self.audience
    }

    /// Whether the user must see an approval page naming the client and the scope: when the
    /// client's registration says so, when the request says `prompt=consent` (OpenID Connect
    /// Core §3.1.2.1), and always for a device flow (RFC 8628 §5.4: the user confirms the
    /// device's request, so someone talked into typing another's code sees what it would grant
    /// before it does). With single sign-on, an approval given before for this client and at
    /// least this scope stands in for the page, except under `prompt=consent` or for a device.
    pub fn needs_approval(&self) -> bool {
        self.client.approval() == Approval::Required
            || self.response_type == ResponseType::Device
            || self.prompt() == Prompt::Consent
    }

    /// `code`, `token`, or [`ResponseType::Device`] for a device flow.
    pub fn response_type(&self) -> ResponseType {
        self.response_type
    }

    /// The redirect URI the answer will go to.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Whether this is an OpenID Connect request (its scope holds `openid`, and the server
    /// serves OpenID Connect): approval issues an ID token too.
    pub fn is_openid(&self) -> bool {
        self.openid.is_some()
    }

    /// The `login_hint` of an OpenID Connect request (OIDC Core §3.1.2.1): who the client
    /// thinks signs in, for the sign-in page to prefill. Shown back, never trusted.
    pub fn login_hint(&self) -> Option<&str> {
        self.openid.as_ref()?.login_hint.as_deref()
    }

    /// The `prompt` of an OpenID Connect request.
    pub fn prompt(&self) -> Prompt {
        self.openid.as_ref().map_or(Prompt::Default, |o| o.prompt)
    }

    /// The most seconds since the user's sign-in the request accepts (`max_age`, OIDC Core
    /// §3.1.2.1, RFC 9470 §4); for an OpenID Connect request that sends none, the client's
    /// registered `default_max_age` (OIDC Registration §2).
    pub fn max_age(&self) -> Option<u64> {
        match &self.openid {
            Some(openid) => openid.max_age.or(self.client.default_max_age()),
            None => self.acr.as_ref().and_then(|acr| acr.max_age),
        }
    }

    /// The authentication context classes the request asks for (`acr_values`, or the
    /// `claims` parameter's `acr`), in order of preference, and whether one is essential.
    pub fn acr_values(&self) -> (&[String], bool) {
        match &self.acr {
            Some(acr) => (&acr.values, acr.essential),
            None => (&[], false),
        }
    }

    /// How the user signed in, for every token approval issues: as grantor's sign-in recorded
    /// it, or, for a host that signs users in itself and decides directly, a sign-in at `now`
    /// (the decision) of no named class and by no method grantor knows.
    pub(crate) fn authentication(&self, now: UnixTime) -> UserAuthentication {
        let signed_in = self.authenticated.as_ref().map_or_else(
            || UserAuthentication::new(now),
            |signed| signed.authentication(),
        );
        match &self.openid {
            Some(openid) => signed_in.with_userinfo_claims(&openid.claims.userinfo),
            None => signed_in,
        }
    }

    /// Where this request's answer goes.
    pub(crate) fn reply_to(&self) -> ReplyTo<'_> {
        ReplyTo {
            redirect_uri: &self.redirect_uri,
            mode: self.response_mode,
            state: self.state.as_deref(),
            client_id: self.client.id().as_str(),
            signing: self.client.authorization_signing_algorithm(),
        }
    }
}

impl fmt::Debug for PendingAuthorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingAuthorization")
            .field("client_id", self.client.id())
            .field("response_type", &self.response_type)
            .field("redirect_uri", &self.redirect_uri)
            .field("scope", &self.scope)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

/// Which flow a pending authorization answers: digests of its device code and user code. No
/// `Debug`: a user code has few enough values that its digest must not be printed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DeviceRef {
    pub(crate) device: String,
    pub(crate) user_code: String,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    client_id: String,
    /// `code`, `token`, `id_token`, `id_token token` or `device`.
    response_type: String,
    redirect_uri: String,
    scope: String,
    /// Absent from sessions kept before audiences were: the default audience then.
    #[serde(default)]
    audience: String,
    state: Option<String>,
    /// `fragment`, `form_post` or a JWT mode (`query.jwt`…) when the request asked for a
    /// mode other than its response type's own; absent otherwise (and from sessions kept before modes were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response_mode: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    /// The DPoP key the code will be bound to (RFC 9449 §10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dpop_jkt: Option<String>,
    created_at: u64,
    /// The device flow answered, for a device authorization (RFC 8628).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    device: Option<DeviceRef>,
    /// What an OpenID Connect request asks beyond OAuth's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    openid: Option<OpenIdRequest>,
    /// How the user signed in, once they have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authenticated: Option<Authenticated>,
    /// What the request asks of the sign-in's `acr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    acr: Option<AcrRequest>,
    /// Where the pushed request it came from waits, until the sign-in is answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pushed: Option<String>,
}

/// `pending` as the session store keeps it.
pub(crate) fn to_session(pending: &PendingAuthorization) -> String {
    let challenge = pending.code_challenge.as_ref();
    let stored = Stored {
        client_id: pending.client.id().as_str().to_owned(),
        response_type: pending.response_type.as_str().to_owned(),
        redirect_uri: pending.redirect_uri.clone(),
        scope: pending.scope.as_str().to_owned(),
        audience: pending.audience.as_str().to_owned(),
        state: pending.state.clone(),
        response_mode: (pending.response_mode != ResponseMode::default_for(pending.response_type))
            .then(|| pending.response_mode.as_stored().to_owned()),
        code_challenge: challenge.map(|c| c.as_str().to_owned()),
        code_challenge_method: challenge.map(|c| c.method().as_str().to_owned()),
        dpop_jkt: pending.dpop_jkt.map(|jkt| jkt.to_string()),
        created_at: pending.created_at.as_secs(),
        device: pending.device.clone(),
        openid: pending.openid.as_deref().cloned(),
        authenticated: pending.authenticated.as_deref().cloned(),
        acr: pending.acr.as_deref().cloned(),
        pushed: pending.pushed.as_deref().map(str::to_owned),
    };
    // A struct of strings and integers always serializes.
    serde_json::to_string(&stored).unwrap_or_default()
}

/// The client id of a pending authorization as [`to_session`] wrote it, without looking the
/// client up.
pub(crate) fn client_id(text: &str) -> Result<String, serde_json::Error> {
    #[derive(Deserialize)]
    struct ClientOnly {
        client_id: String,
    }
    Ok(serde_json::from_str::<ClientOnly>(text)?.client_id)
}

/// When the pending authorization [`to_session`] wrote was made (Unix seconds), without
/// looking the client up.
pub(crate) fn created_at(text: &str) -> Result<u64, serde_json::Error> {
    #[derive(Deserialize)]
    struct CreatedOnly {
        created_at: u64,
    }
    Ok(serde_json::from_str::<CreatedOnly>(text)?.created_at)
}

/// The pending authorization a session holds, with its client as registered now; an error page
/// if the client is gone.
pub(crate) async fn from_session(
    text: &str,
    clients: ClientSeam<'_>,
) -> Result<PendingAuthorization, OAuthError> {
    let corrupt = || OAuthError::from(StoreError::failed("a stored sign-in session is malformed"));
    let stored: Stored = serde_json::from_str(text).map_err(|_| corrupt())?;
    ClientId::new(&stored.client_id).map_err(|_| corrupt())?;
    let client = clients
        .find_client(&stored.client_id)
        .await?
        .ok_or_else(|| {
            OAuthError::new(
                ErrorCode::InvalidRequest,
                "the client is no longer registered",
            )
        })?;
    let response_type = match stored.response_type.as_str() {
        "device" if stored.device.is_some() => ResponseType::Device,
        other => ResponseType::read(other).ok_or_else(corrupt)?,
    };
    let code_challenge = match (stored.code_challenge, stored.code_challenge_method) {
        (None, None) => None,
        (Some(challenge), Some(method)) => {
            Some(CodeChallenge::new(&challenge, Some(&method), true).map_err(|_| corrupt())?)
        }
        _ => return Err(corrupt()),
    };
    Ok(PendingAuthorization {
        client,
        response_type,
        redirect_uri: stored.redirect_uri,
        scope: Scope::parse(&stored.scope).map_err(|_| corrupt())?,
        audience: Audience::from_stored(&stored.audience).ok_or_else(corrupt)?,
        state: stored.state,
        // A JWT mode was offered when the request was validated.
        response_mode: ResponseMode::read(stored.response_mode.as_deref(), response_type, true)
            .ok_or_else(corrupt)?,
        code_challenge,
        dpop_jkt: stored
            .dpop_jkt
            .map(|text| JwkThumbprint::parse(&text).ok_or_else(corrupt))
            .transpose()?,
        created_at: UnixTime::from_secs(stored.created_at),
        device: stored.device,
        openid: stored.openid.map(Box::new),
        authenticated: stored.authenticated.map(Box::new),
        acr: stored.acr.map(Box::new),
        pushed: stored.pushed.map(String::into_boxed_str),
    })
}
