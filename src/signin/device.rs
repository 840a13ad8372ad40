//! The device verification page's steps (RFC 8628 §3.3): the user types the code their device
//! shows, then signs in and approves as for any authorization request.

use super::{SignInFlow, Step};
use crate::endpoint::authorize;
use crate::grant::authorize::{Answer, Decision, PendingAuthorization, Refused};
use crate::grant::device::Entered;
use crate::store::User;

impl SignInFlow {
    /// The verification page's form `POST` with the `user_code` the user typed (dashes, spaces
    /// and case do not matter): the sign-in page for the device's request
    /// ([`Step::SignIn`]), or the code form again ([`Step::EnterUserCode`]) when the code is
    /// malformed, unknown, expired or already answered, or when too many wrong codes were
    /// entered on this server lately ([`DeviceFlow::user_code_guesses`]).
    ///
    /// The code form may be prefilled from `verification_uri_complete`'s `user_code` query
    /// parameter, but the user should still submit it, which is what this call stands for
    /// (RFC 8628 §5.4: the user confirms what their device shows).
    ///
    /// [`DeviceFlow::user_code_guesses`]: crate::device::DeviceFlow::user_code_guesses
    pub async fn enter_user_code(&self, user_code: &str) -> Step {
        let inner = &self.server.inner;
        let Some(devices) = inner.devices() else {
            return Step::Error(crate::OAuthError::invalid_request(
                "this server does not serve the device authorization grant",
            ));
        };
        match devices.enter_user_code(user_code, inner.clock.now()).await {
            Ok(pending) => self.sign_in_page(&pending).await,
            Err(Entered::Problem(problem)) => Step::EnterUserCode(problem),
            Err(Entered::Failed(error)) => Step::Error(error),
        }
    }

    /// The decision on a device flow, recorded for the device.
    pub(super) async fn finish_device(
        &self,
        pending: &PendingAuthorization,
        user: &User,
        decision: Decision,
    ) -> Step {
        match authorize::answer(&self.server.inner, pending, user.id(), decision).await {
            Ok(Answer::Device(decision)) => Step::DeviceAnswered(decision),
            Ok(_) => Step::Error(crate::OAuthError::invalid_request(
                "the device authorization is not valid",
            )),
            Err(Refused::Redirect(error) | Refused::NotRedirectable(error)) => Step::Error(error),
        }
    }
}
