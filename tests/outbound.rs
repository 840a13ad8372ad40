//! The default outbound HTTP client (feature `outbound`): it delivers to a reachable server,
//! and never to a loopback or private address unless a test allowed loopback, whether the
//! address is written in the URL or a name resolves to it; it follows no redirect.

#![cfg(feature = "outbound")]

use std::sync::mpsc;
use std::time::Duration;

use grantor::client::ClientId;
use grantor::outbound::{Delivery, HttpOutbound, Outbound, OutboundPost};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback server answering every request with `answer`; the number of requests it got.
async fn server(answer: &'static str) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    server_on("127.0.0.1", answer).await
}

/// [`server`] on another loopback address.
async fn server_on(
    address: &str,
    answer: &'static str,
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind((address, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer).await;
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    (port, seen)
}

const OK: &str = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
const REDIRECT: &str = "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:1/\r\n\
                        content-length: 0\r\nconnection: close\r\n\r\n";

/// Posts to `url` through `outbound` and waits for the outcome.
async fn deliver(outbound: &HttpOutbound, url: &str) -> Delivery {
    let (sender, outcome) = mpsc::channel();
    let post = OutboundPost::new(
        url,
        vec![("logout_token", "a.b.c".to_owned())],
        ClientId::new("rp").unwrap(),
    );
    outbound.post(
        post,
        Box::new(move |delivery| sender.send(delivery).unwrap()),
    );
    tokio::task::spawn_blocking(move || outcome.recv_timeout(Duration::from_secs(20)).unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_is_reached_only_when_a_test_allows_it() {
    let (port, seen) = server(OK).await;
    let allowed = HttpOutbound::for_tests(None).unwrap();
    let url = format!("http://127.0.0.1:{port}/backchannel");
    assert_eq!(deliver(&allowed, &url).await, Delivery::Delivered);
    let strict = HttpOutbound::new().unwrap();
    assert_eq!(deliver(&strict, &url).await, Delivery::Failed);
    // A name that resolves to loopback is refused too, https or not: the resolver answers no
    // address, so nothing connects.
    let by_name = format!("https://localhost:{port}/backchannel");
    assert_eq!(deliver(&strict, &by_name).await, Delivery::Failed);
    assert_eq!(
        seen.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the refused posts never reached the server"
    );
}

/// A throwaway root certificate (its key was never kept): something to trust.
const THROWAWAY_ROOT: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBwDCCAWegAwIBAgIUDz+86Frd0YaW9LkGEnMGNfKbNN4wCgYIKoZIzj0EAwIw\n\
NTEzMDEGA1UEAwwqZ3JhbnRvciB0ZXN0IHJvb3QgKHRocm93YXdheSwgbm8ga2V5\n\
IGtlcHQpMCAXDTI2MTIwNTEwNTExMFoYDzIxMjYxMTExMTA1MTEwWjA1MTMwMQYD\n\
VQQDDCpncmFudG9yIHRlc3Qgcm9vdCAodGhyb3dhd2F5LCBubyBrZXkga2VwdCkw\n\
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATG3LDy28klcU2G4eosQUOhNLFvaifh\n\
+cQ2+nMAqRDx9wyRoREMxBlG541ejgPjVwi3HY/CVJfm4uB5c4wj3Fgho1MwUTAd\n\
BgNVHQ4EFgQUDV9WMicyVXKBYZlN4o7DPU7fcjQwHwYDVR0jBBgwFoAUDV9WMicy\n\
VXKBYZlN4o7DPU7fcjQwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBE\n\
AiAhLLnD66CYMdDOh/xE65lyGXRYBxvzYys7GSroE4rBagIgAIXhS/40dt/YY5/c\n\
3qAYZGHynlcBIhe1nytlbZvCCW4=\n\
-----END CERTIFICATE-----\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extra_root_and_loopback_are_separate_settings() {
    let (port, seen) = server(OK).await;
    let url = format!("http://127.0.0.1:{port}/backchannel");
    let by_name = format!("https://localhost:{port}/backchannel");
    // A root trusted beside the platform's reaches no more addresses than before.
    let rooted = HttpOutbound::new()
        .unwrap()
        .extra_root(THROWAWAY_ROOT.as_bytes())
        .unwrap();
    assert_eq!(deliver(&rooted, &url).await, Delivery::Failed);
    assert_eq!(deliver(&rooted, &by_name).await, Delivery::Failed);
    let get = grantor::outbound::OutboundGet::new(&url, 1024, Duration::from_secs(5));
    assert_eq!(
        rooted.get(get).await.unwrap_err(),
        grantor::outbound::FetchError::Refused
    );
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    // Loopback is a setting of its own, with or without the root.
    let both = rooted.allow_loopback().unwrap();
    assert_eq!(deliver(&both, &url).await, Delivery::Delivered);
    let loopback = HttpOutbound::new().unwrap().allow_loopback().unwrap();
    assert_eq!(deliver(&loopback, &url).await, Delivery::Delivered);
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 2);
}

/// A loopback server on `address` that takes connections and never answers; how many it took.
async fn silent_server(address: &str) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind((address, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = seen.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    (port, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posts_in_flight_are_bounded_server_wide() {
    let (port, seen) = silent_server("127.0.0.1").await;
    let outbound = HttpOutbound::for_tests(None).unwrap();
    let url = format!("http://127.0.0.1:{port}/backchannel");
    let (sender, outcomes) = mpsc::channel();
    let extra = 5;
    for _ in 0..HttpOutbound::MAX_POSTS_IN_FLIGHT + extra {
        let sender = sender.clone();
        let post = OutboundPost::new(
            url.as_str(),
            vec![("logout_token", "a.b.c".to_owned())],
            ClientId::new("rp").unwrap(),
        );
        outbound.post(
            post,
            Box::new(move |delivery| sender.send(delivery).unwrap()),
        );
    }
    // Past the bound, a post fails at once; those in flight are still waiting for the server.
    let failed: Vec<Delivery> = tokio::task::spawn_blocking(move || {
        (0..extra)
            .map(|_| outcomes.recv_timeout(Duration::from_secs(1)).unwrap())
            .collect()
    })
    .await
    .unwrap();
    assert_eq!(failed, vec![Delivery::Failed; extra]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let connections = seen.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        connections <= HttpOutbound::MAX_POSTS_IN_FLIGHT,
        "{connections} connections"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_and_redirects_are_never_followed() {
    let outbound = HttpOutbound::for_tests(None).unwrap();
    for url in [
        "https://10.0.0.1/backchannel",
        "https://169.254.169.254/latest/meta-data",
        "https://[::ffff:192.168.0.1]/x",
        "ftp://example.com/x",
        "https://user:pass@example.com/x",
    ] {
        assert_eq!(deliver(&outbound, url).await, Delivery::Failed, "{url}");
    }
    // A 302 is not followed (and is no success).
    let (port, seen) = server(REDIRECT).await;
    let url = format!("http://127.0.0.1:{port}/backchannel");
    assert_eq!(deliver(&outbound, &url).await, Delivery::Failed);
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
}

mod fetching {
    use std::net::IpAddr;
    use std::sync::{Arc, Mutex};

    use grantor::outbound::{FetchError, NameResolver, OutboundGet};

    use super::*;

    const DOCUMENT: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                            cache-control: max-age=600\r\ncontent-length: 17\r\n\
                            connection: close\r\n\r\n{\"client_id\":\"x\"}";
    const NOT_FOUND: &str =
        "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

    fn get(url: &str) -> OutboundGet {
        OutboundGet::new(url, 5 * 1024, Duration::from_secs(5))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_document_is_fetched_with_its_cache_control_within_bounds() {
        let outbound = HttpOutbound::for_tests(None).unwrap();
        let (port, _) = server(DOCUMENT).await;
        let fetched = outbound
            .get(get(&format!("http://127.0.0.1:{port}/client")))
            .await
            .unwrap();
        assert_eq!(fetched.body, br#"{"client_id":"x"}"#);
        assert_eq!(fetched.cache_control.as_deref(), Some("max-age=600"));
        assert_eq!(fetched.content_type.as_deref(), Some("application/json"));
        // Past the byte bound, a redirect, another status.
        let small = OutboundGet::new(
            format!("http://127.0.0.1:{port}/client"),
            16,
            Duration::from_secs(5),
        );
        assert_eq!(outbound.get(small).await.unwrap_err(), FetchError::TooLarge);
        let (port, _) = server(REDIRECT).await;
        let url = format!("http://127.0.0.1:{port}/client");
        assert_eq!(
            outbound.get(get(&url)).await.unwrap_err(),
            FetchError::Redirected
        );
        let (port, _) = server(NOT_FOUND).await;
        let url = format!("http://127.0.0.1:{port}/client");
        assert_eq!(
            outbound.get(get(&url)).await.unwrap_err(),
            FetchError::Status(404)
        );
        // Without the test's allowance, loopback is refused before anything connects.
        let strict = HttpOutbound::new().unwrap();
        let (port, seen) = server(DOCUMENT).await;
        let url = format!("http://127.0.0.1:{port}/client");
        assert_eq!(
            strict.get(get(&url)).await.unwrap_err(),
            FetchError::Refused
        );
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_that_never_answers_times_out() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        let outbound = HttpOutbound::for_tests(None).unwrap();
        let slow = OutboundGet::new(
            format!("http://127.0.0.1:{port}/client"),
            5 * 1024,
            Duration::from_millis(300),
        );
        assert_eq!(outbound.get(slow).await.unwrap_err(), FetchError::Timeout);
    }

    /// Answers every name with `address`, recording the names asked.
    struct Fixed {
        address: IpAddr,
        asked: Mutex<Vec<String>>,
    }

    impl NameResolver for Fixed {
        fn resolve(
            &self,
            host: &str,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>
        {
            self.asked.lock().unwrap().push(host.to_owned());
            let address = self.address;
            Box::pin(async move { Ok(vec![address]) })
        }
    }

    /// Answers each name with the next of `answers` (the last one again when they run out),
    /// counting the lookups.
    struct Changing {
        answers: Vec<IpAddr>,
        asked: Mutex<Vec<String>>,
    }

    impl NameResolver for Changing {
        fn resolve(
            &self,
            host: &str,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>
        {
            let mut asked = self.asked.lock().unwrap();
            asked.push(host.to_owned());
            let answer = self.answers[(asked.len() - 1).min(self.answers.len() - 1)];
            Box::pin(async move { Ok(vec![answer]) })
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn any_number_of_names_for_one_server_hold_at_most_its_share_of_fetches() {
        // Wildcard DNS: every name of the attacker's domain is its one slow server.
        let (slow_port, slow_seen) = silent_server("127.0.0.1").await;
        let resolver = Arc::new(Fixed {
            address: "127.0.0.1".parse().unwrap(),
            asked: Mutex::new(Vec::new()),
        });
        let outbound = Arc::new(
            HttpOutbound::for_tests(None)
                .unwrap()
                .resolver(resolver)
                .unwrap(),
        );
        let names = 64;
        let tasks: Vec<_> = (0..names)
            .map(|n| {
                let outbound = Arc::clone(&outbound);
                let url = format!("https://n{n}.slow.example:{slow_port}/client.json");
                let get = OutboundGet::new(url, 5 * 1024, Duration::from_secs(2));
                tokio::spawn(async move { outbound.get(get).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        // Another server is reached at once meanwhile.
        let (port, _) = server_on("127.0.0.2", DOCUMENT).await;
        let started = std::time::Instant::now();
        let fetched = outbound
            .get(get(&format!("http://127.0.0.2:{port}/client")))
            .await;
        assert_eq!(fetched.unwrap().body, br#"{"client_id":"x"}"#);
        assert!(started.elapsed() < Duration::from_secs(1));
        let mut busy = 0;
        for task in tasks {
            match task.await.unwrap() {
                Err(FetchError::Busy) => busy += 1,
                Err(FetchError::Timeout) => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(busy, names - HttpOutbound::MAX_FETCHES_PER_DESTINATION);
        assert_eq!(
            slow_seen.load(std::sync::atomic::Ordering::SeqCst),
            HttpOutbound::MAX_FETCHES_PER_DESTINATION
        );
        // Their places are given back at the timeout.
        let (port, _) = server(DOCUMENT).await;
        let url = format!("https://again.slow.example:{port}/client");
        let answer = outbound.get(get(&url)).await.unwrap_err();
        assert_ne!(answer, FetchError::Busy, "{answer:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_fetch_connects_to_the_address_its_name_was_checked_at() {
        let (port, seen) = server(DOCUMENT).await;
        // A second lookup would name a private address: it is never made.
        let resolver = Arc::new(Changing {
            answers: vec!["127.0.0.1".parse().unwrap(), "10.0.0.1".parse().unwrap()],
            asked: Mutex::new(Vec::new()),
        });
        let outbound = HttpOutbound::for_tests(None)
            .unwrap()
            .resolver(resolver.clone())
            .unwrap();
        // http to a name is refused unless the name is localhost, so the answer is checked
        // through an https fetch, which the plain server cannot complete: it is reached.
        let url = format!("https://rebind.example:{port}/client");
        let answer = outbound.get(get(&url)).await.unwrap_err();
        assert_ne!(answer, FetchError::Refused);
        assert_eq!(*resolver.asked.lock().unwrap(), ["rebind.example"]);
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn names_resolving_to_special_addresses_are_refused_before_connecting() {
        for address in [
            "10.0.0.1",
            "169.254.169.254",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
        ] {
            let resolver = Arc::new(Fixed {
                address: address.parse().unwrap(),
                asked: Mutex::new(Vec::new()),
            });
            // Even a test's loopback allowance does not let these through.
            let outbound = HttpOutbound::for_tests(None)
                .unwrap()
                .resolver(resolver.clone())
                .unwrap();
            let fetched = outbound
                .get(get("https://client.example/metadata.json"))
                .await;
            assert_eq!(fetched.unwrap_err(), FetchError::Refused, "{address}");
            // Refused by the address check: the name was looked up, and no address given to
            // connect to.
            assert_eq!(
                *resolver.asked.lock().unwrap(),
                ["client.example"],
                "{address}"
            );
        }
    }
}
