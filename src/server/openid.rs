//! The OpenID Connect endpoints (feature `oidc`): userinfo and the discovery document.

use http::{Request, Response, StatusCode};

use super::AuthorizationServer;
use crate::endpoint::userinfo::{self, UserInfo};
use crate::endpoint::{metadata, span};

impl AuthorizationServer {
    /// The UserInfo endpoint (OpenID Connect Core §5.3), `GET` or `POST` at
    /// [`EndpointPaths::userinfo`](crate::settings::EndpointPaths::userinfo): with an access
    /// token whose scope holds `openid` (in `Authorization: Bearer`, `Authorization: DPoP` with
    /// its proof, or a `POST` form's `access_token`), the user's `sub` and the claims the
    /// token's scopes release (§5.4) as JSON; else an RFC 6750 challenge (401 `invalid_token`,
    /// 403 `insufficient_scope`). 404 unless the server serves
    /// [OpenID Connect](crate::AuthorizationServerBuilder::openid_connect).
    pub async fn userinfo<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let inner = &*self.inner;
        let Some(id_tokens) = inner.id_tokens() else {
            return not_found();
        };
        let info = UserInfo {
            validation: inner.validation(),
            users: &*inner.users,
            id_tokens,
        };
        let wire = inner.wire();
        let call = || userinfo::userinfo(&wire, &info, request);
        span::traced("userinfo", call).await
    }

    /// The OpenID Connect Discovery 1.0 document (§4), for
    /// `GET /.well-known/openid-configuration` (after the issuer's path, when it has one): the
    /// [RFC 8414 metadata](Self::metadata), which with OpenID Connect carries every member
    /// Discovery requires (`userinfo_endpoint`, `jwks_uri`, `subject_types_supported`,
    /// `id_token_signing_alg_values_supported`, …). 404 unless the server serves
    /// [OpenID Connect](crate::AuthorizationServerBuilder::openid_connect).
    pub fn openid_configuration(&self) -> Response<String> {
        if self.inner.id_tokens.is_none() {
            return not_found();
        }
        metadata::document(&self.inner.config)
    }
}

fn not_found() -> Response<String> {
    let mut response = Response::new(String::new());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}
