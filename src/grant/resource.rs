//! Resource indicators (RFC 8707): which resources a request may aim its tokens at, and the
//! audience they get. Pure functions of the request, the client and the server's resources.

use crate::audience::{Audience, MAX_RESOURCES};
use crate::client::Client;
use crate::error::{ErrorCode, OAuthError};
use crate::settings::Resources;

impl Resources {
    fn knows(&self, resource: &str) -> bool {
        self.known.iter().any(|r| r == resource)
    }

    /// The audience of a request that names no resource: the client's first allowed resource
    /// when it may not have the server's default, else the default.
    fn default_for(&self, client: &Client) -> Result<Audience, OAuthError> {
        let default = self.default.as_str();
        match client.resources().first() {
            Some(first) if !client.may_target(default) => Audience::new(first)
                .filter(|_| self.knows(first))
                .ok_or_else(|| invalid_target("the client's default resource is unknown")),
            _ => Ok(self.default.clone()),
        }
    }

    /// The audience a new grant gets (RFC 8707 §2, at the authorization endpoint or a grant
    /// without one): the requested resources if the server knows each and the client may have
    /// it, the default when none is requested.
    pub(crate) fn resolve(
        &self,
        requested: &[&str],
        client: &Client,
    ) -> Result<Audience, OAuthError> {
        if requested.is_empty() {
            return self.default_for(client);
        }
        check_count(requested)?;
        if let Some(unknown) = requested.iter().find(|r| !self.knows(r)) {
            return Err(invalid_target(if Audience::new(unknown).is_none() {
                "a resource must be an absolute URI without a fragment (RFC 8707 §2)"
            } else {
                "a requested resource is unknown to this server"
            }));
        }
        if !requested.iter().all(|r| client.may_target(r)) {
            return Err(invalid_target(
                "the client may not request tokens for this resource",
            ));
        }
        Audience::from_resources(requested.iter().copied())
            .ok_or_else(|| invalid_target("a resource is malformed"))
    }

    /// The audience of an access token from an existing grant (a code, a refresh token):
    /// `granted`, or the part of it the request names (RFC 8707 §2.2); never wider.
    pub(crate) fn narrow(
        &self,
        requested: &[&str],
        granted: &Audience,
    ) -> Result<Audience, OAuthError> {
        let granted = granted.or(&self.default);
        if requested.is_empty() {
            return Ok(granted.clone());
        }
        check_count(requested)?;
        if !requested.iter().all(|r| granted.contains(r)) {
            return Err(invalid_target(
                "a requested resource was not part of the original grant",
            ));
        }
        Audience::from_resources(requested.iter().copied())
            .ok_or_else(|| invalid_target("a resource is malformed"))
    }
}

fn check_count(requested: &[&str]) -> Result<(), OAuthError> {
    if requested.len() > MAX_RESOURCES {
        return Err(invalid_target("too many resource parameters"));
    }
    Ok(())
}

fn invalid_target(description: &'static str) -> OAuthError {
    OAuthError::new(ErrorCode::InvalidTarget, description)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::GrantType;

    const API: &str = "https://auth.example/api";
    const OTHER: &str = "https://resource.example/";

    fn resources() -> Resources {
        Resources {
            default: Audience::new(API).unwrap(),
            known: vec![API.to_owned(), OTHER.to_owned()],
        }
    }

    fn client(allowed: &[&str]) -> Client {
        let builder = Client::public("app")
            .redirect_uri("https://app.example/cb")
            .grant_types([GrantType::AuthorizationCode]);
        allowed
            .iter()
            .fold(builder, |b, r| b.resource(*r))
            .build()
            .unwrap()
    }

    fn code(result: Result<Audience, OAuthError>) -> ErrorCode {
        result.unwrap_err().code()
    }

    #[test]
    fn a_request_without_resource_gets_the_default_audience() {
        let resources = resources();
        assert_eq!(resources.resolve(&[], &client(&[])).unwrap().as_str(), API);
        // A client allowed only another resource defaults to its first.
        let only_other = client(&[OTHER]);
        assert_eq!(resources.resolve(&[], &only_other).unwrap().as_str(), OTHER);
    }

    #[test]
    fn requested_resources_must_be_known_allowed_and_few() {
        let resources = resources();
        let both = resources.resolve(&[OTHER, API], &client(&[])).unwrap();
        assert_eq!(both.as_str(), format!("{API} {OTHER}"));
        let refused = [
            resources.resolve(&["https://unknown.example/"], &client(&[])),
            resources.resolve(&["not a uri"], &client(&[])),
            resources.resolve(&[OTHER], &client(&[API])),
            resources.resolve(&[API; MAX_RESOURCES + 1], &client(&[])),
        ];
        for result in refused {
            assert_eq!(code(result), ErrorCode::InvalidTarget);
        }
    }

    #[test]
    fn a_grant_narrows_but_never_widens() {
        let resources = resources();
        let granted = Audience::from_resources([API, OTHER]).unwrap();
        assert_eq!(resources.narrow(&[], &granted).unwrap(), granted);
        assert_eq!(
            resources.narrow(&[OTHER], &granted).unwrap().as_str(),
            OTHER
        );
        let narrow = Audience::new(API).unwrap();
        assert_eq!(
            code(resources.narrow(&[OTHER], &narrow)),
            ErrorCode::InvalidTarget
        );
        // An audience a store did not keep reads as the default.
        let unset = Audience::default();
        assert_eq!(resources.narrow(&[], &unset).unwrap().as_str(), API);
        assert_eq!(
            code(resources.narrow(&[OTHER], &unset)),
            ErrorCode::InvalidTarget
        );
    }
}
