//! The decisions: one file per grant (RFC 6749 §4, §6), each reading top to bottom (check the
//! client, check the request, consult the stores, issue), and the steps they share. Grants take
//! typed requests ([`crate::request`]) and only the stores they use; they answer typed outcomes
//! and errors, never HTTP.
//!
//! The token endpoint's decision, which hands each request to its grant, is [`token`]; the
//! issuing every grant ends with is [`issue`].

pub(crate) mod authorization_code;
pub(crate) mod authorize;
pub(crate) mod bearer;
pub(crate) mod checks;
pub(crate) mod client_auth;
pub(crate) mod client_credentials;
pub(crate) mod decide;
pub(crate) mod device;
pub(crate) mod id_jag;
pub(crate) mod id_token;
pub(crate) mod idle;
pub(crate) mod implicit;
pub(crate) mod issue;
pub(crate) mod jwt_bearer;
pub(crate) mod logout;
pub(crate) mod lookup;
pub(crate) mod password;
pub(crate) mod pending;
pub(crate) mod proof;
pub(crate) mod pushed;
pub(crate) mod refresh;
pub(crate) mod registration;
pub(crate) mod request_object;
pub(crate) mod resource;
pub(crate) mod response;
pub(crate) mod secrets;
pub(crate) mod signin;
pub(crate) mod token;
pub(crate) mod token_exchange;
pub(crate) mod userinfo;
