//! Hostile bodies: whatever bytes or JSON a caller sends to the registration and configuration
//! endpoints, the server neither panics nor answers 5xx.

use proptest::prelude::*;

use super::*;

/// The members grantor reads, and some it ignores, as keys of generated documents.
const MEMBERS: [&str; 12] = [
    "redirect_uris",
    "grant_types",
    "response_types",
    "token_endpoint_auth_method",
    "scope",
    "client_name",
    "client_id",
    "client_secret",
    "logo_uri",
    "jwks",
    "contacts",
    "software_statement",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[ -~]{0,40}".prop_map(Value::from),
        prop_oneof![
            Just("authorization_code"),
            Just("refresh_token"),
            Just("implicit"),
            Just("code"),
            Just("token"),
            Just("none"),
            Just("client_secret_basic"),
            Just("profile email"),
            Just("https://app.example/cb"),
            Just("http://127.0.0.1:8081/callback"),
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,12}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn metadata_document() -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(&MEMBERS[..]), json_value()), 0..8).prop_map(
        |members| {
            let mut object = serde_json::Map::new();
            for (name, value) in members {
                object.insert(name.to_owned(), value);
            }
            Value::Object(object)
        },
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn assert_calm(response: &Response<String>, allowed: &[u16]) {
    let status = response.status().as_u16();
    assert!(
        allowed.contains(&status),
        "status {status}: {}",
        response.body()
    );
    if status >= 400 {
        let body = json(response);
        assert!(body["error"].is_string(), "{body}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_as_a_registration_body_never_panic_or_answer_5xx(
        body in prop::collection::vec(any::<u8>(), 0..4096)
    ) {
        let f = open();
        let request = Request::post(REGISTER)
            .header("content-type", "application/json")
            .body(body)
            .unwrap();
        let response = runtime().block_on(f.server.register(&request));
        assert_calm(&response, &[201, 400]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn arbitrary_metadata_documents_never_panic_or_answer_5xx(document in metadata_document()) {
        let f = open();
        let body = document.to_string();
        let runtime = runtime();
        let response = runtime.block_on(f.server.register(&json_post(REGISTER, None, &body)));
        assert_calm(&response, &[201, 400, 413]);
        // The same document as a replacement of a registered client.
        let client = runtime.block_on(registered(&f, &public_metadata()));
        let token = token_of(&client);
        let replaced = runtime.block_on(configure(&f, "PUT", &client, Some(token), Some(&document)));
        assert_calm(&replaced, &[200, 400, 413]);
    }
}
