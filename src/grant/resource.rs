//! Resource indicators (RFC 8707): which resources a request may aim its tokens at, and the
//! audience they get. Pure functions of the request, the client and the server's resources.

use std::borrow::Cow;

use crate::audience::{Audience, MAX_RESOURCES, canonical};
use crate::client::Client;
use crate::error::{ErrorCode, OAuthError};
use crate::settings::{KnownResource, Resources};

impl Resources {
    /// The resources the host registered, the default audience first; `None` if one is not a
    /// resource ([`is_resource`](crate::audience::is_resource)). One equal to an earlier one
    /// after normalisation is dropped: the earlier spelling is what tokens carry.
    pub(crate) fn new(default: String, others: Vec<String>) -> Option<Self> {
        let mut known: Vec<KnownResource> = Vec::with_capacity(1 + others.len());
        for registered in std::iter::once(default).chain(others) {
            let canonical = canonical(&registered)?;
            if !known.iter().any(|k| k.canonical == canonical) {
                known.push(KnownResource {
                    registered,
                    canonical,
                });
            }
        }
        let default = Audience::one_known(&known.first()?.registered);
        Some(Self { default, known })
    }

    /// The known resource `resource` names, as registered: the same bytes (the common case,
    /// which allocates nothing), else the same canonical form (RFC 3986 §6.2.2, §6.2.3).
    fn registered(&self, resource: &str) -> Option<&str> {
        let known = match self.known.iter().find(|k| k.registered == resource) {
            Some(exact) => exact,
            None => {
                let wanted = canonical(resource)?;
                self.known.iter().find(|k| k.canonical == wanted)?
            }
        };
        Some(&known.registered)
    }

    /// The canonical form of `resource`: a known one's as computed once, else computed now.
    fn canonical_of<'a>(&'a self, resource: &str) -> Option<Cow<'a, str>> {
        match self.known.iter().find(|k| k.registered == resource) {
            Some(known) => Some(Cow::Borrowed(&known.canonical)),
            None => canonical(resource).map(Cow::Owned),
        }
    }

    /// The resource of `granted` that `requested` names: the same bytes, else the same
    /// canonical form.
    fn granted_form<'g>(&self, granted: &'g Audience, requested: &str) -> Option<&'g str> {
        if let Some(exact) = granted.iter().find(|g| *g == requested) {
            return Some(exact);
        }
        let wanted = canonical(requested)?;
        granted
            .iter()
            .find(|g| self.canonical_of(g).is_some_and(|c| c == wanted.as_str()))
    }

    /// The audience of a request that names no resource: the client's first allowed resource
    /// (as the server registered it) when it may not have the server's default, else the
    /// default.
    fn default_for(&self, client: &Client) -> Result<Audience, OAuthError> {
        match client.resources().first() {
            Some(first) if !client.may_target(self.default.as_str()) => self
                .registered(first)
                .map(Audience::one_known)
                .ok_or_else(|| invalid_target("the client's default resource is unknown")),
            _ => Ok(self.default.clone()),
        }
    }

    /// Whether every resource of `granted` (a grant's audience, as kept; empty: the default)
    /// is one this server knows. A grant naming another is not this server's: a node with
    /// another issuer (and so another default audience) sharing the store made it, and
    /// answering for it here would vouch for it under this issuer.
    pub(crate) fn knows(&self, granted: &Audience) -> bool {
        granted
            .iter()
            .all(|resource| self.registered(resource).is_some())
    }

    /// The audience a new grant gets (RFC 8707 §2, at the authorization endpoint or a grant
    /// without one): the requested resources, as the server registered them, if the server
    /// knows each and the client may have it; the default when none is requested.
    pub(crate) fn resolve(
        &self,
        requested: &[&str],
        client: &Client,
    ) -> Result<Audience, OAuthError> {
        if requested.is_empty() {
            return self.default_for(client);
        }
        check_count(requested)?;
        let mut audience = Vec::with_capacity(requested.len());
        for resource in requested {
            let Some(known) = self.registered(resource) else {
                return Err(invalid_target(if Audience::new(resource).is_none() {
                    "a resource must be an absolute URI without a fragment (RFC 8707 section 2)"
                } else {
                    "a requested resource is unknown to this server"
                }));
            };
            audience.push(known);
        }
        if !audience.iter().all(|r| client.may_target(r)) {
            return Err(invalid_target(
                "the client may not request tokens for this resource",
            ));
        }
        Audience::from_known(audience).ok_or_else(|| invalid_target("no resource was requested"))
    }

    /// The audience of an access token from an existing grant (a code, a refresh token):
    /// `granted`, or the part of it the request names (RFC 8707 §2.2), as granted; never wider.
    /// A grant for a resource this server does not [know](Self::knows) is `invalid_grant`.
    pub(crate) fn narrow(
        &self,
        requested: &[&str],
        granted: &Audience,
    ) -> Result<Audience, OAuthError> {
        if !self.knows(granted) {
            return Err(OAuthError::invalid_grant(
                "the grant is for a resource this server does not serve: another \
                 authorization server issued it",
            ));
        }
        let granted = granted.or(&self.default);
        if requested.is_empty() {
            return Ok(granted.clone());
        }
        check_count(requested)?;
        let mut audience = Vec::with_capacity(requested.len());
        for resource in requested {
            let Some(kept) = self.granted_form(granted, resource) else {
                return Err(invalid_target(
                    "a requested resource was not part of the original grant",
                ));
            };
            audience.push(kept);
        }
        Audience::from_known(audience).ok_or_else(|| invalid_target("no resource was requested"))
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
        Resources::new(API.to_owned(), vec![OTHER.to_owned()]).unwrap()
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

    fn as_str(result: Result<Audience, OAuthError>) -> String {
        result.unwrap().as_str().to_owned()
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

    #[test]
    fn another_spelling_of_a_known_resource_gets_the_registered_form() {
        let resources =
            Resources::new(API.to_owned(), vec!["https://resource.example".to_owned()]).unwrap();
        for spelling in [
            "https://resource.example",
            "https://RESOURCE.example:443",
            "HTTPS://resource.example/",
        ] {
            assert_eq!(
                as_str(resources.resolve(&[spelling], &client(&[]))),
                "https://resource.example",
                "{spelling}"
            );
        }
        assert_eq!(
            as_str(resources.resolve(&["https://AUTH.example:443/%61pi"], &client(&[]))),
            API
        );
        // A path is not its trailing slash.
        let refused = resources.resolve(&["https://auth.example/api/"], &client(&[]));
        assert_eq!(code(refused), ErrorCode::InvalidTarget);
    }

    #[test]
    fn a_client_allowed_another_spelling_may_target_the_resource() {
        let resources = resources();
        let upper = client(&["HTTPS://RESOURCE.example:443"]);
        assert_eq!(as_str(resources.resolve(&[OTHER], &upper)), OTHER);
        // Its first allowed resource is its default, as the server registered it.
        assert_eq!(as_str(resources.resolve(&[], &upper)), OTHER);
        let refused = resources.resolve(&[API], &upper);
        assert_eq!(code(refused), ErrorCode::InvalidTarget);
    }

    #[test]
    fn narrowing_matches_another_spelling_and_keeps_the_granted_form() {
        let resources = resources();
        let granted = Audience::from_resources([API, OTHER]).unwrap();
        let narrowed = resources.narrow(&["HTTPS://Resource.Example:443"], &granted);
        assert_eq!(as_str(narrowed), OTHER);
        let narrowed = resources.narrow(&["https://auth.example/./api"], &granted);
        assert_eq!(as_str(narrowed), API);
        let wider = resources.narrow(&["https://auth.example/api/"], &granted);
        assert_eq!(code(wider), ErrorCode::InvalidTarget);
    }

    #[test]
    fn two_spellings_of_one_resource_are_registered_once_the_first_kept() {
        let resources = Resources::new(
            "https://a.example".to_owned(),
            vec!["HTTPS://A.example:443/".to_owned(), OTHER.to_owned()],
        )
        .unwrap();
        let registered: Vec<&str> = resources.known.iter().map(|k| &*k.registered).collect();
        assert_eq!(registered, ["https://a.example", OTHER]);
        assert_eq!(
            as_str(resources.resolve(&["HTTPS://A.example:443/"], &client(&[]))),
            "https://a.example"
        );
        assert!(Resources::new(API.to_owned(), vec!["https://a.example/#f".to_owned()]).is_none());
    }
}
