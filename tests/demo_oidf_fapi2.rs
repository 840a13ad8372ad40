//! The OpenID Foundation conformance suite's FAPI 2.0 plans for authorization servers,
//! `fapi2-message-signing-final-test-plan` (78 modules) and
//! `fapi2-security-profile-final-test-plan` (the same less the 16 that need signed requests),
//! module by module over HTTPS against `axum_server` and `actix_server`: the authorization side
//! here, the token side (token endpoint, client assertions, DPoP, refresh) in
//! `demo_oidf_fapi2_token.rs`. Each module is a test module named after the suite's `testName`,
//! holding a module per variant and a test per framework in each (`…::dpop::axum`):
//!
//! - `dpop`: `--profile fapi2` (Message Signing), `private_key_jwt`, DPoP, signed request
//!   objects pushed to the PAR endpoint: the main run;
//! - `mtls`: the same with `tls_client_auth` and certificate-bound tokens;
//! - `jarm`: `dpop` with `response_mode=jwt`, every response a JWT verified with the JWKS;
//! - `security`: `--profile fapi2-security` (the Security Profile alone), the parameters pushed
//!   unsigned.
//!
//! Every test registers its own clients (two where the suite configures two) and signs Alice
//! in with a browser of its own; a binary shares one demo per framework and profile. The
//! OpenID Connect variant is the one run (`scope=openid profile`, a `nonce`, ID tokens
//! verified), as it holds every module the plain OAuth variant does. Where the suite accepts
//! several outcomes (an error at the PAR endpoint, an error page, an error redirected), the
//! test accepts the same ones with the same error codes; where it only warns, the test asserts
//! what the demo does when that is the recommended behaviour, and says so.
//!
//! | module | what it checks | test |
//! |---|---|---|
//! | `DiscoveryEndpointVerification` | both metadata documents: `issuer`, `code`, `authorization_response_iss_parameter_supported`, PAR endpoint and `require_pushed_authorization_requests`, S256, `private_key_jwt` and `tls_client_auth`, a FAPI algorithm (PS256, ES256, EdDSA) for assertions, DPoP, request objects, ID tokens and JARM, certificate-bound tokens, scope syntax, `openid`, `subject_types_supported` | `fapi2_sp_final_discovery_end_point_verification` (all four variants) |
//! | `HappyFlow` | two clients: an object without `typ` with the parameters duplicated outside, then one with `typ`, `iat`, a 128-character `state`, a 43-character `nonce`, `dpop_jkt`, a redirect URI with a query kept in the response, by reference alone; `iss`, 128-bit code, sender-constrained token, verified ID token, resource `200` with `Date` for any `Accept`, the token refused in the query and with the other client's key or certificate | `fapi2_sp_final_happy_flow` (all four) |
//! | `UserRejectsAuthentication` | two clients deny: `access_denied` with the 128-character `state`, nothing unexpected, the redirect URI's query kept | `fapi2_sp_final_user_rejects_authentication` (`dpop`, `jarm`) |
//! | `EnsureServerAcceptsRequestObjectWithMultipleAud` | `aud` an array holding the issuer: success | `fapi2_sp_final_ensure_request_object_with_multiple_aud_succeeds` |
//! | `EnsureAuthorizationRequestWithoutStateSuccess` | no `state`: success without `state` (or `invalid_request`, `invalid_request_object`, `invalid_request_uri`, `access_denied`) | `fapi2_sp_final_ensure_authorization_request_without_state_success` (`dpop`, `security`) |
//! | `EnsureAuthorizationRequestWithoutNonceSuccess` | no `nonce`: success, none in the ID token | `fapi2_sp_final_ensure_authorization_request_without_nonce_success` |
//! | `EnsureAuthorizationRequestWith64CharNonceSuccess` | a 64-character `nonce` comes back whole | `fapi2_sp_final_ensure_authorization_request_with_64_char_nonce_success` |
//! | `EnsureOtherScopeOrderSucceeds` | `scope` reversed: success | `fapi2_sp_final_ensure_other_scope_order_succeeds` (`dpop`, `security`) |
//! | `TestClaimsParameterIdentityClaims` | skipped unless `claims_parameter_supported`; the standard claims listed asked for in `claims` (with an unknown one) for ID token and userinfo: success, the same `sub` at userinfo (by DPoP), claims released | `fapi2_sp_final_test_claims_parameter_identity_claims` |
//! | `EnsureRequestObjectWithNbf8SecondsInTheFutureIsAccepted` | `nbf` 8 s ahead is clock skew: accepted (the suite only warns) | `fapi2_sp_final_ensure_request_object_with_nbf_8_seconds_in_the_future_is_accepted` |
//! | `EnsureDifferentNonceInsideAndOutsideRequestObject` | another `nonce` beside the `request_uri`: the pushed one in the ID token, or an error page, or `invalid_request` | `fapi2_sp_final_ensure_different_nonce_inside_and_outside_request_object` |
//! | `EnsureDifferentStateInsideAndOutsideRequestObject` | another `state` beside it: the pushed one comes back, or an error | `fapi2_sp_final_ensure_different_state_inside_and_outside_request_object` (`dpop`, `security`) |
//! | `EnsureAuthorizationRequestWithLongNonce` | a 384-character `nonce`: whole, or `invalid_request` | `fapi2_sp_final_ensure_authorization_request_with_long_nonce` |
//! | `EnsureAuthorizationRequestWithLongState` | a 1000-character `state`: whole, or `invalid_request` | `fapi2_sp_final_ensure_authorization_request_with_long_state` (`dpop`, `security`) |
//! | `EnsureRequestObjectWithoutExpFails` | no `exp`: `invalid_request_object` at the PAR endpoint (or an error page or `invalid_request`, `invalid_request_uri`, `access_denied`) | `fapi2_sp_final_ensure_request_object_without_exp_fails` |
//! | `EnsureRequestObjectWithoutNbfFails` | no `nbf`: the same | `fapi2_sp_final_ensure_request_object_without_nbf_fails` |
//! | `StateOnlyOutsideRequestObjectNotUsed` | `state` only beside the `request_uri`: success without `state`, or an error | `fapi2_sp_final_state_only_outside_request_object_not_used` |
//! | `EnsureRequestObjectWithoutRedirectUriFails` | no `redirect_uri`: `invalid_request` or `invalid_request_object` | `fapi2_sp_final_ensure_request_object_without_redirect_uri_fails` (`dpop`, `security`) |
//! | `EnsureExpiredRequestObjectFails` | `exp` an hour ago: `invalid_request_object` | `fapi2_sp_final_ensure_expired_request_object_fails` (`dpop`, `jarm`) |
//! | `EnsureRequestObjectWithBadAudFails` | `aud` another server: `invalid_request_object` (`invalid_request_uri` if pushed) | `fapi2_sp_final_ensure_request_object_with_bad_aud_fails` |
//! | `EnsureRequestObjectWithExpOver60Fails` | `exp` 70 minutes ahead: the same | `fapi2_sp_final_ensure_request_object_with_exp_over_60_fails` |
//! | `EnsureRequestObjectWithNbfOver60Fails` | `nbf` 70 minutes ago: the same | `fapi2_sp_final_ensure_request_object_with_nbf_over_60_fails` |
//! | `EnsureSignedRequestObjectWithRS256Fails` | a PS256 client's object signed RS256: `invalid_request_object` | `fapi2_sp_final_ensure_signed_request_object_with_rs256_fails` |
//! | `EnsureRequestObjectSignatureAlgorithmIsNotNone` | `alg: none`: `invalid_request_object` | `fapi2_sp_final_ensure_request_object_signature_algorithm_is_not_none` |
//! | `EnsureRequestObjectWithInvalidSignatureFails` | a broken signature: `invalid_request_object` | `fapi2_sp_final_ensure_request_object_with_invalid_signature_fails` |
//! | `EnsureMatchingKeyInAuthorizationRequest` | client 1's object signed by client 2's key: `invalid_request` or `invalid_request_object` | `fapi2_sp_final_ensure_matching_key_in_authorization_request` |
//! | `EnsureUnsignedRequestAtParEndpointFails` | Message Signing: the parameters pushed unsigned: `invalid_request`; the Security Profile alone takes them (the whole flow) | `fapi2_sp_final_ensure_unsigned_request_at_par_endpoint_fails` (`dpop`, `security`) |
//! | `EnsureRegisteredRedirectUri` | does not apply: the suite runs it for the UK, AU CDR, Brazil, ConnectID, CBUAE and KSA profiles, which the demo does not serve; plain FAPI runs the next one | — |
//! | `TolerateUnregisteredRedirectUri` | an unregistered `redirect_uri` at the PAR endpoint: refused (`invalid_request`, `invalid_request_object`), or taken and redirected to (RFC 9126 §2.4) | `fapi2_sp_final_plain_fapi_tolerate_unregistered_redirect_uri` (`dpop`, `security`) |
//! | `EnsureUnsignedAuthorizationRequestWithoutUsingParFails` | the parameters straight to the authorization endpoint: an error page or `invalid_request` | `fapi2_sp_final_ensure_unsigned_authorization_request_without_using_par_fails` (`dpop`, `security`) |
//! | `EnsureRedirectUriInAuthorizationRequest` | no `redirect_uri`: `invalid_request`, an error page, or the only registered one used | `fapi2_sp_final_ensure_redirect_uri_in_authorization_request` (`dpop`, `security`) |
//! | `EnsureResponseTypeCodeIdTokenFails` | `code id_token`: a 4xx from the PAR endpoint (`unsupported_response_type`, `invalid_request`, `unauthorized_client`), or no code through the browser | `fapi2_sp_final_ensure_response_type_code_idtoken_fails` (`dpop`, `security`) |
//! | `EnsureResponseTypeTokenFails` | `token`: the same | `fapi2_sp_final_ensure_response_type_token_fails` (`dpop`, `jarm`, `security`) |
//! | `PAREnsureServerAcceptsReusedRequestUriBeforeAuthenticationCompletion` | the `request_uri` visited twice before the sign-in completes: the second visit works | `fapi2_sp_final_par_ensure_reused_request_uri_prior_to_auth_completion_succeeds` |
//! | `PARAttemptReuseRequestUri` | the `request_uri` used again after the flow: an error page or `invalid_request_uri` (the suite only warns on success) | `fapi2_sp_final_par_attempt_reuse_request_uri` (`dpop`, `jarm`) |
//! | `PARAttemptToUseExpiredRequestUri` | a `request_uri` used after its `expires_in`: `invalid_request_uri`. Not waited for here (the demo has no flag to shorten it); `par.rs` `a_request_uri_expires_after_its_lifetime` holds it on a mock clock, and every push here checks `expires_in` | — |
//! | `PAREnsureRequestUriIsBoundToClient` | client 1's `request_uri` with client 2's `client_id`: an error page or `invalid_request`, `invalid_request_object`, `invalid_request_uri` | `fapi2_sp_final_par_attempt_to_use_request_uri_for_different_client` (`dpop`, `security`) |
//! | `PARRejectRequestUriInParAuthorizationFormParams` | a `request_uri` form parameter at the PAR endpoint: `400` `invalid_request`, `invalid_request_object` or `request_uri_not_supported` | `fapi2_sp_final_par_authorization_request_containing_request_uri_form_param` (`dpop`, `security`) |
//! | `PARRejectInvalidHttpVerb` | `PUT` to the PAR endpoint: a 4xx or 5xx | `fapi2_sp_final_par_attempt_invalid_http_method` |
//! | `PAREnsurePKCERequired` | no `code_challenge`: `invalid_request` | `fapi2_sp_final_par_ensure_pkce_required` (`dpop`, `security`) |
//! | `PAREnsurePlainPKCERejected` | `plain`: `invalid_request` | `fapi2_sp_final_par_plain_pkce_rejected` (`dpop`, `security`) |
//! | `PARRejectRequestUriInParAuthorizationRequest` | `request_uri` inside the object: `400` `invalid_request_object` | `fapi2_sp_final_par_authorization_request_containing_request_uri` |
//! | `ParWithoutDuplicateParameters` | `client_id` and `request_uri` alone at the authorization endpoint: success | `fapi2_sp_final_par_without_duplicate_parameters` (`dpop`, `security`) |
//! | `AustraliaConnectIdRequestObjectWithExpOver10Fails`, `AustraliaConnectIdEnsureRequestObjectWithNbfOver15Fails`, `AustraliaConnectIdEnsureInvalidPurposeFails`, `AustraliaConnectIdTestClaimsParameterIdTokenIdentityClaims` | does not apply: the Australia ConnectID profile, which the demo does not serve | — |
//! | `EnsureServerHandlesNonMatchingIntentId`, `TestEssentialAcrScaClaim` | does not apply: the UK Open Banking profile, which the demo does not serve | — |
//! | `BrazilEnsureBadPaymentSignatureFails` | does not apply: the Brazil Open Finance profile, which the demo does not serve | — |
//!
//! The token side's 27 modules are tabled in `demo_oidf_fapi2_token.rs`. In all: 68 modules
//! tested, 2 pointing to tests that hold expiry on a mock clock (the expired `request_uri`
//! above and the expired code there), 8 that do not apply. The suite's TLS checks (TLS 1.2 or later with the BCP 195 ciphers) are the
//! TLS library's, not the demo's, and are left out.

mod demo;
#[path = "demo/fapi2.rs"]
mod fapi2;
#[path = "dpop_proofs/mod.rs"]
mod keys;
#[path = "demo/tls.rs"]
mod tls;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use demo::http::*;
use fapi2::*;
use keys::ProofKey;
use serde_json::{Value, json};

oidf_fapi2! {
    fapi2_sp_final_discovery_end_point_verification => discovery_endpoint_verification [dpop, mtls, jarm, security];
    fapi2_sp_final_happy_flow => happy_flow [dpop, mtls, jarm, security];
    fapi2_sp_final_user_rejects_authentication => user_rejects_authentication [dpop, jarm];
    fapi2_sp_final_ensure_request_object_with_multiple_aud_succeeds => multiple_aud [dpop];
    fapi2_sp_final_ensure_authorization_request_without_state_success => without_state [dpop, security];
    fapi2_sp_final_ensure_authorization_request_without_nonce_success => without_nonce [dpop];
    fapi2_sp_final_ensure_authorization_request_with_64_char_nonce_success => nonce_of_64 [dpop];
    fapi2_sp_final_ensure_other_scope_order_succeeds => other_scope_order [dpop, security];
    fapi2_sp_final_test_claims_parameter_identity_claims => claims_parameter [dpop];
    fapi2_sp_final_ensure_request_object_with_nbf_8_seconds_in_the_future_is_accepted => nbf_8_seconds_ahead [dpop];
    fapi2_sp_final_ensure_different_nonce_inside_and_outside_request_object => different_nonce_outside [dpop];
    fapi2_sp_final_ensure_different_state_inside_and_outside_request_object => different_state_outside [dpop, security];
    fapi2_sp_final_ensure_authorization_request_with_long_nonce => long_nonce [dpop];
    fapi2_sp_final_ensure_authorization_request_with_long_state => long_state [dpop, security];
    fapi2_sp_final_ensure_request_object_without_exp_fails => object_without_exp [dpop];
    fapi2_sp_final_ensure_request_object_without_nbf_fails => object_without_nbf [dpop];
    fapi2_sp_final_state_only_outside_request_object_not_used => state_only_outside [dpop];
    fapi2_sp_final_ensure_request_object_without_redirect_uri_fails => without_redirect_uri [dpop, security];
    fapi2_sp_final_ensure_expired_request_object_fails => expired_object [dpop, jarm];
    fapi2_sp_final_ensure_request_object_with_bad_aud_fails => object_with_bad_aud [dpop];
    fapi2_sp_final_ensure_request_object_with_exp_over_60_fails => object_exp_over_60 [dpop];
    fapi2_sp_final_ensure_request_object_with_nbf_over_60_fails => object_nbf_over_60 [dpop];
    fapi2_sp_final_ensure_signed_request_object_with_rs256_fails => object_signed_rs256 [dpop];
    fapi2_sp_final_ensure_request_object_signature_algorithm_is_not_none => object_alg_none [dpop];
    fapi2_sp_final_ensure_request_object_with_invalid_signature_fails => object_bad_signature [dpop];
    fapi2_sp_final_ensure_matching_key_in_authorization_request => object_signed_by_another_client [dpop];
    fapi2_sp_final_ensure_unsigned_request_at_par_endpoint_fails => unsigned_at_par [dpop, security];
    fapi2_sp_final_plain_fapi_tolerate_unregistered_redirect_uri => unregistered_redirect_uri [dpop, security];
    fapi2_sp_final_ensure_unsigned_authorization_request_without_using_par_fails => not_pushed [dpop, security];
    fapi2_sp_final_ensure_redirect_uri_in_authorization_request => no_redirect_uri [dpop, security];
    fapi2_sp_final_ensure_response_type_code_idtoken_fails => response_type_code_id_token [dpop, security];
    fapi2_sp_final_ensure_response_type_token_fails => response_type_token [dpop, jarm, security];
    fapi2_sp_final_par_ensure_reused_request_uri_prior_to_auth_completion_succeeds => request_uri_visited_twice [dpop];
    fapi2_sp_final_par_attempt_reuse_request_uri => request_uri_reused [dpop, jarm];
    fapi2_sp_final_par_attempt_to_use_request_uri_for_different_client => request_uri_of_another_client [dpop, security];
    fapi2_sp_final_par_authorization_request_containing_request_uri_form_param => request_uri_at_par [dpop, security];
    fapi2_sp_final_par_attempt_invalid_http_method => par_by_put [dpop];
    fapi2_sp_final_par_ensure_pkce_required => pkce_required [dpop, security];
    fapi2_sp_final_par_plain_pkce_rejected => plain_pkce [dpop, security];
    fapi2_sp_final_par_authorization_request_containing_request_uri => request_uri_in_object [dpop];
    fapi2_sp_final_par_without_duplicate_parameters => without_duplicates [dpop, security];
}

/// The parameters beside `request_uri` that the suite duplicates outside the request object
/// (OIDC Core §6.1, RFC 6749 §3.1.2.3).
fn duplicated<'a>(
    client: &'a Client,
    request_uri: &'a str,
    params: &'a Value,
) -> Vec<(&'a str, &'a str)> {
    let mut pairs = client.by_reference(request_uri, &[]);
    for name in ["response_type", "scope", "redirect_uri"] {
        if let Some(value) = params[name].as_str() {
            pairs.push((name, value));
        }
    }
    pairs
}

/// The refusal of a request the module says must fail: the pushed authorization request
/// refused with a `400` JSON error among `at_par`, or, if it was taken, the authorization
/// endpoint showing an error page or redirecting an error among `at_authorization` with the
/// request's `state`.
async fn assert_refused(
    client: &Client,
    pushed: Reply,
    state: Option<&str>,
    at_par: &[&str],
    at_authorization: &[&str],
) {
    if pushed.status != 201 {
        assert_error_among(&pushed, &[400], at_par);
        return;
    }
    let request_uri = request_uri_of(&pushed);
    if let Refusal::Redirected(response) = client
        .refusal(&client.by_reference(&request_uri, &[]))
        .await
    {
        assert_redirected_error(&response, state, at_authorization);
    }
}

/// Pushes a request object of `client` whose claims `edit` leaves as it likes, signed with the
/// client's key.
async fn push_object(client: &Client, edit: impl FnOnce(&mut Value)) -> Reply {
    let mut claims = client.object_claims(&client.request());
    edit(&mut claims);
    client
        .par(&[("request", &client.sign_object(&claims))])
        .await
}

const INVALID_OBJECT: [&str; 1] = ["invalid_request_object"];

/// What the authorization endpoint may answer a pushed request object it finds wanting only
/// when the request is used.
const OBJECT_LATE_REFUSALS: [&str; 3] = ["invalid_request", "invalid_request_uri", "access_denied"];

/// A request object of a new client's, as `edit` leaves its claims, pushed and refused: at the
/// PAR endpoint as `invalid_request_object`, or once used, by a redirect carrying one of
/// `at_authorization`.
async fn object_refused(setup: &Setup, edit: impl FnOnce(&mut Value), at_authorization: &[&str]) {
    let client = setup.client().await;
    let pushed = push_object(&client, edit).await;
    assert_refused(&client, pushed, None, &INVALID_OBJECT, at_authorization).await;
}
const AUTHORIZATION_REFUSALS: [&str; 4] = [
    "invalid_request",
    "invalid_request_object",
    "invalid_request_uri",
    "access_denied",
];

fn is_fapi_algorithm(alg: &Value) -> bool {
    FAPI_ALGORITHMS.iter().any(|permitted| alg == *permitted)
}

/// At least one of `list`'s algorithms is one FAPI 2.0 permits.
fn assert_fapi_algorithms(document: &Value, member: &str) {
    let listed = document[member]
        .as_array()
        .unwrap_or_else(|| panic!("{member}: {document}"));
    assert!(listed.iter().any(is_fapi_algorithm), "{member}: {listed:?}");
}

async fn discovery_endpoint_verification(setup: Setup) {
    let demo = setup.demo;
    let oauth = demo
        .document("/.well-known/oauth-authorization-server")
        .await;
    let openid = demo.document("/.well-known/openid-configuration").await;
    for document in [&oauth, &openid] {
        assert_eq!(document["issuer"], demo.base.as_str());
        assert!(strings(&document["response_types_supported"]).contains(&"code".to_owned()));
        assert_eq!(
            document["authorization_response_iss_parameter_supported"],
            true
        );
        assert_eq!(document["require_pushed_authorization_requests"], true);
        for endpoint in [
            "authorization_endpoint",
            "token_endpoint",
            "pushed_authorization_request_endpoint",
            "jwks_uri",
        ] {
            let url = document[endpoint].as_str().unwrap_or_default();
            assert!(url.starts_with(&demo.base), "{endpoint}: {document}");
        }
        assert!(
            strings(&document["code_challenge_methods_supported"]).contains(&"S256".to_owned())
        );
        let methods = strings(&document["token_endpoint_auth_methods_supported"]);
        for method in ["private_key_jwt", "tls_client_auth"] {
            assert!(methods.contains(&method.to_owned()), "{methods:?}");
        }
        assert_fapi_algorithms(document, "token_endpoint_auth_signing_alg_values_supported");
        assert_fapi_algorithms(document, "dpop_signing_alg_values_supported");
        assert_eq!(document["tls_client_certificate_bound_access_tokens"], true);
        if setup.variant.profile == Profile::MessageSigning {
            assert_fapi_algorithms(document, "request_object_signing_alg_values_supported");
        }
        if setup.variant.jarm {
            assert!(strings(&document["response_modes_supported"]).contains(&"jwt".to_owned()));
            assert_fapi_algorithms(document, "authorization_signing_alg_values_supported");
        }
        // RFC 6749 §3.3: scope tokens are printable ASCII without spaces, `"` or `\`.
        for scope in strings(&document["scopes_supported"]) {
            assert!(
                !scope.is_empty()
                    && scope
                        .bytes()
                        .all(|b| b > 0x20 && b < 0x7f && b != b'"' && b != b'\\'),
                "{scope:?}"
            );
        }
    }
    assert_eq!(
        openid["scopes_supported"]
            .as_array()
            .map(|s| s.contains(&json!("openid"))),
        Some(true)
    );
    assert!(
        !strings(&openid["subject_types_supported"]).is_empty(),
        "{openid}"
    );
    assert_fapi_algorithms(&openid, "id_token_signing_alg_values_supported");
}

/// Alice's sign-in and approval for `client`'s `params`, pushed: the authorization response.
async fn authorized(
    client: &Client,
    params: &Value,
    extra: &[(&str, &str)],
) -> std::collections::HashMap<String, String> {
    let request_uri = client.pushed(params).await;
    let browser = client.demo.browser();
    let reply = client
        .approved(&browser, &client.by_reference(&request_uri, extra))
        .await;
    client.response(&reply).await
}

async fn happy_flow(setup: Setup) {
    let demo = setup.demo;
    // The first client: a request object without `typ`, its parameters duplicated outside.
    let first = setup.client().await;
    let params = first.request();
    let pushed = match demo.profile {
        Profile::MessageSigning => {
            let object = sign(&first.key, None, &first.object_claims(&params));
            first.par(&[("request", &object)]).await
        }
        Profile::Security => first.push(&params).await,
    };
    let request_uri = request_uri_of(&pushed);
    let browser = demo.browser();
    let reply = first
        .approved(&browser, &duplicated(&first, &request_uri, &params))
        .await;
    let response = first.response(&reply).await;
    let code = first.code(&response, params["state"].as_str().unwrap());
    let tokens = first.tokens(&first.redeem(&code).await);
    let claims = first.id_token(&tokens).await;
    assert_eq!(claims["nonce"], params["nonce"]);
    let token = tokens["access_token"].as_str().unwrap();
    let served = first.resource(token).await;
    assert_eq!(served.status, 200, "{}", served.body);
    assert!(
        served.header("date").is_some(),
        "a Date header (RFC 9110 §6.6.1)"
    );
    assert_eq!(served.json()["email"], ALICE.0);
    // The access token in the query is no way to present it (FAPI 2.0 SP §5.3.4).
    let in_query = send(
        first
            .http
            .get(format!("{}?access_token={token}", demo.url(ME))),
    )
    .await;
    assert_ne!(in_query.status, 200, "{}", in_query.body);
    // The resource answers whatever the client accepts.
    for accept in ["application/json; charset=UTF-8", "*/*"] {
        let url = demo.url(ME);
        let request = first.http.get(&url).header("accept", accept);
        let request = match &first.dpop {
            Some(key) => request
                .header("authorization", format!("DPoP {token}"))
                .header("dpop", key.proof_for_token("GET", &url, now(), token)),
            None => request.header("authorization", format!("Bearer {token}")),
        };
        let served = send(request).await;
        assert_eq!(served.status, 200, "Accept {accept}: {}", served.body);
    }

    // The second client: a redirect URI with a query of its own, a 128-character state, a
    // 43-character nonce, `iat` and `typ` in the object, the request by reference alone, and
    // under DPoP the code bound to its key by `dpop_jkt`.
    let second = setup
        .client_with(|metadata| metadata["redirect_uris"] = json!([CALLBACK, CALLBACK_WITH_QUERY]))
        .await;
    let mut params = second.request();
    params["redirect_uri"] = json!(CALLBACK_WITH_QUERY);
    params["state"] = json!("s".repeat(128));
    params["nonce"] = json!("n".repeat(43));
    if let Some(key) = &second.dpop {
        params["dpop_jkt"] = json!(key.jkt());
    }
    let pushed = match demo.profile {
        Profile::MessageSigning => {
            let mut claims = second.object_claims(&params);
            claims["iat"] = json!(now());
            second
                .par(&[("request", &second.sign_object(&claims))])
                .await
        }
        Profile::Security => second.push(&params).await,
    };
    let request_uri = request_uri_of(&pushed);
    let browser = demo.browser();
    let reply = second
        .approved(&browser, &second.by_reference(&request_uri, &[]))
        .await;
    let response = second.response(&reply).await;
    assert_eq!(
        response.get("dummy1").map(String::as_str),
        Some("lorem"),
        "{response:?}"
    );
    assert_eq!(
        response.get("dummy2").map(String::as_str),
        Some("ipsum"),
        "{response:?}"
    );
    let code = second.code(&response, &"s".repeat(128));
    let tokens = second.tokens(&second.redeem_at(&code, CALLBACK_WITH_QUERY).await);
    assert_eq!(second.id_token(&tokens).await["nonce"], "n".repeat(43));
    let token = tokens["access_token"].as_str().unwrap();
    assert_eq!(second.resource(token).await.status, 200);
    // The first client's key (or certificate) with the second client's token.
    let stolen = first.resource(token).await;
    assert!(
        (400..500).contains(&stolen.status),
        "{} {}",
        stolen.status,
        stolen.body
    );
}

async fn user_rejects_authentication(setup: Setup) {
    let first = setup.client().await;
    let second = setup
        .client_with(|metadata| metadata["redirect_uris"] = json!([CALLBACK_WITH_QUERY]))
        .await;
    for (client, redirect_uri) in [(&first, CALLBACK), (&second, CALLBACK_WITH_QUERY)] {
        let mut params = client.request();
        params["redirect_uri"] = json!(redirect_uri);
        params["state"] = json!("r".repeat(128));
        let request_uri = client.pushed(&params).await;
        let browser = setup.demo.browser();
        let approval = sign_in_via_authorize(
            &browser,
            client.base(),
            &client.by_reference(&request_uri, &[]),
            ALICE,
        )
        .await;
        let denied = decide(&browser, client.base(), &approval, "deny").await;
        let response = client.response(&denied).await;
        assert_redirected_error(&response, Some(&"r".repeat(128)), &["access_denied"]);
        let expected = [
            "error",
            "error_description",
            "state",
            "iss",
            "aud",
            "exp",
            "iat",
        ];
        for name in response.keys() {
            assert!(
                expected.contains(&name.as_str())
                    || (redirect_uri != CALLBACK && name.starts_with("dummy")),
                "unexpected {name}: {response:?}"
            );
        }
        if redirect_uri == CALLBACK_WITH_QUERY {
            assert_eq!(response.get("dummy1").map(String::as_str), Some("lorem"));
        }
    }
}

async fn multiple_aud(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    let mut claims = client.object_claims(&params);
    claims["aud"] = json!([client.base(), "https://other1.example.com", "invalid"]);
    let request_uri = request_uri_of(
        &client
            .par(&[("request", &client.sign_object(&claims))])
            .await,
    );
    let browser = setup.demo.browser();
    let reply = client
        .approved(&browser, &client.by_reference(&request_uri, &[]))
        .await;
    let response = client.response(&reply).await;
    let code = client.code(&response, params["state"].as_str().unwrap());
    client.tokens(&client.redeem(&code).await);
}

async fn without_state(setup: Setup) {
    let client = setup.client().await;
    let params = without(client.request(), "state");
    let response = authorized(&client, &params, &[]).await;
    if response.contains_key("error") {
        assert_redirected_error(&response, None, &AUTHORIZATION_REFUSALS);
        return;
    }
    assert!(!response.contains_key("state"), "{response:?}");
    client.tokens(&client.redeem(&response["code"]).await);
}

async fn without_nonce(setup: Setup) {
    let client = setup.client().await;
    let flow = client.run(&without(client.request(), "nonce")).await;
    let claims = client.id_token(&flow.tokens).await;
    assert!(claims.get("nonce").is_none(), "{claims}");
}

async fn nonce_of_64(setup: Setup) {
    let client = setup.client().await;
    let mut params = client.request();
    params["nonce"] = json!("6".repeat(64));
    let flow = client.run(&params).await;
    assert_eq!(client.id_token(&flow.tokens).await["nonce"], "6".repeat(64));
}

async fn other_scope_order(setup: Setup) {
    let client = setup.client().await;
    let mut params = client.request();
    params["scope"] = json!("profile openid");
    let flow = client.run(&params).await;
    client.id_token(&flow.tokens).await;
}

async fn claims_parameter(setup: Setup) {
    let client = setup.client().await;
    let metadata = setup
        .demo
        .document("/.well-known/openid-configuration")
        .await;
    // The suite skips the module unless the server says it takes the parameter.
    assert_eq!(metadata["claims_parameter_supported"], true, "{metadata}");
    let standard = [
        "name",
        "given_name",
        "family_name",
        "email",
        "email_verified",
        "locale",
    ];
    let supported: Vec<String> = strings(&metadata["claims_supported"])
        .into_iter()
        .filter(|claim| standard.contains(&claim.as_str()))
        .collect();
    assert!(!supported.is_empty(), "{metadata}");
    let mut asked = serde_json::Map::new();
    for claim in &supported {
        asked.insert(claim.clone(), Value::Null);
    }
    // Claims nobody knows are ignored.
    asked.insert("weather".to_owned(), json!({ "essential": true }));
    let claims = json!({ "id_token": asked.clone(), "userinfo": asked });
    let mut params = client.request();
    params["claims"] = match setup.demo.profile {
        Profile::MessageSigning => claims,
        Profile::Security => json!(claims.to_string()),
    };
    let flow = client.run(&params).await;
    let id_token = client.id_token(&flow.tokens).await;
    assert!(id_token.get("weather").is_none(), "{id_token}");
    let userinfo_endpoint = metadata["userinfo_endpoint"]
        .as_str()
        .expect("a userinfo endpoint");
    let userinfo = client.fetch(userinfo_endpoint, flow.access_token()).await;
    assert_eq!(userinfo.status, 200, "{}", userinfo.body);
    assert_content_type(&userinfo, "application/json");
    let userinfo = userinfo.json();
    assert_eq!(userinfo["sub"], id_token["sub"]);
    assert!(userinfo.get("weather").is_none(), "{userinfo}");
    // Each requested claim Alice has a value for is released in one place or the other.
    assert!(
        supported
            .iter()
            .any(|claim| id_token.get(claim).is_some() || userinfo.get(claim).is_some()),
        "{id_token} {userinfo}"
    );
}

async fn nbf_8_seconds_ahead(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    let mut claims = client.object_claims(&params);
    claims["nbf"] = json!(now() + 8);
    let request_uri = request_uri_of(
        &client
            .par(&[("request", &client.sign_object(&claims))])
            .await,
    );
    let browser = setup.demo.browser();
    let reply = client
        .approved(&browser, &client.by_reference(&request_uri, &[]))
        .await;
    let response = client.response(&reply).await;
    let code = client.code(&response, params["state"].as_str().unwrap());
    client.tokens(&client.redeem(&code).await);
}

/// Pushes `params`, then sends `outside` beside the `request_uri`: either an error (a page,
/// or `invalid_request` redirected with the request's `state`) or success as the pushed
/// request says (the authorization response and the tokens).
async fn with_outside(
    client: &Client,
    params: &Value,
    outside: &[(&str, &str)],
) -> Option<(std::collections::HashMap<String, String>, Value)> {
    let request_uri = client.pushed(params).await;
    let by_reference = client.by_reference(&request_uri, outside);
    let browser = client.demo.browser();
    let first = get(&browser, &authorize_url(client.base(), &by_reference)).await;
    if first.location().is_some() {
        let response = client.response(&first).await;
        assert_redirected_error(&response, params["state"].as_str(), &["invalid_request"]);
        return None;
    }
    if first.status != 200 || !first.body.contains("password") {
        assert!(
            (400..500).contains(&first.status),
            "{} {}",
            first.status,
            first.body
        );
        return None;
    }
    let signed_in = sign_in(&browser, client.base(), &sign_in_form(&first), ALICE).await;
    let reply = decide(&browser, client.base(), &signed_in, "approve").await;
    let response = client.response(&reply).await;
    let code = client.code(&response, params["state"].as_str().unwrap_or_default());
    let tokens = client.tokens(&client.redeem(&code).await);
    Some((response, tokens))
}

async fn different_nonce_outside(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    if let Some((_, tokens)) = with_outside(&client, &params, &[("nonce", "outside")]).await {
        assert_eq!(client.id_token(&tokens).await["nonce"], params["nonce"]);
    }
}

async fn different_state_outside(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    // `with_outside` holds the state of the response to the pushed one.
    with_outside(&client, &params, &[("state", "outside")]).await;
}

/// A request whose `name` is `length` characters long: it works and the value comes back
/// whole, or it is refused with `invalid_request` (at the PAR endpoint or redirected).
async fn long_value(setup: &Setup, name: &str, length: usize) -> Option<(Client, Value, Value)> {
    let client = setup.client().await;
    let mut params = client.request();
    params[name] = json!("x".repeat(length));
    let pushed = client.push(&params).await;
    if pushed.status != 201 {
        assert_error_among(&pushed, &[400], &["invalid_request"]);
        return None;
    }
    let request_uri = request_uri_of(&pushed);
    let browser = setup.demo.browser();
    let reply = client
        .approved(&browser, &client.by_reference(&request_uri, &[]))
        .await;
    let response = client.response(&reply).await;
    if response.contains_key("error") {
        assert_redirected_error(&response, params["state"].as_str(), &["invalid_request"]);
        return None;
    }
    let code = client.code(&response, params["state"].as_str().unwrap());
    let tokens = client.tokens(&client.redeem(&code).await);
    Some((client, params, tokens))
}

async fn long_nonce(setup: Setup) {
    if let Some((client, params, tokens)) = long_value(&setup, "nonce", 384).await {
        assert_eq!(client.id_token(&tokens).await["nonce"], params["nonce"]);
    }
}

async fn long_state(setup: Setup) {
    // `long_value` holds the state coming back whole.
    long_value(&setup, "state", 1000).await;
}

async fn object_without_exp(setup: Setup) {
    let edit = |claims: &mut Value| {
        claims.as_object_mut().unwrap().remove("exp");
    };
    object_refused(&setup, edit, &OBJECT_LATE_REFUSALS).await;
}

async fn object_without_nbf(setup: Setup) {
    let edit = |claims: &mut Value| {
        claims.as_object_mut().unwrap().remove("nbf");
    };
    object_refused(&setup, edit, &OBJECT_LATE_REFUSALS).await;
}

async fn state_only_outside(setup: Setup) {
    let client = setup.client().await;
    let params = without(client.request(), "state");
    let request_uri = client.pushed(&params).await;
    let by_reference = client.by_reference(&request_uri, &[("state", "outside")]);
    let browser = setup.demo.browser();
    let first = get(&browser, &authorize_url(client.base(), &by_reference)).await;
    if first.location().is_some() {
        let response = client.response(&first).await;
        let error = response
            .get("error")
            .map(String::as_str)
            .unwrap_or_default();
        assert!(AUTHORIZATION_REFUSALS.contains(&error), "{response:?}");
        return;
    }
    let signed_in = sign_in(&browser, client.base(), &sign_in_form(&first), ALICE).await;
    let response = client
        .response(&decide(&browser, client.base(), &signed_in, "approve").await)
        .await;
    // Only the pushed request counts: it had no state, so none comes back.
    assert!(!response.contains_key("state"), "{response:?}");
    client.tokens(&client.redeem(&response["code"]).await);
}

async fn without_redirect_uri(setup: Setup) {
    let client = setup.client().await;
    let params = without(client.request(), "redirect_uri");
    let pushed = client.push(&params).await;
    assert_refused(
        &client,
        pushed,
        params["state"].as_str(),
        &["invalid_request", "invalid_request_object"],
        &["invalid_request", "invalid_request_object"],
    )
    .await;
}

async fn expired_object(setup: Setup) {
    let edit = |claims: &mut Value| claims["exp"] = json!(now() - 3600);
    object_refused(&setup, edit, &INVALID_OBJECT).await;
}

async fn object_with_bad_aud(setup: Setup) {
    let edit = |claims: &mut Value| claims["aud"] = json!("https://www.other1.example.com/");
    object_refused(&setup, edit, &["invalid_request_uri"]).await;
}

async fn object_exp_over_60(setup: Setup) {
    let edit = |claims: &mut Value| claims["exp"] = json!(now() + 70 * 60);
    object_refused(&setup, edit, &["invalid_request_uri"]).await;
}

async fn object_nbf_over_60(setup: Setup) {
    let edit = |claims: &mut Value| claims["nbf"] = json!(now() - 70 * 60);
    object_refused(&setup, edit, &["invalid_request_uri"]).await;
}

async fn object_signed_rs256(setup: Setup) {
    // The suite runs this with a PS256 client only, signing RS256 with the same RSA key.
    let client = setup
        .register(ProofKey::rsa(jsonwebtoken::Algorithm::PS256), |_| {})
        .await;
    let claims = client.object_claims(&client.request());
    let rs256 = sign(
        &ProofKey::rsa(jsonwebtoken::Algorithm::RS256),
        Some("oauth-authz-req+jwt"),
        &claims,
    );
    let pushed = client.par(&[("request", &rs256)]).await;
    assert_refused(&client, pushed, None, &INVALID_OBJECT, &INVALID_OBJECT).await;
}

async fn object_alg_none(setup: Setup) {
    let client = setup.client().await;
    let claims = client.object_claims(&client.request());
    let part = |value: &Value| URL_SAFE_NO_PAD.encode(value.to_string());
    let unsigned = format!("{}.{}.", part(&json!({ "alg": "none" })), part(&claims));
    let pushed = client.par(&[("request", &unsigned)]).await;
    assert_refused(&client, pushed, None, &INVALID_OBJECT, &INVALID_OBJECT).await;
}

async fn object_bad_signature(setup: Setup) {
    let client = setup.client().await;
    let object = client.sign_object(&client.object_claims(&client.request()));
    let (signed, signature) = object.rsplit_once('.').unwrap();
    let mut bytes = URL_SAFE_NO_PAD.decode(signature).unwrap();
    for byte in &mut bytes {
        *byte ^= 0x5a;
    }
    let forged = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(bytes));
    let pushed = client.par(&[("request", &forged)]).await;
    assert_refused(&client, pushed, None, &INVALID_OBJECT, &INVALID_OBJECT).await;
}

async fn object_signed_by_another_client(setup: Setup) {
    let client = setup.client().await;
    let other = setup.client().await;
    let claims = client.object_claims(&client.request());
    let pushed = client
        .par(&[("request", &other.sign_object(&claims))])
        .await;
    assert_refused(
        &client,
        pushed,
        None,
        &["invalid_request", "invalid_request_object"],
        &INVALID_OBJECT,
    )
    .await;
}

async fn unsigned_at_par(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    let pushed = client
        .par(&form_pairs(&without(params.clone(), "client_id")))
        .await;
    match setup.demo.profile {
        // Message Signing requires a signed request object.
        Profile::MessageSigning => {
            assert_refused(
                &client,
                pushed,
                params["state"].as_str(),
                &["invalid_request"],
                &[
                    "invalid_request",
                    "invalid_request_object",
                    "invalid_request_uri",
                ],
            )
            .await
        }
        // The Security Profile alone takes the parameters themselves.
        Profile::Security => {
            let request_uri = request_uri_of(&pushed);
            let browser = setup.demo.browser();
            let reply = client
                .approved(&browser, &client.by_reference(&request_uri, &[]))
                .await;
            let response = client.response(&reply).await;
            let code = client.code(&response, params["state"].as_str().unwrap());
            client.tokens(&client.redeem(&code).await);
        }
    }
}

async fn unregistered_redirect_uri(setup: Setup) {
    let client = setup.client().await;
    let mut params = client.request();
    let unregistered = format!("{CALLBACK}/{}", unique("elsewhere"));
    params["redirect_uri"] = json!(unregistered);
    let pushed = client.push(&params).await;
    if pushed.status != 201 {
        assert_error_among(
            &pushed,
            &[400],
            &["invalid_request", "invalid_request_object"],
        );
        return;
    }
    // RFC 9126 §2.4 lets a server take a redirect URI a pushed request names.
    let request_uri = request_uri_of(&pushed);
    let browser = setup.demo.browser();
    let reply = client
        .approved(&browser, &client.by_reference(&request_uri, &[]))
        .await;
    let location = reply.location().expect("a redirect");
    assert!(location.starts_with(&unregistered), "{location}");
}

async fn not_pushed(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    if let Refusal::Redirected(response) = client.refusal(&form_pairs(&params)).await {
        let error = response.get("error").map(String::as_str);
        assert_eq!(error, Some("invalid_request"), "{response:?}");
        if let Some(state) = response.get("state") {
            assert_eq!(params["state"], state.as_str());
        }
    }
}

async fn no_redirect_uri(setup: Setup) {
    let client = setup.client().await;
    let params = without(client.request(), "redirect_uri");
    let pushed = client.push(&params).await;
    if pushed.status != 201 {
        assert_error_among(
            &pushed,
            &[400],
            &["invalid_request", "invalid_request_object"],
        );
        return;
    }
    // RFC 6749 §3.1.2.3: with one redirect URI registered, a server may use it.
    let request_uri = request_uri_of(&pushed);
    let browser = setup.demo.browser();
    let first = get(
        &browser,
        &authorize_url(client.base(), &client.by_reference(&request_uri, &[])),
    )
    .await;
    if first.status != 200 {
        assert!(first.location().is_none(), "no redirect to an unnamed URI");
        assert!((400..500).contains(&first.status), "{}", first.status);
        return;
    }
    let signed_in = sign_in(&browser, client.base(), &sign_in_form(&first), ALICE).await;
    let response = client
        .response(&decide(&browser, client.base(), &signed_in, "approve").await)
        .await;
    client.code(&response, params["state"].as_str().unwrap());
}

/// A `response_type` FAPI 2.0 forbids: a 4xx JSON error from the PAR endpoint, or no code
/// through the browser (an error page, or `unsupported_response_type` or `invalid_request`
/// redirected with the request's `state`).
async fn forbidden_response_type(setup: &Setup, response_type: &str) {
    let client = setup.client().await;
    let mut params = client.request();
    params["response_type"] = json!(response_type);
    let pushed = client.push(&params).await;
    if pushed.status != 201 {
        assert!((400..500).contains(&pushed.status), "{}", pushed.status);
        assert_error_among(
            &pushed,
            &[pushed.status],
            &[
                "unsupported_response_type",
                "invalid_request",
                "unauthorized_client",
            ],
        );
        return;
    }
    let request_uri = request_uri_of(&pushed);
    let first = get(
        &setup.demo.browser(),
        &authorize_url(client.base(), &client.by_reference(&request_uri, &[])),
    )
    .await;
    if let Some(location) = first.location() {
        assert!(!location.contains("code="), "{location}");
        let response = client.response(&first).await;
        assert_redirected_error(
            &response,
            params["state"].as_str(),
            &["unsupported_response_type", "invalid_request"],
        );
    } else {
        assert!((400..500).contains(&first.status), "{}", first.status);
    }
}

async fn response_type_code_id_token(setup: Setup) {
    forbidden_response_type(&setup, "code id_token").await;
}

async fn response_type_token(setup: Setup) {
    forbidden_response_type(&setup, "token").await;
}

async fn request_uri_visited_twice(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    let request_uri = client.pushed(&params).await;
    let by_reference = client.by_reference(&request_uri, &[]);
    let browser = setup.demo.browser();
    // The first visit shows the sign-in page, and nobody signs in.
    let first = get(&browser, &authorize_url(client.base(), &by_reference)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    sign_in_form(&first);
    // The second visit works as any first one (FAPI 2.0 SP §5.3.2.2 note 3).
    let reply = client.approved(&browser, &by_reference).await;
    let response = client.response(&reply).await;
    let code = client.code(&response, params["state"].as_str().unwrap());
    client.tokens(&client.redeem(&code).await);
}

async fn request_uri_reused(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    let request_uri = client.pushed(&params).await;
    let by_reference = client.by_reference(&request_uri, &[]);
    let browser = setup.demo.browser();
    let reply = client.approved(&browser, &by_reference).await;
    let response = client.response(&reply).await;
    client.code(&response, params["state"].as_str().unwrap());
    // Used once, the request_uri is gone (RFC 9126 §7.3).
    let again = get(&browser, &authorize_url(client.base(), &by_reference)).await;
    match again.location() {
        Some(_) => {
            let response = client.response(&again).await;
            assert_eq!(
                response.get("error").map(String::as_str),
                Some("invalid_request_uri"),
                "{response:?}"
            );
        }
        None => {
            assert!(
                (400..500).contains(&again.status),
                "{} {}",
                again.status,
                again.body
            );
            assert_content_type(&again, "text/html");
        }
    }
}

async fn request_uri_of_another_client(setup: Setup) {
    let client = setup.client().await;
    let other = setup.client().await;
    let request_uri = client.pushed(&client.request()).await;
    if let Refusal::Redirected(response) =
        other.refusal(&other.by_reference(&request_uri, &[])).await
    {
        let error = response
            .get("error")
            .map(String::as_str)
            .unwrap_or_default();
        assert!(
            [
                "invalid_request",
                "invalid_request_object",
                "invalid_request_uri"
            ]
            .contains(&error),
            "{response:?}"
        );
    }
}

async fn request_uri_at_par(setup: Setup) {
    let client = setup.client().await;
    let params = client.request();
    let bad = format!("urn:ietf:params:oauth:request_uri:{}", unique("bad"));
    let pushed = match setup.demo.profile {
        Profile::MessageSigning => {
            let object = client.sign_object(&client.object_claims(&params));
            client
                .par(&[("request", &object), ("request_uri", &bad)])
                .await
        }
        Profile::Security => {
            let params = without(params.clone(), "client_id");
            let mut pairs = form_pairs(&params);
            pairs.push(("request_uri", &bad));
            client.par(&pairs).await
        }
    };
    assert_error_among(
        &pushed,
        &[400],
        &[
            "invalid_request",
            "invalid_request_object",
            "request_uri_not_supported",
        ],
    );
}

async fn par_by_put(setup: Setup) {
    let client = setup.client().await;
    let object = client.sign_object(&client.object_claims(&client.request()));
    let mut pairs = client.authentication();
    pairs.push(("request".to_owned(), object));
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&pairs)
        .finish();
    let reply = send(
        client
            .http
            .put(setup.demo.url(PAR))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body),
    )
    .await;
    assert!(
        (400..600).contains(&reply.status),
        "{} {}",
        reply.status,
        reply.body
    );
}

/// Pushed without a usable PKCE challenge: `invalid_request` at the PAR endpoint, or
/// redirected.
async fn refused_pkce(setup: &Setup, edit: impl FnOnce(&mut Value)) {
    let client = setup.client().await;
    let mut params = client.request();
    edit(&mut params);
    let pushed = client.push(&params).await;
    assert_refused(
        &client,
        pushed,
        params["state"].as_str(),
        &["invalid_request"],
        &["invalid_request"],
    )
    .await;
}

async fn pkce_required(setup: Setup) {
    refused_pkce(&setup, |params| {
        let params = params.as_object_mut().unwrap();
        params.remove("code_challenge");
        params.remove("code_challenge_method");
    })
    .await;
}

async fn plain_pkce(setup: Setup) {
    refused_pkce(&setup, |params| {
        params["code_challenge"] = json!(VERIFIER);
        params["code_challenge_method"] = json!("plain");
    })
    .await;
}

async fn request_uri_in_object(setup: Setup) {
    let client = setup.client().await;
    let mut params = client.request();
    params["request_uri"] = json!(format!(
        "urn:ietf:params:oauth:request_uri:{}",
        unique("bad")
    ));
    let pushed = push_object(&client, |claims| *claims = client.object_claims(&params)).await;
    assert_error_among(&pushed, &[400], &INVALID_OBJECT);
}

async fn without_duplicates(setup: Setup) {
    let client = setup.client().await;
    // `Client::run` sends `client_id` and `request_uri` alone (RFC 9101 §5).
    client.run(&client.request()).await;
}
