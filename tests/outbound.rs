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
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
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
