//! The device authorization grant (RFC 8628): starting a flow (§3.1, §3.2), the user's code
//! on the verification page (§3.3), the user's decision, and the device's polls (§3.4, §3.5).
//!
//! Everything lives in the single-use store, so every node agrees: under one digest of the
//! device code, the flow (until twice its lifetime, to tell `expired_token` from an unknown
//! code) and the user's decision; under the digest of the user code, the way back to the
//! flow (until it expires). Taking the user code is what makes the user's decision single;
//! taking the decision is what makes the device's redemption single.

use std::time::Duration;

use serde::{Deserialize, Serialize};

mod poll;

pub(crate) use poll::Poll;

use super::authorize::{ResponseMode, ResponseType};
use super::checks;
use super::pending::{DeviceRef, PendingAuthorization};
use crate::audience::Audience;
use crate::budget::{Budget, CallerAddress, Payer, Spending};
use crate::client::{Client, GrantType};
use crate::clock::UnixTime;
use crate::device::{USER_CODE_ALPHABET, USER_CODE_LENGTH, UserCodeProblem};
use crate::error::{ErrorCode, OAuthError, StoreError};
use crate::scope::Scope;
use crate::secret::{DeviceCode, SecretDigest, base64url, random_bytes};
use crate::settings::DeviceFlow;
use crate::settings::Resources;
use crate::store::seam::ClientSeam;
use crate::store::{AttemptCounter, SingleUseStore, UserAuthentication, UserId, namespace};

/// RFC 8628 §3.5: each `slow_down` lengthens the interval by this much.
const SLOW_DOWN_STEP: Duration = Duration::from_secs(5);

/// Where wrong user codes are counted, how many a window allows, and what past it.
struct Guesses<'a> {
    key: &'a str,
    limit: u32,
    refusal: UserCodeProblem,
    /// Whose limit it is, as `grantor_budget_refusals_total` counts a refusal.
    tier: &'static str,
}

/// What the device flow needs.
#[derive(Clone, Copy)]
pub(crate) struct Devices<'a> {
    pub(crate) settings: &'a DeviceFlow,
    pub(crate) single_use: &'a dyn SingleUseStore,
    pub(crate) attempts: &'a dyn AttemptCounter,
    pub(crate) clients: ClientSeam<'a>,
    pub(crate) resources: &'a Resources,
}

/// A flow just started: what the device authorization endpoint answers (RFC 8628 §3.2).
pub(crate) struct Started {
    pub(crate) device_code: DeviceCode,
    /// As shown to the user: `XXXX-XXXX`.
    pub(crate) user_code: String,
    pub(crate) expires_in: u64,
    pub(crate) interval: u64,
}

/// A flow as the store keeps it.
#[derive(Serialize, Deserialize)]
struct Flow {
    client_id: String,
    scope: String,
    audience: String,
    expires_at: u64,
}

/// The user's decision as the store keeps it: the user, or none for a denial, and how the user
/// signed in to approve (absent from a decision recorded before grantor kept it).
#[derive(Serialize, Deserialize)]
struct Answered {
    user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authentication: Option<UserAuthentication>,
}

/// All self-registered clients together, and apart from them all clients read from metadata
/// documents together, may start this many times one client's limit of device flows per flow
/// lifetime.
pub(crate) const DEVICE_FLOWS_PER_TIER_PER_CLIENT_LIMIT: u32 = 5;

impl Devices<'_> {
    /// Starts a flow for an authenticated `client` (RFC 8628 §3.1): checks the client may use
    /// the grant, resolves the scope and resources, counts the start against the client's
    /// limit, and keeps the flow under a new device code and user code.
    pub(crate) async fn start(
        &self,
        client: &Client,
        scope: Option<&str>,
        resources: &[&str],
        caller: Option<CallerAddress>,
        now: UnixTime,
    ) -> Result<Started, OAuthError> {
        if !client.allows(GrantType::DeviceCode) {
            return Err(OAuthError::unauthorized_client(
                "the client is not allowed the device authorization grant",
            ));
        }
        let scope = checks::resolve_scope(scope, client)?;
        let audience = self.resources.resolve(resources, client)?;
        self.count_start(client, caller, now).await?;
        let lifetime = self.settings.lifetime_value();
        let expires_at = now.plus(lifetime);
        let device_code = DeviceCode::hashed(base64url(&random_bytes::<32>()?));
        let device = digest_text(device_code.expose_secret());
        let flow = Flow {
            client_id: client.id().as_str().to_owned(),
            scope: scope.as_str().to_owned(),
            audience: audience.as_str().to_owned(),
            expires_at: expires_at.as_secs(),
        };
        let value = serde_json::to_vec(&flow).map_err(|_| StoreError::failed("encoding"))?;
        let kept_until = expires_at.plus(lifetime);
        if !self
            .single_use
            .insert_once(&namespace::device_flow(&device), &value, kept_until, now)
            .await?
        {
            return Err(StoreError::failed("a fresh device code was already taken").into());
        }
        // 20⁸ user codes: a collision with a live one is rare but possible; draw again.
        for _ in 0..4 {
            let user_code = new_user_code()?;
            let key = namespace::user_code(&digest_text(&user_code));
            if self
                .single_use
                .insert_once(&key, device.as_bytes(), expires_at, now)
                .await?
            {
                return Ok(Started {
                    device_code,
                    user_code: format!("{}-{}", &user_code[..4], &user_code[4..]),
                    expires_in: lifetime.as_secs(),
                    interval: self.settings.interval_value().as_secs(),
                });
            }
        }
        Err(StoreError::unavailable("no free user code was found; try again").into())
    }

    /// Counts a start against the client's budget and its tier's pool, per flow lifetime
    /// ([`budget`](crate::budget)); a public client's starts also per caller network, so
    /// anonymous callers of one network do not refuse its devices elsewhere.
    async fn count_start(
        &self,
        client: &Client,
        caller: Option<CallerAddress>,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let per_client = self.settings.per_client_limit();
        let budget = Budget {
            spending: Spending::DeviceStarts,
            window: self.settings.lifetime_value(),
            per_client: Some(per_client),
            per_tier: per_client.saturating_mul(DEVICE_FLOWS_PER_TIER_PER_CLIENT_LIMIT),
        };
        budget
            .spend(&Payer::new(client, caller), self.attempts, now)
            .await
    }

    /// The verification page's step (RFC 8628 §3.3): the pending authorization of the flow
    /// whose user code was typed, for the user to sign in and approve. Wrong codes typed by
    /// anyone not signed in count against one server-wide limit; once it is spent, codes are
    /// taken only with a sign-in ([`Devices::enter_user_code_signed_in`]).
    pub(crate) async fn enter_user_code(
        &self,
        typed: &str,
        now: UnixTime,
    ) -> Result<PendingAuthorization, Entered> {
        let normalized =
            normalize_user_code(typed).ok_or(Entered::Problem(UserCodeProblem::Malformed))?;
        let guesses = Guesses {
            key: namespace::USER_CODE_GUESSES,
            limit: self.settings.user_code_guess_limit(),
            refusal: UserCodeProblem::SignInRequired,
            tier: "server",
        };
        self.look_up(&normalized, &guesses, now).await
    }

    /// The verification page's step with the user's sign-in (the password already checked):
    /// wrong codes count against `user`'s own limit
    /// ([`DeviceFlow::USER_CODE_GUESSES_PER_ACCOUNT`] a minute), so a flood of anonymous
    /// guesses that spent the server-wide limit does not refuse a person's right code, and
    /// guesses stay bounded: the server-wide limit plus each account's.
    pub(crate) async fn enter_user_code_signed_in(
        &self,
        typed: &str,
        user: &UserId,
        now: UnixTime,
    ) -> Result<PendingAuthorization, Entered> {
        let normalized =
            normalize_user_code(typed).ok_or(Entered::Problem(UserCodeProblem::Malformed))?;
        let key = namespace::account_user_code_guesses(user);
        let guesses = Guesses {
            key: &key,
            limit: DeviceFlow::USER_CODE_GUESSES_PER_ACCOUNT,
            refusal: UserCodeProblem::Throttled(Duration::ZERO),
            tier: "account",
        };
        self.look_up(&normalized, &guesses, now).await
    }

    /// The flow of the user code `normalized`, a wrong one counted under `guesses`.
    async fn look_up(
        &self,
        normalized: &str,
        guesses: &Guesses<'_>,
        now: UnixTime,
    ) -> Result<PendingAuthorization, Entered> {
        if let Some(counted) = self.attempts.attempts(guesses.key, now).await?
            && counted.count >= guesses.limit
        {
            let wait = Duration::from_secs(now.seconds_until(counted.resets_at));
            crate::metrics::budget_refused("user-code", guesses.tier);
            return Err(Entered::Problem(match guesses.refusal {
                UserCodeProblem::Throttled(_) => UserCodeProblem::Throttled(wait),
                other => other,
            }));
        }
        let user_code = digest_text(normalized);
        let found = self.find_flow(&user_code, now).await?;
        let Some((device, flow)) = found else {
            let window = crate::settings::DeviceFlow::GUESS_WINDOW;
            self.attempts
                .record_attempt(guesses.key, window, now)
                .await?;
            return Err(Entered::Problem(UserCodeProblem::Unknown));
        };
        let client = self
            .clients
            .find_client(&flow.client_id)
            .await?
            .ok_or(Entered::Problem(UserCodeProblem::Unknown))?;
        let corrupt = || StoreError::failed("a stored device flow is malformed");
        Ok(PendingAuthorization {
            client,
            response_type: ResponseType::Device,
            redirect_uri: String::new(),
            scope: Scope::parse(&flow.scope).map_err(|_| corrupt())?,
            audience: Audience::from_stored(&flow.audience).ok_or_else(corrupt)?,
            state: None,
            // Unused: a device's answer goes to the device, never to a redirect URI.
            response_mode: ResponseMode::Fragment,
            code_challenge: None,
            dpop_jkt: None,
            created_at: now,
            device: Some(DeviceRef { device, user_code }),
            openid: None,
            authenticated: None,
            acr: None,
            pushed: None,
        })
    }

    /// The flow a user code leads to, while both live.
    async fn find_flow(
        &self,
        user_code: &str,
        now: UnixTime,
    ) -> Result<Option<(String, Flow)>, StoreError> {
        let Some(device) = self
            .single_use
            .peek(&namespace::user_code(user_code), now)
            .await?
        else {
            return Ok(None);
        };
        let device = String::from_utf8(device).map_err(|_| corrupt_flow())?;
        let Some(flow) = self.flow(&device, now).await? else {
            return Ok(None);
        };
        Ok((flow.expires_at > now.as_secs()).then_some((device, flow)))
    }

    async fn flow(&self, device: &str, now: UnixTime) -> Result<Option<Flow>, StoreError> {
        match self
            .single_use
            .peek(&namespace::device_flow(device), now)
            .await?
        {
            Some(value) => serde_json::from_slice(&value)
                .map(Some)
                .map_err(|_| corrupt_flow()),
            None => Ok(None),
        }
    }

    /// Records the signed-in user's decision for the device to collect: the user who approved
    /// and how they signed in, or none for a denial. Taking the user code makes it single: a
    /// second decision, on any node, finds it gone.
    pub(crate) async fn record(
        &self,
        device: &DeviceRef,
        approved: Option<(&UserId, UserAuthentication)>,
        now: UnixTime,
    ) -> Result<(), OAuthError> {
        let gone = || {
            OAuthError::new(
                ErrorCode::ExpiredToken,
                "this code has expired or was already answered; start again on the device",
            )
        };
        let Some(flow) = self.flow(&device.device, now).await? else {
            return Err(gone());
        };
        if self
            .single_use
            .take(&namespace::user_code(&device.user_code), now)
            .await?
            .is_none()
        {
            return Err(gone());
        }
        let (user, authentication) = approved.unzip();
        let answered = Answered {
            user: user.map(|u| u.as_str().to_owned()),
            authentication,
        };
        let value = serde_json::to_vec(&answered).map_err(|_| StoreError::failed("encoding"))?;
        let kept_until = UnixTime::from_secs(flow.expires_at).plus(self.settings.lifetime_value());
        self.single_use
            .insert_once(
                &namespace::device_answer(&device.device),
                &value,
                kept_until,
                now,
            )
            .await?;
        Ok(())
    }
}

/// What entering a user code ran into: a problem to show, or a failure.
#[derive(Debug)]
pub(crate) enum Entered {
    Problem(UserCodeProblem),
    Failed(OAuthError),
}

impl From<StoreError> for Entered {
    fn from(error: StoreError) -> Self {
        Self::Failed(error.into())
    }
}

/// A user code as typed, normalized: upper case, without dashes or spaces; `None` when it
/// cannot be one.
/// Whether `typed` has the shape of a user code (what [`normalize_user_code`] accepts): checked
/// before a password is, so a malformed code costs no hash.
pub(crate) fn is_user_code_shaped(typed: &str) -> bool {
    normalize_user_code(typed).is_some()
}

fn normalize_user_code(typed: &str) -> Option<String> {
    if typed.len() > 64 {
        return None;
    }
    let code: String = typed
        .chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let valid =
        code.len() == USER_CODE_LENGTH && code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b));
    valid.then_some(code)
}

/// A new user code from the CSPRNG, without modulo bias: bytes of 240 and above (240 being
/// 12 × 20) are drawn again.
fn new_user_code() -> Result<String, StoreError> {
    let mut code = String::with_capacity(USER_CODE_LENGTH);
    while code.len() < USER_CODE_LENGTH {
        for byte in random_bytes::<16>()? {
            if byte < 240 && code.len() < USER_CODE_LENGTH {
                code.push(char::from(USER_CODE_ALPHABET[usize::from(byte % 20)]));
            }
        }
    }
    Ok(code)
}

/// The base64url SHA-256 digest of `text`: what the store keys hold instead of codes.
fn digest_text(text: &str) -> String {
    SecretDigest::of(text).to_base64url()
}

fn corrupt_flow() -> StoreError {
    StoreError::failed("a stored device flow is malformed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_codes_are_eight_letters_of_the_alphabet() {
        for _ in 0..200 {
            let code = new_user_code().unwrap();
            assert_eq!(code.len(), USER_CODE_LENGTH);
            assert!(
                code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b)),
                "{code}"
            );
        }
    }

    #[test]
    fn typed_user_codes_are_normalized_or_refused() {
        assert_eq!(
            normalize_user_code("bcdf-ghjk").as_deref(),
            Some("BCDFGHJK")
        );
        assert_eq!(
            normalize_user_code(" BCDF GHJK ").as_deref(),
            Some("BCDFGHJK")
        );
        assert_eq!(normalize_user_code("BCDF-GHJ"), None);
        assert_eq!(
            normalize_user_code("ABCD-EFGH"),
            None,
            "vowels are not in the alphabet"
        );
        assert_eq!(normalize_user_code("BCDF-GHJ1"), None);
        assert_eq!(normalize_user_code(&"B".repeat(100)), None);
        assert_eq!(normalize_user_code("ḂCDF-GHJK"), None);
    }
}
