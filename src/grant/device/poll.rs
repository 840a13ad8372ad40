//! A device's polls at the token endpoint (RFC 8628 §3.4, §3.5): paced, and answered with the
//! user's decision once, as tokens or `access_denied`.

use std::time::Duration;

use super::{Answered, Devices, Flow, SLOW_DOWN_STEP, corrupt_flow};
use crate::audience::Audience;
use crate::client::Client;
use crate::clock::UnixTime;
use crate::error::{ErrorCode, OAuthError};
use crate::grant::issue::{Issued, Issuer};
use crate::scope::Scope;
use crate::secret::DeviceCode;
use crate::store::{Authorization, User, UserId, UserStore, namespace};

/// What polling needs besides the flows: where users are found, and the issuer.
pub(crate) struct Poll<'a> {
    pub(crate) devices: Devices<'a>,
    pub(crate) users: &'a dyn UserStore,
    pub(crate) issuer: Issuer<'a>,
}

impl Poll<'_> {
    /// A device's poll at the token endpoint (RFC 8628 §3.4, §3.5).
    pub(crate) async fn exchange(
        &self,
        client: &Client,
        device_code: &DeviceCode,
        now: UnixTime,
    ) -> Result<Issued, OAuthError> {
        let devices = &self.devices;
        let device = device_code.digest().to_base64url();
        let unknown =
            || OAuthError::invalid_grant("the device code is unknown or was already used");
        let flow = devices.flow(&device, now).await?.ok_or_else(unknown)?;
        if flow.client_id != client.id().as_str() {
            return Err(unknown());
        }
        if flow.expires_at <= now.as_secs() {
            return Err(OAuthError::new(
                ErrorCode::ExpiredToken,
                "the device code expired before the user answered",
            ));
        }
        self.pace(&device, &flow, now).await?;
        let Some(answered) = devices
            .single_use
            .take(&namespace::device_answer(&device), now)
            .await?
        else {
            return Err(OAuthError::new(
                ErrorCode::AuthorizationPending,
                "the user has not answered yet",
            ));
        };
        // Answered: the flow is over, whatever the answer.
        devices
            .single_use
            .take(&namespace::device_flow(&device), now)
            .await?;
        let answered: Answered = serde_json::from_slice(&answered).map_err(|_| corrupt_flow())?;
        let Some(user) = answered.user else {
            return Err(OAuthError::new(
                ErrorCode::AccessDenied,
                "the user denied the request",
            ));
        };
        let user = self.user(&user).await?;
        let corrupt = || OAuthError::from(corrupt_flow());
        let authorization = Authorization::new(
            client.id().clone(),
            Some(user),
            Scope::parse(&flow.scope).map_err(|_| corrupt())?,
        )
        .with_audience(Audience::from_stored(&flow.audience).ok_or_else(corrupt)?)
        .with_authentication(answered.authentication);
        let refresh = client.issues_refresh_tokens();
        self.issuer
            .issue(
                crate::client::GrantType::DeviceCode,
                authorization,
                None,
                refresh,
                now,
            )
            .await
    }

    async fn user(&self, id: &str) -> Result<User, OAuthError> {
        let id = UserId::new(id);
        self.users.find_user(&id).await?.ok_or_else(|| {
            OAuthError::new(ErrorCode::AccessDenied, "the user account is not available")
        })
    }

    /// RFC 8628 §3.5: a poll sooner than the interval after the last one is answered
    /// `slow_down`, and the interval grows by 5 seconds for every later poll.
    async fn pace(&self, device: &str, flow: &Flow, now: UnixTime) -> Result<(), OAuthError> {
        let attempts = self.devices.attempts;
        let slow_key = namespace::device_slowed(device);
        let slowed = attempts
            .attempts(&slow_key, now)
            .await?
            .map_or(0, |a| a.count);
        let interval = self.devices.settings.interval_value() + SLOW_DOWN_STEP * slowed;
        let poll_key = namespace::device_polls(device);
        let polled = attempts.record_attempt(&poll_key, interval, now).await?;
        if polled.count > 1 {
            let left = Duration::from_secs(flow.expires_at.saturating_sub(now.as_secs()).max(1));
            attempts.record_attempt(&slow_key, left, now).await?;
            // The longer interval counts from this poll.
            attempts.clear_attempts(&poll_key).await?;
            attempts
                .record_attempt(&poll_key, interval + SLOW_DOWN_STEP, now)
                .await?;
            crate::metrics::budget_refused("device-poll", "client");
            return Err(OAuthError::new(
                ErrorCode::SlowDown,
                "polling faster than the interval; wait 5 seconds longer between polls",
            ));
        }
        Ok(())
    }
}
