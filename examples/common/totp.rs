//! The demo's second factor (examples/README.md part 4): Alice's authenticator app, RFC 6238 TOTP with
//! SHA-1, 6 digits and 30-second steps over the base32 secret `JBSWY3DPEHPK3PXP`; Bob has none.
//! The code of the current step or the one before is right. grantor does the rest: the page,
//! its throttle, and spending each accepted code once (RFC 6238 §5.2).

use grantor::clock::UnixTime;
use grantor::store::{SecondFactor, StoreError, User};
use subtle::ConstantTimeEq as _;
use totp_rs::{Algorithm, Secret, TOTP};

/// The classes of the demo's sign-ins (examples/README.md part 4), weakest first.
pub const PASSWORD_ACR: &str = "urn:grantor:acr:password";
pub const MFA_ACR: &str = "urn:grantor:acr:mfa";

/// Alice's TOTP secret, base32 as her authenticator app was given it.
const ALICE_SECRET: &str = "JBSWY3DPEHPK3PXP";

/// The users' authenticator apps.
pub struct DemoTotp {
    alice: TOTP,
}

impl DemoTotp {
    pub fn new() -> Result<Self, Box<dyn std::error::Error>> {
        let secret = Secret::Encoded(ALICE_SECRET.to_owned())
            .to_bytes()
            .map_err(|error| format!("Alice's TOTP secret: {error:?}"))?;
        // 80 bits, as the contract fixes it: below the 128 `TOTP::new` asks of new secrets.
        let alice = TOTP::new_unchecked(Algorithm::SHA1, 6, 1, 30, secret);
        Ok(Self { alice })
    }

    fn of(&self, user: &User) -> Option<&TOTP> {
        (user.username() == "alice@example.com").then_some(&self.alice)
    }
}

#[grantor::async_trait]
impl SecondFactor for DemoTotp {
    async fn enrolled(&self, user: &User) -> Result<bool, StoreError> {
        Ok(self.of(user).is_some())
    }

    async fn verify(
        &self,
        user: &User,
        code: &str,
        now: UnixTime,
    ) -> Result<Option<u64>, StoreError> {
        let Some(totp) = self.of(user) else {
            return Ok(None);
        };
        if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(None);
        }
        let step = now.as_secs() / 30;
        // This step's code, or the one before it (a code typed as the step turned).
        for candidate in [step, step.saturating_sub(1)] {
            let expected = totp.generate(candidate * 30);
            if bool::from(expected.as_bytes().ct_eq(code.as_bytes())) {
                return Ok(Some(candidate));
            }
        }
        Ok(None)
    }
}
