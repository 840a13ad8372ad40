//! The endpoints of the flows beyond RFC 6749: pushed authorization requests (RFC 9126) and
//! device authorization (RFC 8628).

use http::{Request, Response};

use super::AuthorizationServer;
use crate::endpoint::{device, par, span};

impl AuthorizationServer {
    /// The pushed authorization request endpoint (RFC 9126 §2), `POST` with the client
    /// authenticated as at the token endpoint and the authorization request's parameters in
    /// the form: `201` with `request_uri` and `expires_in`, or an RFC 6749 §5.2 error. The
    /// request is validated exactly as [`authorize`](Self::authorize) would; the browser then
    /// goes to the authorization endpoint with `client_id` and `request_uri` only. `404`
    /// unless the builder enabled [`pushed_requests`](crate::AuthorizationServerBuilder::pushed_requests).
    ///
    /// ```
    /// # use grantor::*;
    /// # use grantor::settings::PushedRequests;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let store = grantor::doc_fixture::store().await;
    /// # let basic = grantor::doc_fixture::BASIC;
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(store)
    ///     .pushed_requests(PushedRequests::new())
    ///     .build()
    ///     .unwrap();
    /// let push = http::Request::post("/api/oauth/par")
    ///     .header("authorization", basic)
    ///     .header("content-type", "application/x-www-form-urlencoded")
    ///     .body("response_type=code&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=xyz")
    ///     .unwrap();
    /// let response = server.par(&push).await;
    /// assert_eq!(response.status(), 201);
    /// let body: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    /// let request_uri = body["request_uri"].as_str().unwrap();
    ///
    /// let uri = format!(
    ///     "/api/oauth/authorize?client_id=app&request_uri={}",
    ///     url::form_urlencoded::byte_serialize(request_uri.as_bytes()).collect::<String>()
    /// );
    /// let request = http::Request::get(uri).body("").unwrap();
    /// let Authorize::SignIn(pending) = server.authorize(&request).await else { panic!() };
    /// assert_eq!(pending.redirect_uri(), "https://app.example/cb");
    /// # }
    /// ```
    pub async fn par<B: AsRef<[u8]>>(&self, request: &Request<B>) -> Response<String> {
        let inner = &*self.inner;
        let clients = inner.authenticator(&inner.config.endpoints.pushed_requests);
        let wire = inner.wire();
        let call = || par::par(&wire, inner.pushed_requests(), clients, request);
        span::traced("par", call).await
    }

    /// The device authorization endpoint (RFC 8628 §3.1), `POST` with the client
    /// authenticated as at the token endpoint (a public client sends `client_id`), and
    /// optional `scope` and `resource`: `device_code`, `user_code`, `verification_uri`,
    /// `verification_uri_complete`, `expires_in` and `interval` (§3.2), or an RFC 6749 §5.2
    /// error. The device then polls [`token`](Self::token) with
    /// `grant_type=urn:ietf:params:oauth:grant-type:device_code`. `404` unless the builder
    /// enabled [`device_flow`](crate::AuthorizationServerBuilder::device_flow).
    ///
    /// ```
    /// # use grantor::*;
    /// # use grantor::client::{Client, GrantType};
    /// # use grantor::settings::DeviceFlow;
    /// # use grantor::store::Admin as _;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let store = MemoryStore::new();
    /// let tv = Client::public("tv")
    ///     .grant_types([GrantType::DeviceCode])
    ///     .scopes("profile")
    ///     .build()
    ///     .unwrap();
    /// store.register_client(&tv).await.unwrap();
    /// let server = AuthorizationServer::builder()
    ///     .issuer("https://auth.example")
    ///     .store(store)
    ///     .device_flow(DeviceFlow::new())
    ///     .build()
    ///     .unwrap();
    /// let request = http::Request::post("/api/oauth/device_authorization")
    ///     .header("content-type", "application/x-www-form-urlencoded")
    ///     .body("client_id=tv&scope=profile")
    ///     .unwrap();
    /// let response = server.device_authorization(&request).await;
    /// assert_eq!(response.status(), 200);
    /// let body: serde_json::Value = serde_json::from_str(response.body()).unwrap();
    /// assert_eq!(body["verification_uri"], "https://auth.example/device");
    /// assert_eq!(body["interval"], 5);
    /// # }
    /// ```
    pub async fn device_authorization<B: AsRef<[u8]>>(
        &self,
        request: &Request<B>,
    ) -> Response<String> {
        let inner = &*self.inner;
        let clients = inner.authenticator(&inner.config.endpoints.device_authorization);
        let wire = inner.wire();
        let call = || device::device_authorization(&wire, inner.devices(), clients, request);
        span::traced("device_authorization", call).await
    }
}
