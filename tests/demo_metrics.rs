//! The demo servers' operations endpoints, against `axum_server` and `actix_server`: after a
//! scripted run (a sign-in, a code exchange, a refresh, a refused client, a flood of wrong
//! secrets until the client's budget refuses), `GET /metrics` shows each of grantor's series
//! with the expected labels and counts; the device flow's refusals (a device polling too fast,
//! wrong user codes past the server-wide limit) are counted; `/healthz` and `/readyz` answer
//! 200; `--metrics off` serves no `/metrics`.

mod demo;

use demo::Server;
use demo::http::*;

each_framework! {
    a_scripted_run_shows_in_every_series_with_its_labels_and_counts => scripted_run;
    the_sql_store_is_timed_per_seam_and_operation => sql_store_timed;
    device_flow_refusals_are_counted_with_their_tiers => device_refusals;
    metrics_off_serves_no_metrics_and_the_probes_still_answer => metrics_off;
}

/// The samples of a Prometheus text scrape.
struct Scrape(String);

impl Scrape {
    async fn of(base: &str) -> Self {
        let reply = get(&browser(), &format!("{base}/metrics")).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(
            reply
                .header("content-type")
                .unwrap()
                .starts_with("text/plain"),
            "{:?}",
            reply.header("content-type")
        );
        Self(reply.body)
    }

    /// The value of the series `name` whose labels are exactly `labels`, if it is there.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let mut wanted: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
        wanted.sort();
        self.0.lines().find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (series_name, mut got) = match series.split_once('{') {
                Some((n, rest)) => (
                    n,
                    rest.trim_end_matches('}')
                        .split(',')
                        .map(str::to_owned)
                        .collect::<Vec<_>>(),
                ),
                None => (series, Vec::new()),
            };
            got.sort();
            (series_name == name && got == wanted).then(|| value.parse().unwrap())
        })
    }

    fn count(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.value(name, labels)
            .unwrap_or_else(|| panic!("no {name} {labels:?} in\n{}", self.0))
    }

    /// Every label value of `label` among the series whose name starts with `name`.
    fn label_values(&self, name: &str, label: &str) -> Vec<String> {
        let key = format!("{label}=\"");
        let mut values: Vec<String> = (self.0.lines())
            .filter(|line| line.starts_with(name))
            .filter_map(|line| {
                let start = line.find(&key)? + key.len();
                let end = line[start..].find('"')? + start;
                Some(line[start..end].to_owned())
            })
            .collect();
        values.sort();
        values.dedup();
        values
    }
}

async fn scripted_run(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    // A sign-in through the authorization endpoint, approved; its code exchanged; a refresh.
    let http = browser();
    let code = approved_code(&http, base, "demo-client", ALICE).await;
    let exchanged = token(
        base,
        Some(DEMO),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
        ],
    )
    .await;
    let tokens = assert_tokens(&exchanged);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let refreshed = token(
        base,
        Some(DEMO),
        &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
    )
    .await;
    assert_tokens(&refreshed);
    // A flood of wrong secrets for plain-client: 20 are checked, then its budget refuses.
    let wrong = ("plain-client", "not-the-secret");
    let pairs = [("grant_type", "client_credentials")];
    for _ in 0..22 {
        assert_oauth_error(
            &token(base, Some(wrong), &pairs).await,
            401,
            "invalid_client",
        );
    }

    let scrape = Scrape::of(base).await;
    let requests = "grantor_requests_total";
    let by =
        |endpoint, outcome| scrape.count(requests, &[("endpoint", endpoint), ("outcome", outcome)]);
    assert_eq!(by("authorize", "sign_in"), 1.0);
    assert_eq!(by("sign_in", "ok"), 1.0);
    assert_eq!(by("token", "ok"), 2.0, "the code and the refresh");
    assert_eq!(by("token", "invalid_client"), 22.0);
    let durations = "grantor_request_duration_seconds_count";
    assert_eq!(scrape.count(durations, &[("endpoint", "token")]), 24.0);
    // Only fixed names as outcomes: no client id, username or scope ever becomes a label.
    for outcome in scrape.label_values(requests, "outcome") {
        assert!(
            ["ok", "sign_in", "invalid_client"].contains(&outcome.as_str()),
            "{outcome}"
        );
    }
    // Two refusals past the 20 failures the client's budget allows.
    let refusals = [("kind", "client_secret"), ("tier", "client")];
    assert_eq!(
        scrape.count("grantor_budget_refusals_total", &refusals),
        2.0
    );
    // The sign-in form was spent once; one single sign-on session started.
    let spent = [("kind", "signed-in"), ("result", "kept")];
    assert_eq!(scrape.count("grantor_one_time_values_total", &spent), 1.0);
    assert_eq!(
        scrape.count("grantor_sign_on_sessions_started_total", &[]),
        1.0
    );
    // Alice's password and the 20 checked secrets waited on the Argon2 lanes (demo-client's
    // secret is remembered after its first check).
    let waits = "grantor_lane_wait_seconds_count";
    assert_eq!(scrape.count(waits, &[("lane", "grantor-hash-user")]), 1.0);
    assert!(scrape.count(waits, &[("lane", "grantor-hash-client")]) >= 21.0);
    assert_eq!(
        scrape.value(
            "grantor_lane_refusals_total",
            &[("lane", "grantor-hash-client")]
        ),
        None
    );
    // The memory store's own seams are timed; its token and client seams answer in place.
    let seams = scrape.label_values("grantor_store_duration_seconds", "seam");
    assert!(seams.contains(&"single_use".to_owned()), "{seams:?}");
    assert!(seams.contains(&"attempts".to_owned()), "{seams:?}");
    assert!(!seams.contains(&"tokens".to_owned()), "{seams:?}");
    assert!(!seams.contains(&"clients".to_owned()), "{seams:?}");

    for (path, status) in [("/healthz", 200), ("/readyz", 200)] {
        assert_eq!(
            get(&http, &format!("{base}{path}")).await.status,
            status,
            "{path}"
        );
    }
    server.assert_alive_and_calm();
}

async fn device_refusals(framework: &str) {
    let server = Server::start(framework);
    let base = &server.base;
    let http = browser();
    let started = post_form(
        &http,
        &format!("{base}/api/oauth/device_authorization"),
        None,
        &[("client_id", "device-client"), ("scope", "profile")],
    )
    .await;
    assert_eq!(started.status, 200, "{}", started.body);
    let device_code = started.json()["device_code"].as_str().unwrap().to_owned();
    let poll = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ("client_id", "device-client"),
        ("device_code", device_code.as_str()),
    ];
    assert_oauth_error(
        &token(base, None, &poll).await,
        400,
        "authorization_pending",
    );
    // At once again: sooner than the interval.
    assert_oauth_error(&token(base, None, &poll).await, 400, "slow_down");
    // Wrong user codes typed signed out: the server-wide limit (100 a window), then refusals.
    let wrong = [("user_code", "BBBB-BBBB")];
    for _ in 0..102 {
        let reply = post_form(&http, &format!("{base}/device"), None, &wrong).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
    }

    let scrape = Scrape::of(base).await;
    let refusals = "grantor_budget_refusals_total";
    let device_poll = [("kind", "device-poll"), ("tier", "client")];
    assert_eq!(scrape.count(refusals, &device_poll), 1.0);
    let user_codes = [("kind", "user-code"), ("tier", "server")];
    assert_eq!(scrape.count(refusals, &user_codes), 2.0);
    server.assert_alive_and_calm();
}

async fn sql_store_timed(framework: &str) {
    let dir = std::env::temp_dir().join(format!(
        "grantor-metrics-{framework}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("grantor.db").display());
    let server = Server::start_with(framework, &store);
    let base = &server.base;
    let pairs = [("grant_type", "client_credentials")];
    assert_tokens(&token(base, Some(DEMO), &pairs).await);
    let scrape = Scrape::of(base).await;
    let timed = "grantor_store_duration_seconds_count";
    let insert = [("seam", "tokens"), ("operation", "insert_tokens")];
    assert_eq!(scrape.count(timed, &insert), 1.0);
    assert!(scrape.count(timed, &[("seam", "clients"), ("operation", "find_client")]) >= 1.0);
    assert_eq!(get(&browser(), &format!("{base}/readyz")).await.status, 200);
    server.assert_alive_and_calm();
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

async fn metrics_off(framework: &str) {
    let server = Server::start_with_args(framework, "memory", &["--metrics", "off"]);
    let base = &server.base;
    let http = browser();
    assert_eq!(get(&http, &format!("{base}/metrics")).await.status, 404);
    for path in ["/healthz", "/readyz"] {
        assert_eq!(
            get(&http, &format!("{base}{path}")).await.status,
            200,
            "{path}"
        );
    }
}
