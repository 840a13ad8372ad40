//! Mutual-TLS client authentication (RFC 8705 §2): `tls_client_auth` clients with a certificate
//! from a CA the host trusts naming their subject, `self_signed_tls_client_auth` clients with a
//! certificate from their `jwks`; every refusal a 401 `invalid_client`; registration and
//! discovery. Certificates are made at test time.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use grantor::client::{Client, ClientKeys, GrantType, TlsClientAuth};
use grantor::events::{Event, EventKind, Events};
use grantor::mtls::{ClientCertificate, MutualTls};
use grantor::settings::RegistrationPolicy;
use grantor::store::Admin as _;
use grantor::{AuthorizationServer, ConfigError, MemoryStore, Scope};
use http::{Request, Response};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    SanType,
};
use serde_json::{Value, json};

/// A CA made for one test: its certificate's PEM, and what signs its clients' certificates.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    let pem = params.self_signed(&key).unwrap().pem();
    Ca {
        pem,
        issuer: Issuer::new(params, key),
    }
}

/// A client certificate for `CN=<cn>, O=Example Corp, C=GB` with `sans`, for client
/// authentication.
fn params(cn: &str, sans: Vec<SanType>) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CountryName, "GB");
    params
        .distinguished_name
        .push(DnType::OrganizationName, "Example Corp");
    params.distinguished_name.push(DnType::CommonName, cn);
    params.subject_alt_names = sans;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params
}

fn issued(ca: &Ca, cn: &str, sans: Vec<SanType>) -> ClientCertificate {
    let key = KeyPair::generate().unwrap();
    let certificate = params(cn, sans).signed_by(&key, &ca.issuer).unwrap();
    ClientCertificate::from_der_chain([certificate.der().to_vec()]).unwrap()
}

/// A self-signed certificate: the chain presented, and the `jwks` holding it in `x5c`.
fn self_signed(cn: &str) -> (ClientCertificate, String) {
    let key = KeyPair::generate().unwrap();
    let der = params(cn, Vec::new())
        .self_signed(&key)
        .unwrap()
        .der()
        .to_vec();
    let x5c = base64::engine::general_purpose::STANDARD.encode(&der);
    let jwks = json!({"keys": [{"kty": "EC", "crv": "P-256", "x5c": [x5c]}]});
    let chain = ClientCertificate::from_der_chain([der]).unwrap();
    (chain, jwks.to_string())
}

#[derive(Default)]
struct KeptEvents(Mutex<Vec<Event>>);

impl Events for KeptEvents {
    fn record(&self, event: &Event) {
        self.0.lock().unwrap().push(event.clone());
    }
}

struct Fixture {
    server: AuthorizationServer,
    store: MemoryStore,
    events: Arc<KeptEvents>,
}

fn server(mtls: Option<MutualTls>) -> Fixture {
    let store = MemoryStore::new();
    let events = Arc::new(KeptEvents::default());
    let policy = RegistrationPolicy::new()
        .grant_types([GrantType::ClientCredentials])
        .scope(&Scope::parse("payments").unwrap());
    let builder = AuthorizationServer::builder()
        .issuer("https://auth.example")
        .store(store.clone())
        .scopes_supported(&Scope::parse("payments").unwrap())
        .registration(policy)
        .events(events.clone());
    let builder = match mtls {
        Some(mtls) => builder.mutual_tls(mtls),
        None => builder,
    };
    Fixture {
        server: builder.build().unwrap(),
        store,
        events,
    }
}

async fn register(f: &Fixture, client: grantor::client::ClientBuilder) {
    let client = client
        .grant_types([GrantType::ClientCredentials])
        .scopes("payments")
        .build()
        .unwrap();
    f.store.register_client(&client).await.unwrap();
}

fn form(path: &str, body: &str, certificate: Option<&ClientCertificate>) -> Request<String> {
    let mut request = Request::post(path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_owned())
        .unwrap();
    if let Some(certificate) = certificate {
        request.extensions_mut().insert(certificate.clone());
    }
    request
}

async fn token(
    f: &Fixture,
    client_id: &str,
    certificate: Option<&ClientCertificate>,
) -> Response<String> {
    let body = format!("grant_type=client_credentials&client_id={client_id}");
    f.server
        .token(&form("/api/oauth/token", &body, certificate))
        .await
}

fn body(response: &Response<String>) -> Value {
    serde_json::from_str(response.body()).unwrap()
}

#[track_caller]
fn assert_invalid_client(response: &Response<String>, description: &str) {
    assert_eq!(response.status(), 401, "{}", response.body());
    let body = body(response);
    assert_eq!(body["error"], "invalid_client");
    let said = body["error_description"].as_str().unwrap();
    assert!(said.contains(description), "{said}");
}

fn trusting(ca: &Ca) -> MutualTls {
    MutualTls::new().client_ca_pem(&ca.pem)
}

#[tokio::test]
async fn a_tls_client_auth_client_authenticates_with_its_subject_dn_in_any_order_and_case() {
    let ca = ca("Client CA");
    let f = server(Some(trusting(&ca)));
    let subject = TlsClientAuth::SubjectDn("cn=Payments,  o=example corp,C=GB".into());
    register(&f, Client::tls_client_auth("payments", subject)).await;
    let certificate = issued(&ca, "Payments", Vec::new());
    let response = token(&f, "payments", Some(&certificate)).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    assert_eq!(body(&response)["scope"], "payments");
}

#[tokio::test]
async fn a_tls_client_auth_client_authenticates_with_each_kind_of_alternative_name() {
    let ca = ca("Client CA");
    let f = server(Some(trusting(&ca)));
    let sans = vec![
        SanType::DnsName("client.example.com".try_into().unwrap()),
        SanType::URI("https://client.example.com/id".try_into().unwrap()),
        SanType::IpAddress("2001:db8::5".parse().unwrap()),
        SanType::Rfc822Name("ops@Client.Example.com".try_into().unwrap()),
    ];
    let certificate = issued(&ca, "anything", sans);
    let subjects = [
        TlsClientAuth::SanDns("CLIENT.example.com".into()),
        TlsClientAuth::SanUri("https://client.example.com/id".into()),
        TlsClientAuth::SanIp("2001:0db8:0:0::5".parse().unwrap()),
        TlsClientAuth::SanEmail("ops@client.example.com".into()),
    ];
    for (n, subject) in subjects.into_iter().enumerate() {
        let id = format!("san-{n}");
        register(&f, Client::tls_client_auth(&id, subject.clone())).await;
        let response = token(&f, &id, Some(&certificate)).await;
        assert_eq!(response.status(), 200, "{subject:?}: {}", response.body());
    }
}

#[tokio::test]
async fn a_wrong_subject_dn_or_alternative_name_is_invalid_client() {
    let ca = ca("Client CA");
    let f = server(Some(trusting(&ca)));
    let dn = TlsClientAuth::SubjectDn("CN=Payments,O=Example Corp,C=GB".into());
    register(&f, Client::tls_client_auth("dn", dn)).await;
    let dns = TlsClientAuth::SanDns("client.example.com".into());
    register(&f, Client::tls_client_auth("dns", dns)).await;
    let email = TlsClientAuth::SanEmail("Ops@client.example.com".into());
    register(&f, Client::tls_client_auth("email", email)).await;
    let other = issued(
        &ca,
        "Reports",
        vec![
            SanType::DnsName("other.example.com".try_into().unwrap()),
            SanType::Rfc822Name("ops@client.example.com".try_into().unwrap()),
        ],
    );
    assert_invalid_client(&token(&f, "dn", Some(&other)).await, "subject");
    assert_invalid_client(&token(&f, "dns", Some(&other)).await, "alternative name");
    // The local part of an e-mail address is compared exactly.
    assert_invalid_client(&token(&f, "email", Some(&other)).await, "alternative name");
}

#[tokio::test]
async fn a_certificate_from_another_ca_is_invalid_client() {
    let trusted = ca("Client CA");
    let stranger = ca("Client CA");
    let f = server(Some(trusting(&trusted)));
    let dn = TlsClientAuth::SubjectDn("CN=Payments,O=Example Corp,C=GB".into());
    register(&f, Client::tls_client_auth("payments", dn)).await;
    let forged = issued(&stranger, "Payments", Vec::new());
    assert_invalid_client(&token(&f, "payments", Some(&forged)).await, "chain");
}

#[tokio::test]
async fn no_certificate_is_invalid_client_and_reported() {
    let ca = ca("Client CA");
    let f = server(Some(trusting(&ca)));
    let dn = TlsClientAuth::SubjectDn("CN=Payments,O=Example Corp,C=GB".into());
    register(&f, Client::tls_client_auth("payments", dn)).await;
    assert_invalid_client(&token(&f, "payments", None).await, "none was presented");
    let events = f.events.0.lock().unwrap();
    let failed = events
        .iter()
        .find(|e| e.kind == EventKind::ClientAuthenticationFailed)
        .expect("a client_authentication_failed event");
    assert_eq!(
        failed.client_id.as_ref().map(|id| id.as_str()),
        Some("payments")
    );
}

#[tokio::test]
async fn a_self_signed_client_authenticates_with_a_certificate_of_its_jwks_only() {
    let f = server(Some(MutualTls::new()));
    let (certificate, jwks) = self_signed("device");
    let keys = ClientKeys::jwks(&jwks).unwrap();
    register(&f, Client::self_signed_tls_client_auth("device", keys)).await;
    let response = token(&f, "device", Some(&certificate)).await;
    assert_eq!(response.status(), 200, "{}", response.body());
    let (stranger, _) = self_signed("device");
    assert_invalid_client(&token(&f, "device", Some(&stranger)).await, "jwks");
}

#[tokio::test]
async fn the_registered_method_decides_which_credential_counts() {
    let ca = ca("Client CA");
    let f = server(Some(trusting(&ca)));
    let credentials = grantor::client::ClientCredentials::generate().unwrap();
    let id = credentials.client_id.as_str().to_owned();
    register(&f, Client::confidential(&id, credentials.verifier)).await;
    let certificate = issued(&ca, "Payments", Vec::new());
    // A certificate alone does not authenticate a client with a secret.
    assert_invalid_client(
        &token(&f, &id, Some(&certificate)).await,
        "must authenticate",
    );
    // Its secret does, whatever certificate came along.
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD
            .encode(format!("{id}:{}", credentials.secret.expose_secret()))
    );
    let mut request = form(
        "/api/oauth/token",
        "grant_type=client_credentials",
        Some(&certificate),
    );
    request
        .headers_mut()
        .insert("authorization", basic.parse().unwrap());
    assert_eq!(f.server.token(&request).await.status(), 200);
    // A certificate client's secret or assertion never counts.
    let dn = TlsClientAuth::SubjectDn("CN=Payments,O=Example Corp,C=GB".into());
    register(&f, Client::tls_client_auth("payments", dn)).await;
    let mut request = form(
        "/api/oauth/token",
        "grant_type=client_credentials",
        Some(&certificate),
    );
    let basic = base64::engine::general_purpose::STANDARD.encode("payments:guess");
    request
        .headers_mut()
        .insert("authorization", format!("Basic {basic}").parse().unwrap());
    assert_invalid_client(&f.server.token(&request).await, "TLS client certificate");
}

#[tokio::test]
async fn a_certificate_client_authenticates_at_introspection_and_revocation() {
    let ca = ca("Client CA");
    let f = server(Some(trusting(&ca)));
    let dn = TlsClientAuth::SubjectDn("CN=Payments,O=Example Corp,C=GB".into());
    register(&f, Client::tls_client_auth("payments", dn)).await;
    let certificate = issued(&ca, "Payments", Vec::new());
    let issued_token = body(&token(&f, "payments", Some(&certificate)).await);
    let access = issued_token["access_token"].as_str().unwrap();
    let query = format!("client_id=payments&token={access}");
    let introspected = f
        .server
        .introspect(&form("/api/oauth/introspect", &query, Some(&certificate)))
        .await;
    assert_eq!(
        body(&introspected)["active"],
        true,
        "{}",
        introspected.body()
    );
    let refused = f
        .server
        .introspect(&form("/api/oauth/introspect", &query, None))
        .await;
    assert_invalid_client(&refused, "none was presented");
    let revoked = f
        .server
        .revoke(&form("/api/oauth/revoke", &query, Some(&certificate)))
        .await;
    assert_eq!(revoked.status(), 200, "{}", revoked.body());
    let introspected = f
        .server
        .introspect(&form("/api/oauth/introspect", &query, Some(&certificate)))
        .await;
    assert_eq!(body(&introspected)["active"], false);
}

async fn registration(f: &Fixture, metadata: Value) -> Response<String> {
    let request = Request::post("/api/oauth/register")
        .header("content-type", "application/json")
        .body(metadata.to_string())
        .unwrap();
    f.server.register(&request).await
}

#[tokio::test]
async fn registration_takes_tls_client_auth_with_one_subject_member_and_reads_it_back() {
    let ca = ca("Client CA");
    let f = server(Some(trusting(&ca)));
    let metadata = json!({
        "grant_types": ["client_credentials"],
        "token_endpoint_auth_method": "tls_client_auth",
        "tls_client_auth_subject_dn": "CN=Payments,O=Example Corp,C=GB",
    });
    let response = registration(&f, metadata).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let registered = body(&response);
    assert_eq!(registered["token_endpoint_auth_method"], "tls_client_auth");
    assert_eq!(
        registered["tls_client_auth_subject_dn"],
        "CN=Payments,O=Example Corp,C=GB"
    );
    assert!(registered.get("client_secret").is_none(), "{registered}");
    let id = registered["client_id"].as_str().unwrap();
    let certificate = issued(&ca, "Payments", Vec::new());
    assert_eq!(token(&f, id, Some(&certificate)).await.status(), 200);

    for (metadata, refusal) in [
        (
            json!({"token_endpoint_auth_method": "tls_client_auth"}),
            "needs one",
        ),
        (
            json!({"token_endpoint_auth_method": "tls_client_auth",
                   "tls_client_auth_san_dns": "a.example", "tls_client_auth_san_uri": "https://a.example"}),
            "one tls_client_auth subject member only",
        ),
        (
            json!({"token_endpoint_auth_method": "tls_client_auth", "tls_client_auth_san_ip": "10.0.0"}),
            "malformed",
        ),
        (
            json!({"token_endpoint_auth_method": "client_secret_basic", "tls_client_auth_san_dns": "a.example"}),
            "go with tls_client_auth only",
        ),
    ] {
        let mut metadata = metadata;
        metadata["grant_types"] = json!(["client_credentials"]);
        let response = registration(&f, metadata).await;
        assert_eq!(response.status(), 400, "{}", response.body());
        let said = body(&response);
        assert_eq!(said["error"], "invalid_client_metadata");
        assert!(
            said["error_description"]
                .as_str()
                .unwrap()
                .contains(refusal),
            "{said}"
        );
    }
}

#[tokio::test]
async fn registration_takes_self_signed_tls_client_auth_with_x5c_in_jwks_only() {
    let f = server(Some(MutualTls::new()));
    let (certificate, jwks) = self_signed("device");
    let metadata = json!({
        "grant_types": ["client_credentials"],
        "token_endpoint_auth_method": "self_signed_tls_client_auth",
        "jwks": serde_json::from_str::<Value>(&jwks).unwrap(),
    });
    let response = registration(&f, metadata).await;
    assert_eq!(response.status(), 201, "{}", response.body());
    let registered = body(&response);
    assert_eq!(
        registered["token_endpoint_auth_method"],
        "self_signed_tls_client_auth"
    );
    let id = registered["client_id"].as_str().unwrap();
    assert_eq!(token(&f, id, Some(&certificate)).await.status(), 200);

    let without_x5c = json!({"keys": [{"kty": "EC", "crv": "P-256"}]});
    for (keys, refusal) in [
        (json!({"jwks": without_x5c}), "x5c"),
        (
            json!({"jwks_uri": "https://device.example/jwks.json"}),
            "jwks_uri is not taken",
        ),
    ] {
        let mut metadata = keys;
        metadata["grant_types"] = json!(["client_credentials"]);
        metadata["token_endpoint_auth_method"] = json!("self_signed_tls_client_auth");
        let response = registration(&f, metadata).await;
        assert_eq!(response.status(), 400, "{}", response.body());
        let said = body(&response)["error_description"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(said.contains(refusal), "{said}");
    }
    // No CA is trusted: tls_client_auth is refused.
    let metadata = json!({
        "grant_types": ["client_credentials"],
        "token_endpoint_auth_method": "tls_client_auth",
        "tls_client_auth_san_dns": "device.example",
    });
    let response = registration(&f, metadata).await;
    assert_eq!(response.status(), 400, "{}", response.body());
    assert!(response.body().contains("not supported by this server"));
}

#[tokio::test]
async fn without_mutual_tls_certificate_clients_neither_register_nor_authenticate() {
    let f = server(None);
    for method in ["tls_client_auth", "self_signed_tls_client_auth"] {
        let metadata = json!({
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": method,
            "tls_client_auth_san_dns": "device.example",
        });
        let response = registration(&f, metadata).await;
        assert_eq!(response.status(), 400, "{method}: {}", response.body());
    }
    let (certificate, jwks) = self_signed("device");
    let keys = ClientKeys::jwks(&jwks).unwrap();
    register(&f, Client::self_signed_tls_client_auth("device", keys)).await;
    assert_invalid_client(
        &token(&f, "device", Some(&certificate)).await,
        "does not accept TLS client certificates",
    );
}

fn metadata(f: &Fixture) -> Value {
    body(&f.server.metadata())
}

#[tokio::test]
async fn discovery_lists_the_certificate_methods_and_the_endpoint_aliases() {
    let ca = ca("Client CA");
    let mtls = trusting(&ca).endpoint_aliases("https://mtls.auth.example/");
    let listed = metadata(&server(Some(mtls)));
    for member in [
        "token_endpoint_auth_methods_supported",
        "revocation_endpoint_auth_methods_supported",
        "introspection_endpoint_auth_methods_supported",
    ] {
        let methods = listed[member].as_array().unwrap();
        assert!(methods.contains(&json!("tls_client_auth")), "{member}");
        assert!(
            methods.contains(&json!("self_signed_tls_client_auth")),
            "{member}"
        );
    }
    let aliases = &listed["mtls_endpoint_aliases"];
    assert_eq!(
        aliases["token_endpoint"],
        "https://mtls.auth.example/api/oauth/token"
    );
    assert_eq!(
        aliases["introspection_endpoint"],
        "https://mtls.auth.example/api/oauth/introspect"
    );
    assert_eq!(
        aliases["revocation_endpoint"],
        "https://mtls.auth.example/api/oauth/revoke"
    );

    let self_signed_only = metadata(&server(Some(MutualTls::new())));
    let methods = self_signed_only["token_endpoint_auth_methods_supported"]
        .as_array()
        .unwrap();
    assert!(!methods.contains(&json!("tls_client_auth")));
    assert!(methods.contains(&json!("self_signed_tls_client_auth")));
    assert!(self_signed_only.get("mtls_endpoint_aliases").is_none());

    let none = metadata(&server(None));
    let methods = none["token_endpoint_auth_methods_supported"]
        .as_array()
        .unwrap();
    assert!(
        !methods.iter().any(|m| m.as_str().unwrap().contains("tls")),
        "{none}"
    );
}

#[test]
fn a_client_ca_that_is_no_pem_certificate_or_a_bad_alias_is_refused_at_build() {
    let build = |mtls: MutualTls| {
        AuthorizationServer::builder()
            .issuer("https://auth.example")
            .store(MemoryStore::new())
            .mutual_tls(mtls)
            .build()
            .map(|_| ())
    };
    for refused in [
        MutualTls::new().client_ca_pem("not a certificate"),
        MutualTls::new()
            .client_ca_pem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
        MutualTls::new().endpoint_aliases("http://mtls.auth.example"),
    ] {
        assert!(matches!(build(refused), Err(ConfigError::MutualTls(_))));
    }
    assert!(build(trusting(&ca("Client CA"))).is_ok());
}
