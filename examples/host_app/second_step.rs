//! The host's own second step: after a right password, a user with a TOTP secret enters the
//! code of their authenticator app (RFC 6238: SHA-1, 6 digits, 30-second steps). grantor knows
//! nothing of it until the host calls `finish_sign_in` with `amr` `["pwd", "otp"]`.
//!
//! Between the two pages the host keeps a *pending login*: a random id in a cookie of its own,
//! naming the user in an in-memory table for 5 minutes, spent by the right code. It is bound to
//! grantor's sealed form (`csrf`), so it finishes only the authorization request it began with.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use grantor::store::UserId;
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;
use totp_rs::{Algorithm, Secret, TOTP};

/// The host's cookie naming the pending login.
pub const PENDING_COOKIE: &str = "host-pending";
/// How long the code page may wait for its code.
pub const PENDING_TTL: Duration = Duration::from_secs(300);
/// The most pending logins kept at once: past it, a new one is refused (503), never one of the
/// others dropped, so a flood of right passwords cannot push a person's page out.
const MAX_PENDING: usize = 10_000;
/// Wrong codes an account may send in [`WRONG_CODE_WINDOW`] before its codes are no longer
/// checked: a 6-digit code is guessed one in a million, and each guess here already cost a
/// right password.
const MAX_WRONG_CODES: u32 = 5;
const WRONG_CODE_WINDOW: Duration = Duration::from_secs(900);
/// RFC 6238 §5.2's steps: 30 seconds, and the one before is still accepted (a code typed as
/// the step turned).
const STEP_SECS: u64 = 30;

/// What became of a code sent from the code page.
#[derive(Debug, PartialEq, Eq)]
pub enum CodeCheck {
    /// Right: the pending login is spent; finish the sign-in as this user.
    Accepted(UserId),
    /// Wrong: show the code page again.
    Wrong,
    /// No such pending login (expired, spent, never begun, or for another request), or too
    /// many wrong codes for the account: start again.
    Refused,
}

/// The pending logins, and what each account with a second factor has spent.
#[derive(Default)]
pub struct PendingLogins {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    pending: HashMap<String, Pending>,
    /// One entry per account that has sent a code: bounded by the accounts with a second
    /// factor, and reached only past a right password.
    accounts: HashMap<UserId, Spent>,
}

impl State {
    /// The pending login `id`, while it lives and was begun for `csrf`.
    fn live(&self, id: &str, csrf: &str, now: Instant) -> Option<&Pending> {
        let pending = self.pending.get(id)?;
        let form: [u8; 32] = Sha256::digest(csrf.as_bytes()).into();
        let same_form = bool::from(pending.form.ct_eq(&form));
        (same_form && pending.expires > now).then_some(pending)
    }
}

struct Pending {
    user: UserId,
    /// SHA-256 of grantor's `csrf` (the sealed form is a few KiB; its digest is enough to bind).
    form: [u8; 32],
    expires: Instant,
}

/// An account's accepted and refused codes.
#[derive(Default)]
struct Spent {
    /// The step of the last accepted code: that code, and any older, is never accepted again
    /// (RFC 6238 §5.2).
    last_step: Option<u64>,
    wrong: u32,
    window_start: Option<Instant>,
}

impl Spent {
    fn throttled(&self, now: Instant) -> bool {
        let in_window = self
            .window_start
            .is_some_and(|start| now.duration_since(start) < WRONG_CODE_WINDOW);
        in_window && self.wrong >= MAX_WRONG_CODES
    }

    fn count_wrong(&mut self, now: Instant) {
        match self.window_start {
            Some(start) if now.duration_since(start) < WRONG_CODE_WINDOW => self.wrong += 1,
            _ => {
                self.window_start = Some(now);
                self.wrong = 1;
            }
        }
    }
}

impl PendingLogins {
    /// A pending login for `user`, bound to grantor's `csrf`: its id for the cookie, or `None`
    /// when the table is full.
    pub fn begin(&self, user: UserId, csrf: &str) -> Option<String> {
        let now = Instant::now();
        let mut state = self.lock();
        if state.pending.len() >= MAX_PENDING {
            state.pending.retain(|_, pending| pending.expires > now);
            if state.pending.len() >= MAX_PENDING {
                return None;
            }
        }
        let id =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>());
        let pending = Pending {
            user,
            form: Sha256::digest(csrf.as_bytes()).into(),
            expires: now + PENDING_TTL,
        };
        state.pending.insert(id.clone(), pending);
        Some(id)
    }

    /// The user of the pending login `id`, while it lives and was begun for `csrf`.
    pub fn user(&self, id: &str, csrf: &str) -> Option<UserId> {
        let state = self.lock();
        let pending = state.live(id, csrf, Instant::now())?;
        Some(pending.user.clone())
    }

    /// Checks `code` for the pending login `id` against the account's `secret` (base32), and
    /// spends the pending login when it is right: under one lock, so that of two posts of one
    /// page only one is accepted.
    pub fn check(&self, id: &str, csrf: &str, secret: &str, code: &str) -> CodeCheck {
        let step = matching_step(secret, code.trim(), unix_now());
        let now = Instant::now();
        let mut guard = self.lock();
        let state = &mut *guard;
        let Some(user) = state
            .live(id, csrf, now)
            .map(|pending| pending.user.clone())
        else {
            return CodeCheck::Refused;
        };
        let spent = state.accounts.entry(user.clone()).or_default();
        if spent.throttled(now) {
            state.pending.remove(id);
            return CodeCheck::Refused;
        }
        match step {
            Some(step) if spent.last_step.is_none_or(|last| step > last) => {
                spent.last_step = Some(step);
                spent.wrong = 0;
                state.pending.remove(id);
                CodeCheck::Accepted(user)
            }
            _ => {
                spent.count_wrong(now);
                if spent.throttled(now) {
                    state.pending.remove(id);
                    return CodeCheck::Refused;
                }
                CodeCheck::Wrong
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update leaves the maps consistent: a panic elsewhere does not spoil them.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The step whose code `code` is, this step's or the one before; `None` for a wrong code or an
/// unreadable secret.
fn matching_step(secret: &str, code: &str, now: u64) -> Option<u64> {
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secret = Secret::Encoded(secret.to_owned()).to_bytes().ok()?;
    let totp = TOTP::new_unchecked(Algorithm::SHA1, 6, 1, STEP_SECS, secret);
    let step = now / STEP_SECS;
    [step, step.saturating_sub(1)]
        .into_iter()
        .find(|candidate| {
            let expected = totp.generate(candidate * STEP_SECS);
            bool::from(expected.as_bytes().ct_eq(code.as_bytes()))
        })
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}
