//! The host's sign-in, approval and device verification pages: [`Site`] serves them as HTTP
//! and [`Pages`] renders them (grantor's [`PlainPages`] by default). The steps behind them are
//! the server's ([`AuthorizationServer::begin_sign_in`](crate::AuthorizationServer::begin_sign_in)
//! and the methods beside it, deciding through the grants); this module only reads forms and
//! writes HTML, cookies and security headers.
//!
//! What an unauthenticated browser can make the server keep through these pages: nothing.
//! Until the user signs in, the pending authorization travels sealed (authenticated
//! encryption) in the sign-in form, bound to the cookie, so a flood of authorization requests
//! fills no table. A successful sign-in spends the form and, when an approval page follows,
//! opens the first server-side session under a new session id and CSRF token.

mod pages;
mod site;

pub use crate::grant::password::SignInProblem;
pub use crate::grant::signin::{Authentication, SecondFactorProblem};
pub use crate::server::{ApprovalPage, LogoutPage, SecondFactorPage, SignInPage, Step};
pub use pages::{DEFAULT_CONTENT_SECURITY_POLICY, DevicePage, Pages, PlainPages, escape_html};
pub use site::{DEFAULT_APPROVAL_PATH, DEFAULT_SECOND_FACTOR_PATH, DEFAULT_SIGN_IN_PATH, Site};
