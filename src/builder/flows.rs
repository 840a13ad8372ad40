//! The builder's settings for the flows beyond RFC 6749: pushed authorization requests
//! (RFC 9126) and the device authorization grant (RFC 8628).

use super::AuthorizationServerBuilder;
use crate::device::DeviceFlow;
use crate::par::PushedRequests;

impl AuthorizationServerBuilder {
    /// Takes pushed authorization requests (RFC 9126) at
    /// [`EndpointPaths::pushed_requests`](crate::EndpointPaths::pushed_requests), and
    /// `request_uri` at the authorization endpoint. Off by default.
    pub fn pushed_requests(mut self, settings: PushedRequests) -> Self {
        self.par = Some(settings);
        self
    }

    /// Serves the device authorization grant (RFC 8628): the device authorization endpoint at
    /// [`EndpointPaths::device_authorization`](crate::EndpointPaths::device_authorization),
    /// its grant at the token endpoint, and the user's verification through
    /// [`AuthorizationServer::enter_user_code`](crate::AuthorizationServer::enter_user_code). Off by default.
    pub fn device_flow(mut self, settings: DeviceFlow) -> Self {
        self.device = Some(settings);
        self
    }
}
