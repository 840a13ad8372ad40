//! OAuth 2.0 Protected Resource Metadata (RFC 9728): for each resource the server knows, the
//! document a client reads to learn which authorization server issues its tokens, at the
//! well-known URL RFC 9728 §3.1 derives from the resource identifier, and that URL, which every
//! refusal of the resource names in its challenge (`resource_metadata`, §5.1).
//!
//! Every document is rendered once, when the server is built: serving one costs a clone.

use http::Response;
use serde::Serialize;

use super::render;
use crate::settings::Settings;

/// The path segment RFC 9728 §3.1 inserts between a resource's authority and its path.
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The documents of the server's resources, in the order they were configured (the default
/// audience first).
#[derive(Debug, Clone, Default)]
pub(crate) struct ResourceDocuments(Vec<ResourceDocument>);

/// One resource's metadata.
#[derive(Debug, Clone)]
#[cfg_attr(
    not(any(feature = "axum", feature = "actix")),
    allow(dead_code, reason = "read by the glues")
)]
pub(crate) struct ResourceDocument {
    /// The resource identifier, as configured.
    pub(crate) resource: String,
    /// Its normalised form (RFC 3986 §6.2.2–6.2.3), which other spellings are matched by.
    canonical: String,
    /// Where its document is: the resource's origin, [`WELL_KNOWN`], its path.
    pub(crate) url: String,
    /// The path of [`url`](Self::url), for routing.
    pub(crate) path: String,
    /// Whether the resource is on the issuer's origin, where the glues serve its document (a
    /// resource elsewhere serves its own, with the layer or the host's route).
    pub(crate) local: bool,
    body: String,
}

#[derive(Serialize)]
struct Document<'a> {
    resource: &'a str,
    authorization_servers: [&'a str; 1],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    scopes_supported: &'a [String],
    bearer_methods_supported: [&'static str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    dpop_signing_alg_values_supported: Option<&'static [&'static str]>,
    /// RFC 9728 §2: only when tokens are bound to client certificates (RFC 8705).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    tls_client_certificate_bound_access_tokens: bool,
}

impl ResourceDocuments {
    /// The documents of every resource `settings` knows that has a well-known URL (an
    /// `http`/`https` URL with a host and no query: RFC 9728 §3.1 puts no query in one).
    pub(crate) fn new(settings: &Settings) -> Self {
        let mut documents = Vec::new();
        let issuer_origin = url::Url::parse(&settings.issuer)
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_default();
        let scopes = scopes_supported(settings);
        // The known resources are unique after normalisation (the builder keeps the first).
        for known in &settings.resources.known {
            let resource = &known.registered;
            let Some((url, path)) = well_known(resource) else {
                continue;
            };
            let document = Document {
                resource,
                authorization_servers: [&settings.issuer],
                scopes_supported: &scopes,
                // Tokens are read from the `Authorization` header alone at a resource.
                bearer_methods_supported: ["header"],
                dpop_signing_alg_values_supported: settings.dpop,
                tls_client_certificate_bound_access_tokens: settings.certificate_bound_tokens,
            };
            // A struct of strings always serializes.
            let body = serde_json::to_string(&document).unwrap_or_default();
            let local = url.starts_with(&format!("{issuer_origin}/"));
            documents.push(ResourceDocument {
                resource: resource.clone(),
                canonical: known.canonical.clone(),
                url,
                path,
                local,
                body,
            });
        }
        Self(documents)
    }

    /// The document of `resource`, if the server knows it: by the registered spelling, or
    /// after normalisation by another.
    pub(crate) fn of(&self, resource: &str) -> Option<&ResourceDocument> {
        if let Some(document) = self.0.iter().find(|d| d.resource == resource) {
            return Some(document);
        }
        let canonical = crate::audience::canonical(resource)?;
        self.0.iter().find(|d| d.canonical == canonical)
    }

    /// The document served at `path` on the issuer's origin: of its resources there, the one
    /// whose well-known path it is.
    #[cfg_attr(
        not(any(feature = "axum", feature = "actix")),
        allow(dead_code, reason = "read by the glues")
    )]
    pub(crate) fn at_path(&self, path: &str) -> Option<&ResourceDocument> {
        self.0.iter().find(|d| d.local && d.path == path)
    }

    /// Every document.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ResourceDocument> {
        self.0.iter()
    }
}

impl ResourceDocument {
    /// The document as `GET` answers it: JSON, cacheable for an hour like the server's own
    /// metadata.
    pub(crate) fn response(&self) -> Response<String> {
        render::public_document(self.body.clone())
    }
}

/// The scopes a client may ask tokens of the server's resources for (RFC 9728 §2
/// `scopes_supported`): the host's `scopes_supported`, then what a self-registered client may
/// be granted. A client that registered itself (an MCP client, say) learns here which scopes to
/// ask for, a scope only the registration policy names among them. `openid` asks for the
/// user's identity, not for a resource, and is left out unless the host lists it.
fn scopes_supported(settings: &Settings) -> Vec<String> {
    let mut scopes = settings.scopes_supported.clone();
    let registrable = settings
        .registration
        .as_ref()
        .map(crate::registration::RegistrationPolicy::allowed_scope);
    for scope in registrable.iter().flat_map(|scope| scope.iter()) {
        if scope != "openid" && !scopes.iter().any(|known| known == scope) {
            scopes.push(scope.to_owned());
        }
    }
    scopes
}

/// The well-known URL of `resource` and its path (RFC 9728 §3.1): [`WELL_KNOWN`] inserted
/// between the authority and the path, a path of `/` dropped. `None` for a resource that is
/// not an `http`/`https` URL with a host, or that has a query.
pub(crate) fn well_known(resource: &str) -> Option<(String, String)> {
    let url = url::Url::parse(resource).ok()?;
    if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
        return None;
    }
    if url.query().is_some() || url.fragment().is_some() {
        return None;
    }
    let origin = url.origin().ascii_serialization();
    let resource_path = match url.path() {
        "/" => "",
        path => path,
    };
    let path = format!("{WELL_KNOWN}{resource_path}");
    Some((format!("{origin}{path}"), path))
}

#[cfg(test)]
mod tests {
    use super::well_known;

    #[test]
    fn the_well_known_url_goes_between_the_authority_and_the_path() {
        let at = |resource| well_known(resource).map(|(url, _)| url);
        assert_eq!(
            at("https://api.example/v1/mcp").as_deref(),
            Some("https://api.example/.well-known/oauth-protected-resource/v1/mcp")
        );
        assert_eq!(
            at("https://api.example/").as_deref(),
            Some("https://api.example/.well-known/oauth-protected-resource")
        );
        assert_eq!(
            at("https://api.example").as_deref(),
            Some("https://api.example/.well-known/oauth-protected-resource")
        );
        assert_eq!(
            at("http://127.0.0.1:8080/api").as_deref(),
            Some("http://127.0.0.1:8080/.well-known/oauth-protected-resource/api")
        );
        assert_eq!(
            well_known("https://api.example/v1/").map(|(_, path)| path),
            Some("/.well-known/oauth-protected-resource/v1/".to_owned()),
            "a trailing slash is the resource's own"
        );
        assert_eq!(at("urn:example:resource"), None);
        assert_eq!(at("https://api.example/v1?tenant=a"), None);
    }
}
