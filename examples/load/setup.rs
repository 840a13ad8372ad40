//! What the flows need made before their timed window: tokens, refresh chains and codes,
//! over the workers' own connections, all at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hyper::Method;
use hyper::header::HeaderValue;

use crate::flows::{ALICE, CALLBACK, Worker, password_form};
use crate::http::{Conn, form};

/// A client-credentials access token of demo-client (audience: the demo API).
pub async fn client_credentials_token(
    conn: &mut Conn,
    demo: &HeaderValue,
) -> Result<String, String> {
    let body = form(&[("grant_type", "client_credentials")]);
    let request = conn.target().request(
        Method::POST,
        "/api/oauth/token",
        Some(demo),
        Some(body),
        &[],
    )?;
    let reply = conn.send(request).await?;
    match reply.json()["access_token"].as_str() {
        Some(token) => Ok(token.to_owned()),
        None => Err(format!("client credentials: {}", reply.describe())),
    }
}

/// Alice's access and refresh tokens from the password grant (demo-client, scope `profile`).
pub async fn password_grant(
    conn: &mut Conn,
    demo: &HeaderValue,
) -> Result<(String, String), String> {
    let request = conn.target().request(
        Method::POST,
        "/api/oauth/token",
        Some(demo),
        Some(password_form()),
        &[],
    )?;
    let reply = conn.send(request).await?;
    let json = reply.json();
    match (
        json["access_token"].as_str(),
        json["refresh_token"].as_str(),
    ) {
        (Some(access), Some(refresh)) => Ok((access.to_owned(), refresh.to_owned())),
        _ => Err(format!("password grant: {}", reply.describe())),
    }
}

/// The confidential client whose codes `code_exchange` redeems.
pub struct Client {
    pub id: String,
    pub secret: String,
    /// How the flow's note names it.
    pub described: String,
}

impl Client {
    /// The seeded plain-client: no approval step, ID tokens signed with the server's default
    /// (RS256).
    pub fn plain() -> Self {
        Self {
            id: "plain-client".to_owned(),
            secret: "plain-secret".to_owned(),
            described: "plain-client (ID tokens RS256)".to_owned(),
        }
    }
}

/// A client registered (RFC 7591) for the authorization-code grant whose ID tokens are
/// signed with `alg`: a self-registered client, so its first sign-in asks Alice's approval.
pub async fn registered_client(conn: &mut Conn, alg: &str) -> Result<Client, String> {
    let metadata = serde_json::json!({
        "client_name": format!("load ({alg} ID tokens)"),
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_basic",
        "id_token_signed_response_alg": alg,
    });
    let mut request = conn.target().request(
        Method::POST,
        "/api/oauth/register",
        None,
        None,
        &[("content-type", "application/json")],
    )?;
    *request.body_mut() = metadata.to_string();
    let reply = conn.send(request).await?;
    let json = reply.json();
    match (json["client_id"].as_str(), json["client_secret"].as_str()) {
        (Some(id), Some(secret)) => Ok(Client {
            id: id.to_owned(),
            secret: secret.to_owned(),
            described: format!("a registered client (ID tokens {alg})"),
        }),
        _ => Err(format!("registration: {}", reply.describe())),
    }
}

/// Alice signed in once the way a browser does (the authorization URL, then the sign-in form
/// with its CSRF token and the cookie the page set), asking for `scope` for `client`, and the
/// approval page approved when the client has one: the cookies of her sign-on session, and the
/// code the sign-in gave the client.
pub async fn signed_in(
    conn: &mut Conn,
    client: &str,
    scope: &str,
) -> Result<(String, String), String> {
    let page = conn
        .send(conn.target().request(
            Method::GET,
            &authorize_path(client, scope),
            None,
            None,
            &[],
        )?)
        .await?;
    let (action, csrf) = form_on(&page, "sign-in")?;
    let cookies = cookies_set(&page.headers).join("; ");
    let body = form(&[
        ("csrf", &csrf),
        ("username", ALICE.0),
        ("password", ALICE.1),
    ]);
    let request = conn.target().request(
        Method::POST,
        &action,
        None,
        Some(body),
        &[("cookie", &cookies)],
    )?;
    let mut reply = conn.send(request).await?;
    // The sign-on session's cookie comes with the answer to the form.
    let session = [cookies_set(&reply.headers), vec![cookies]]
        .concat()
        .join("; ");
    if reply.status == 200 {
        // The approval page: approved once, then remembered for this client and scope.
        let (action, csrf) = form_on(&reply, "approval")?;
        let body = form(&[("csrf", &csrf), ("decision", "approve")]);
        let request = conn.target().request(
            Method::POST,
            &action,
            None,
            Some(body),
            &[("cookie", &session)],
        )?;
        reply = conn.send(request).await?;
    }
    let code = code_in(&reply)?;
    Ok((session, code))
}

/// The action (a path under the base URL) and CSRF token of the form on the HTML page `page`.
fn form_on(page: &crate::http::Reply, what: &str) -> Result<(String, String), String> {
    let html = String::from_utf8_lossy(&page.body);
    let attribute = |name: &str| {
        html.split(&format!("name=\"{name}\" value=\""))
            .nth(1)
            .or_else(|| html.split(&format!("{name}=\"")).nth(1))
            .and_then(|rest| rest.split('"').next())
            .map(|value| value.replace("&amp;", "&"))
    };
    let csrf = attribute("csrf")
        .ok_or_else(|| format!("no CSRF token on the {what} page: {}", page.describe()))?;
    let action = attribute("action")
        .ok_or_else(|| format!("no form on the {what} page: {}", page.describe()))?;
    // The action is absolute or a path; the request wants the path under the base.
    let path = match url::Url::parse(&action) {
        Ok(url) => match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        },
        Err(_) => action,
    };
    Ok((path, csrf))
}

/// A code for `client` in Alice's sign-on session (`session`, the cookies [`signed_in`] got):
/// the authorization URL alone, answered with the code at once, as single sign-on does for a
/// client that needs no approval (or whose approval is remembered). No password is checked, so
/// codes are cheap to make.
pub async fn code_in_session(
    conn: &mut Conn,
    client: &str,
    scope: &str,
    session: &str,
) -> Result<String, String> {
    let request = conn.target().request(
        Method::GET,
        &authorize_path(client, scope),
        None,
        None,
        &[("cookie", session)],
    )?;
    code_in(&conn.send(request).await?)
}

fn authorize_path(client: &str, scope: &str) -> String {
    let query = form(&[
        ("response_type", "code"),
        ("client_id", client),
        ("redirect_uri", CALLBACK),
        ("scope", scope),
        ("nonce", "load-nonce"),
    ]);
    format!("/api/oauth/authorize?{query}")
}

/// Every cookie an answer set, as `name=value`.
fn cookies_set(headers: &hyper::HeaderMap) -> Vec<String> {
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| value.split(';').next())
        .map(str::to_owned)
        .collect()
}

/// The code in a 303 answer's `Location`.
fn code_in(reply: &crate::http::Reply) -> Result<String, String> {
    let location = reply
        .headers
        .get("location")
        .and_then(|value| value.to_str().ok())
        .filter(|_| reply.status == 303)
        .ok_or_else(|| format!("no redirect with a code: {}", reply.describe()))?;
    let url = url::Url::parse(location).map_err(|e| format!("bad Location {location}: {e}"))?;
    url.query_pairs()
        .find(|(name, _)| name == "code")
        .map(|(_, code)| code.into_owned())
        .ok_or_else(|| format!("no code in {location}"))
}

/// Runs `make` on every connection at once (each task owns its connection and hands it back);
/// one answer per connection, in order.
pub async fn join_all<T, F, Fut>(workers: &mut [Worker], make: F) -> Vec<Result<T, String>>
where
    F: Fn(Conn) -> Fut,
    Fut: Future<Output = (Conn, Result<T, String>)> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = workers
        .iter_mut()
        .map(|worker| {
            let spare = Conn::new(worker.conn.target().clone());
            tokio::spawn(make(std::mem::replace(&mut worker.conn, spare)))
        })
        .collect();
    let mut out = Vec::with_capacity(handles.len());
    for (worker, handle) in workers.iter_mut().zip(handles) {
        match handle.await {
            Ok((conn, answer)) => {
                worker.conn = conn;
                out.push(answer);
            }
            Err(error) => out.push(Err(format!("a setup task failed: {error}"))),
        }
    }
    out
}

/// Makes up to `cap` one-use items with `make`, over every connection at once, for at most
/// `time`. Fails only if nothing could be made.
pub async fn fill<F, Fut>(
    workers: &mut [Worker],
    cap: usize,
    time: Duration,
    make: F,
) -> Result<Vec<String>, String>
where
    F: Fn(Conn) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = (Conn, Result<String, String>)> + Send + 'static,
{
    let deadline = Instant::now() + time;
    let claimed = Arc::new(AtomicUsize::new(0));
    let batches = join_all(workers, |conn| {
        let claimed = Arc::clone(&claimed);
        let make = make.clone();
        async move {
            let mut conn = conn;
            let mut made = Vec::new();
            let mut failures = 0;
            let mut last_error = None;
            // A server that keeps refusing is not worth the whole time budget.
            while failures < 20
                && Instant::now() < deadline
                && claimed.fetch_add(1, Ordering::Relaxed) < cap
            {
                let (back, item) = make(conn).await;
                conn = back;
                match item {
                    Ok(item) => made.push(item),
                    Err(error) => {
                        failures += 1;
                        last_error = Some(error);
                    }
                }
            }
            let answer = match last_error {
                Some(error) if made.is_empty() => Err(error),
                _ => Ok(made),
            };
            (conn, answer)
        }
    })
    .await;
    let mut pool = Vec::new();
    let mut error = None;
    for batch in batches {
        match batch {
            Ok(items) => pool.extend(items),
            Err(e) => error = Some(e),
        }
    }
    match error {
        Some(error) if pool.is_empty() => Err(error),
        _ => Ok(pool),
    }
}
