//! Headless Chromium driven through chromedriver (WebDriver) with fantoccini, for the tests
//! that walk a demo's pages as a person would (`browser`, `host_app`): the tools, the driver as
//! a child process, a throwaway profile, a session, and the waits and screenshots they share.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`/usr/bin/chromium`, `/usr/bin/chromedriver`;
//! `GRANTOR_CHROMIUM` / `GRANTOR_CHROMEDRIVER` point elsewhere). Included by path beside `demo`
//! (`#[path = "demo/chromium.rs"] mod chromium;`), so that only the tests that drive a browser
//! build fantoccini.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::wd::TimeoutConfiguration;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;

/// How long any single wait (server banner, driver start, an element, a navigation) may take.
pub const WAIT: Duration = Duration::from_secs(10);

pub const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=900,800",
];

pub async fn open_session(driver: &ChromeDriver, chromium: &Path, profile: &Path) -> Client {
    let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|f| (*f).to_owned()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("browserName".into(), "chrome".into());
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({ "binary": chromium.display().to_string(), "args": args }),
    );
    let browser = tokio::time::timeout(
        Duration::from_secs(30),
        ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&driver.url),
    )
    .await
    .expect("chromedriver did not open a Chromium session within 30 s")
    .unwrap_or_else(|e| panic!("chromedriver could not start Chromium: {e}"));
    browser
        .update_timeouts(TimeoutConfiguration::new(
            Some(WAIT),
            Some(WAIT),
            Some(Duration::ZERO),
        ))
        .await
        .expect("set WebDriver timeouts");
    browser
}

/// Clicks a button and waits until the browser shows a new, fully loaded page (a marker set on
/// the old page's window is gone), so the next lookup cannot see the old page.
pub async fn click_to_new_page(browser: &Client, button: Locator<'_>, what: &str) {
    browser
        .execute("window.grantorOldPage = true;", Vec::new())
        .await
        .expect("mark the current page");
    browser
        .find(button)
        .await
        .unwrap_or_else(|e| panic!("no {what} button: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {what}: {e}"));
    let deadline = Instant::now() + WAIT;
    loop {
        // While the page changes the script may fail (the old document is gone); poll on.
        let fresh = browser
            .execute(
                "return !window.grantorOldPage && document.readyState === 'complete';",
                Vec::new(),
            )
            .await;
        if matches!(fresh, Ok(serde_json::Value::Bool(true))) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "clicking {what} did not load a new page within {WAIT:?} (last check: {fresh:?})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits for the browser to land on a URL starting with `prefix` and returns it.
pub async fn wait_for_url(browser: &Client, prefix: &str) -> url::Url {
    let deadline = Instant::now() + WAIT;
    loop {
        let url = browser.current_url().await.expect("current URL");
        if url.as_str().starts_with(prefix) {
            return url;
        }
        assert!(
            Instant::now() < deadline,
            "the browser did not reach {prefix} within {WAIT:?}; it is at {url}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub async fn text_of(browser: &Client, css: &str) -> String {
    browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css} element: {e}"))
        .text()
        .await
        .expect("element text")
}

pub async fn screenshot(browser: &Client, path: &Path) {
    let png = browser.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    std::fs::write(path, png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// The path of a required browser tool; a missing one fails the test with what to install.
pub fn tool(env: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(env).map_or_else(|| PathBuf::from(default), PathBuf::from);
    assert!(
        path.is_file(),
        "{} not found: this test needs Debian's chromium and chromium-driver \
         (`apt-get install -y --no-install-recommends chromium chromium-driver`, as .ci/run does), \
         or {env} set to the binary",
        path.display()
    );
    path
}

/// chromedriver as a child process on a free loopback port; killed on drop.
pub struct ChromeDriver {
    child: Child,
    url: String,
    log_path: PathBuf,
}

impl ChromeDriver {
    pub fn start(binary: &Path, out: &Path) -> Self {
        let port = crate::demo::free_port();
        let log_path = out.join("chromedriver.log");
        let child = Command::new(binary)
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log_path.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
        let mut driver = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log_path,
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + WAIT;
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = driver.child.try_wait() {
                panic!(
                    "chromedriver exited at start ({status}); see {}",
                    driver.log_path.display()
                );
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on {addr} within {WAIT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        driver
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        // chromedriver's /shutdown quits the browsers of any session still open (after a failed
        // assertion); killing chromedriver alone would leave Chromium running.
        if self.child.try_wait().ok().flatten().is_none() {
            let addr = self.url.trim_start_matches("http://");
            if let Ok(mut stream) = addr.parse().map_err(|_| ()).and_then(|a| {
                TcpStream::connect_timeout(&a, Duration::from_secs(1)).map_err(|_| ())
            }) {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = stream.write_all(
                    format!("GET /shutdown HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                        .as_bytes(),
                );
                let _ = stream.read_to_end(&mut Vec::new());
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("chromedriver log: {}", self.log_path.display());
        }
    }
}

/// A fresh, empty Chromium profile directory; removed on drop.
pub struct Profile(pub PathBuf);

impl Profile {
    pub fn new(out: &Path) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = out.join(format!("profile-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the Chromium profile dir");
        Self(dir)
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
