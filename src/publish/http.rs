//! The forge HTTP client (blocking `ureq` over rustls): JSON requests with timeouts, bounded
//! retries with backoff on 5xx, transport failures and rate limits (`Retry-After`, GitHub's
//! `x-ratelimit-*` and secondary limits, GitLab's 429), pagination by `Link` headers, and
//! the dry-run mode that prints each request as a JSON line instead of writing.
//!
//! The token lives only in the auth header of each request: it is never printed, logged or
//! written, and every error text is scrubbed of it.

use super::error::PublishError;
use serde_json::{json, Value};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use ureq::http::HeaderMap;

/// HTTP methods: ureq's (the `http` crate's); arev sends GET, POST, PATCH and PUT.
pub use ureq::http::Method;

/// How hard to try.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Tries per request, the first included.
    pub attempts: u32,
    /// The first backoff after a 5xx or transport failure; doubled each time.
    pub backoff: Duration,
    /// The longest arev waits for a rate limit to lift (longer: a clear error).
    pub max_wait: Duration,
    /// Per-request timeout (connect + send + answer).
    pub timeout: Duration,
    /// The whole publish, every request, retry and wait included: a slow or hostile API
    /// cannot hold a CI job longer than this.
    pub total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
            timeout: Duration::from_secs(30),
            total: DEFAULT_TOTAL,
        }
    }
}

/// The default bound of a whole publish (`AREV_PUBLISH_TIMEOUT` seconds overrides it).
pub const DEFAULT_TOTAL: Duration = Duration::from_secs(600);

/// The largest answer arev reads (ureq's own default cap, named so an answer over it says
/// so instead of being read as empty).
pub const MAX_ANSWER_BYTES: u64 = 10 * 1024 * 1024;

/// Same-origin redirects followed per request (another origin is never followed).
const MAX_REDIRECTS: u32 = 5;

/// The auth header; its value never appears in Debug output or in an error.
pub struct Secret {
    pub header: &'static str,
    /// `<prefix><token>`, as sent.
    value: String,
    /// The bare token, to scrub from texts.
    token: String,
}

impl Secret {
    /// `header: <prefix><token>` (e.g. `authorization: Bearer <token>`).
    pub fn new(header: &'static str, prefix: &str, token: String) -> Self {
        Self {
            header,
            value: format!("{prefix}{token}"),
            token,
        }
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ***", self.header)
    }
}

/// A client for one forge API base URL.
pub struct Api {
    agent: ureq::Agent,
    base: String,
    origin: String,
    auth: Secret,
    /// Fixed headers (Accept, API version), not secret.
    headers: Vec<(&'static str, String)>,
    policy: RetryPolicy,
    dry_run: bool,
    /// When the whole publish must be over (`policy.total` after the client was made).
    deadline: Instant,
}

/// What a request printed in dry-run mode looks like: one JSON line.
pub fn dry_run_line(method: &Method, path: &str, body: Option<&Value>) -> String {
    let line = json!({"method": method.as_str(), "path": path, "body": body});
    crate::output::json_string(&line, false).unwrap_or_default()
}

/// `scheme://host[:port]` of a URL.
pub(super) fn origin(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

/// The `rel="next"` URL of a `Link` header.
pub fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        let url = url.trim().strip_prefix('<')?.strip_suffix('>')?;
        is_next.then(|| url.to_string())
    })
}

/// How long a throttled answer asks to wait, if it is a rate limit at all: `Retry-After`
/// (seconds), GitHub's exhausted `x-ratelimit-remaining` until `x-ratelimit-reset`, GitLab's
/// `RateLimit-Reset`, or one minute for a GitHub secondary limit that names no time.
pub fn rate_limit_wait(status: u16, headers: &HeaderMap, body: &str, now_s: u64) -> Option<u64> {
    let h = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let num = |name: &str| h(name).and_then(|v| v.parse::<u64>().ok());
    let limited_403 = status == 403
        && (h("retry-after").is_some()
            || h("x-ratelimit-remaining") == Some("0")
            || body.to_ascii_lowercase().contains("rate limit"));
    if status != 429 && !limited_403 {
        return None;
    }
    if let Some(s) = num("retry-after") {
        return Some(s);
    }
    if let Some(reset) = num("x-ratelimit-reset").or_else(|| num("ratelimit-reset")) {
        if h("x-ratelimit-remaining") == Some("0") || status == 429 {
            return Some(reset.saturating_sub(now_s) + 1);
        }
    }
    // GitHub's advice for a secondary limit without headers: wait at least a minute.
    Some(60)
}

/// A forge error body → one short line (GitHub `message` + `errors`, GitLab `message`/`error`).
fn error_message(body: &str) -> String {
    let text = match serde_json::from_str::<Value>(body) {
        Ok(v) => {
            let mut parts = vec![];
            for key in ["message", "error", "error_description"] {
                match v.get(key) {
                    Some(Value::String(s)) => parts.push(s.clone()),
                    Some(other) if !other.is_null() => parts.push(other.to_string()),
                    _ => {}
                }
            }
            if let Some(e) = v.get("errors").filter(|e| !e.is_null()) {
                parts.push(e.to_string());
            }
            if parts.is_empty() {
                body.to_string()
            } else {
                parts.join(": ")
            }
        }
        Err(_) => body.to_string(),
    };
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = one_line.chars().take(300).collect();
    if one_line.chars().count() > 300 {
        short.push('…');
    }
    if short.is_empty() {
        "(empty answer)".into()
    } else {
        short
    }
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A request's outcome before the retry decision.
enum Outcome {
    Done(Value, Option<String>),
    Retry { wait: Duration, error: PublishError },
    Fail(PublishError),
}

impl Api {
    /// A client for `base` (no trailing slash needed) with `auth` and fixed `headers`.
    pub fn new(
        base: &str,
        auth: Secret,
        headers: Vec<(&'static str, String)>,
        policy: RetryPolicy,
        dry_run: bool,
    ) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // Redirects are followed here, same origin only: the credential header never
            // goes to another origin (whatever its name: `Authorization`, `PRIVATE-TOKEN`).
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(policy.timeout))
            .user_agent(format!("arev/{}", env!("CARGO_PKG_VERSION")))
            .build();
        let base = base.trim_end_matches('/').to_string();
        Self {
            agent: ureq::Agent::new_with_config(config),
            origin: origin(&base).to_string(),
            base,
            auth,
            headers,
            policy,
            dry_run,
            deadline: Instant::now() + policy.total,
        }
    }

    /// The path of `url` relative to the API base (for messages and dry-run lines).
    fn display_path(&self, url: &str) -> String {
        url.strip_prefix(&self.base)
            .or_else(|| url.strip_prefix(&self.origin))
            .unwrap_or(url)
            .to_string()
    }

    /// Remove the token from a text (defence in depth: no answer should hold it).
    fn scrub(&self, s: &str) -> String {
        if self.auth.token.len() >= 4 {
            s.replace(&self.auth.token, "***")
        } else {
            s.to_string()
        }
    }

    /// GET one JSON document.
    pub fn get(&self, path: &str) -> Result<Value, PublishError> {
        self.get_capped(path, MAX_ANSWER_BYTES)
    }

    /// GET one JSON document of at most `limit` bytes (a larger one is
    /// [`PublishError::TooLarge`]; `limit` above the client's own cap is that cap).
    pub fn get_capped(&self, path: &str, limit: u64) -> Result<Value, PublishError> {
        let url = format!("{}{path}", self.base);
        self.request(&Method::GET, &url, None, limit.min(MAX_ANSWER_BYTES))
            .map(|(v, _)| v)
    }

    /// GET every page of a JSON array, following `Link: <…>; rel="next"` (same origin only,
    /// at most 100 pages).
    pub fn get_all(&self, path: &str) -> Result<Vec<Value>, PublishError> {
        let mut url = format!("{}{path}", self.base);
        let mut out = vec![];
        for _ in 0..100 {
            let (page, next) = self.request(&Method::GET, &url, None, MAX_ANSWER_BYTES)?;
            match page {
                Value::Array(items) => out.extend(items),
                other => {
                    return Err(PublishError::BadAnswer {
                        method: Method::GET,
                        path: self.display_path(&url),
                        message: format!(
                            "expected a JSON array, got {}",
                            other.to_string().chars().take(80).collect::<String>()
                        ),
                    })
                }
            }
            match next {
                Some(n) if origin(&n) == self.origin => url = n,
                Some(n) => {
                    return Err(PublishError::BadAnswer {
                        method: Method::GET,
                        path: self.display_path(&url),
                        message: format!(
                        "the next page is on another host ({}); not following it with the token",
                        origin(&n)
                    ),
                    })
                }
                None => return Ok(out),
            }
        }
        Err(PublishError::BadAnswer {
            method: Method::GET,
            path: path.to_string(),
            message: "more than 100 pages".into(),
        })
    }

    /// A read that is a POST (a GraphQL query) to `url` on the API's own origin: sent in
    /// dry-run mode too. Another origin is refused (the token never goes there).
    pub fn post_to(&self, url: &str, body: &Value) -> Result<Value, PublishError> {
        if origin(url) != self.origin {
            return Err(PublishError::BadSetting(format!(
                "{} is not on the API's origin {}; not sending the token there",
                crate::output::inert_line(url),
                self.origin
            )));
        }
        self.request(&Method::POST, url, Some(body), MAX_ANSWER_BYTES)
            .map(|(v, _)| v)
    }

    /// A write that is a POST to `url` on the API's own origin (a GraphQL mutation); in
    /// dry-run mode only printed (→ null). Another origin is refused.
    pub fn write_to(&self, url: &str, body: &Value) -> Result<Value, PublishError> {
        if self.dry_run {
            crate::output::report(&dry_run_line(
                &Method::POST,
                &self.display_path(url),
                Some(body),
            ));
            return Ok(Value::Null);
        }
        self.post_to(url, body)
    }

    /// GET the first `pages` pages of a JSON array at most (a bound on what a busy pull
    /// request costs; the rest is not read).
    pub fn get_pages(&self, path: &str, pages: usize) -> Result<Vec<Value>, PublishError> {
        let mut url = format!("{}{path}", self.base);
        let mut out = vec![];
        for _ in 0..pages {
            let (page, next) = self.request(&Method::GET, &url, None, MAX_ANSWER_BYTES)?;
            match page {
                Value::Array(items) => out.extend(items),
                _ => {
                    return Err(PublishError::BadAnswer {
                        method: Method::GET,
                        path: self.display_path(&url),
                        message: "expected a JSON array".into(),
                    })
                }
            }
            match next {
                Some(n) if origin(&n) == self.origin => url = n,
                _ => break,
            }
        }
        Ok(out)
    }

    /// A write (POST, PATCH, PUT) with a JSON body; in dry-run mode only printed (→ null).
    pub fn write(&self, method: Method, path: &str, body: &Value) -> Result<Value, PublishError> {
        if self.dry_run {
            crate::output::report(&dry_run_line(&method, path, Some(body)));
            return Ok(Value::Null);
        }
        let url = format!("{}{path}", self.base);
        self.request(&method, &url, Some(body), MAX_ANSWER_BYTES)
            .map(|(v, _)| v)
    }

    /// One request with retries → (JSON body of at most `limit` bytes, next-page URL). Every
    /// attempt and wait stays inside the whole publish's time bound.
    fn request(
        &self,
        method: &Method,
        url: &str,
        body: Option<&Value>,
        limit: u64,
    ) -> Result<(Value, Option<String>), PublishError> {
        let path = self.display_path(url);
        if self.dry_run {
            crate::output::report(&dry_run_line(method, &path, body));
        }
        let payload = body.map(Value::to_string);
        let mut backoff = self.policy.backoff;
        let mut attempt = 1;
        loop {
            let out_of_time = || PublishError::OutOfTime {
                method: method.clone(),
                path: path.clone(),
                total_s: self.policy.total.as_secs(),
            };
            let Some(left) = self.deadline.checked_duration_since(Instant::now()) else {
                return Err(out_of_time());
            };
            let outcome = self.once(method, url, &path, payload.as_deref(), left, limit);
            match outcome {
                Outcome::Done(v, next) => return Ok((v, next)),
                Outcome::Fail(e) => return Err(e),
                Outcome::Retry { wait, error } => {
                    if Instant::now() >= self.deadline {
                        return Err(out_of_time());
                    }
                    if attempt >= self.policy.attempts {
                        return Err(error);
                    }
                    let wait = if wait.is_zero() {
                        let w = backoff;
                        backoff *= 2;
                        w
                    } else {
                        wait
                    };
                    if Instant::now() + wait >= self.deadline {
                        return Err(out_of_time());
                    }
                    crate::output::note(&format!(
                        "{error}; retrying in {} ms (attempt {}/{})",
                        wait.as_millis(),
                        attempt + 1,
                        self.policy.attempts
                    ));
                    std::thread::sleep(wait);
                    attempt += 1;
                }
            }
        }
    }

    /// Send one request, following same-origin redirects (the method kept only for 307 and
    /// 308; a write is never turned into a GET). A redirect to another origin is refused:
    /// the credential header is never sent there.
    fn send(
        &self,
        method: &Method,
        url: &str,
        path: &str,
        body: Option<&str>,
        left: Duration,
    ) -> Result<ureq::http::Response<ureq::Body>, Outcome> {
        let mut url = url.to_string();
        for _ in 0..=MAX_REDIRECTS {
            let timeout = Some(self.policy.timeout.min(left));
            let result = if *method == Method::GET {
                self.with_headers(self.agent.get(&url))
                    .config()
                    .timeout_global(timeout)
                    .build()
                    .call()
            } else {
                let req = if *method == Method::POST {
                    self.agent.post(&url)
                } else if *method == Method::PATCH {
                    self.agent.patch(&url)
                } else {
                    self.agent.put(&url)
                };
                self.with_headers(req)
                    .header("content-type", "application/json")
                    .config()
                    .timeout_global(timeout)
                    .build()
                    .send(body.unwrap_or("{}"))
            };
            let resp = match result {
                Ok(r) => r,
                Err(e) => return Err(self.unsent(method, path, &e)),
            };
            let status = resp.status().as_u16();
            if !matches!(status, 301 | 302 | 303 | 307 | 308) {
                return Ok(resp);
            }
            let refuse = |message: String| {
                Outcome::Fail(PublishError::BadAnswer {
                    method: method.clone(),
                    path: path.to_string(),
                    message,
                })
            };
            let location = resp
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let target = if location.starts_with('/') && !location.starts_with("//") {
                format!("{}{location}", self.origin)
            } else {
                location.to_string()
            };
            if origin(&target) != self.origin || !target.contains("://") {
                return Err(refuse(format!(
                    "HTTP {status} redirects to another origin ({}); not following it with the token",
                    crate::output::inert(origin(&target))
                )));
            }
            if *method != Method::GET && !matches!(status, 307 | 308) {
                return Err(refuse(format!(
                    "HTTP {status} redirects a {method} elsewhere; not repeated as another method"
                )));
            }
            url = target;
        }
        Err(Outcome::Fail(PublishError::BadAnswer {
            method: method.clone(),
            path: path.to_string(),
            message: format!("more than {MAX_REDIRECTS} redirects"),
        }))
    }

    fn once(
        &self,
        method: &Method,
        url: &str,
        path: &str,
        body: Option<&str>,
        left: Duration,
        limit: u64,
    ) -> Outcome {
        let mut resp = match self.send(method, url, path, body, left) {
            Ok(r) => r,
            Err(outcome) => return outcome,
        };
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = match resp
            .body_mut()
            .with_config()
            .limit(limit)
            .lossy_utf8(true)
            .read_to_string()
        {
            Ok(t) => t,
            Err(ureq::Error::BodyExceedsLimit(_)) => {
                return Outcome::Fail(PublishError::TooLarge {
                    method: method.clone(),
                    path: path.to_string(),
                    limit_mib: limit >> 20,
                })
            }
            Err(e) => return self.unsent(method, path, &e),
        };
        if (200..300).contains(&status) {
            return answered(method, path, &headers, &text);
        }
        self.refused(method, path, status, &headers, &text)
    }

    /// A request that got no answer: retried when it is a read, or a write that certainly
    /// never reached the server.
    fn unsent(&self, method: &Method, path: &str, e: &ureq::Error) -> Outcome {
        let error = PublishError::Transport {
            method: method.clone(),
            path: path.to_string(),
            message: self.scrub(&e.to_string()),
        };
        // A write is repeated only when it certainly never reached the server.
        let never_sent = matches!(
            e,
            ureq::Error::ConnectionFailed
                | ureq::Error::HostNotFound
                | ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve)
        );
        if *method == Method::GET || never_sent {
            Outcome::Retry {
                wait: Duration::ZERO,
                error,
            }
        } else {
            Outcome::Fail(error)
        }
    }

    /// A non-2xx answer: a rate limit waited out (within the policy's longest wait), a
    /// server error retried, anything else a failure.
    fn refused(
        &self,
        m: &Method,
        path: &str,
        status: u16,
        headers: &HeaderMap,
        text: &str,
    ) -> Outcome {
        let message = self.scrub(&error_message(text));
        if let Some(wait_s) = rate_limit_wait(status, headers, text, now_s()) {
            if Duration::from_secs(wait_s) > self.policy.max_wait {
                return Outcome::Fail(PublishError::RateLimited {
                    method: m.clone(),
                    path: path.to_string(),
                    status,
                    wait_s,
                    max_s: self.policy.max_wait.as_secs(),
                });
            }
            return Outcome::Retry {
                // At least a moment, so that `Retry-After: 0` is not a busy loop.
                wait: Duration::from_secs(wait_s).max(Duration::from_millis(100)),
                error: PublishError::Http {
                    method: m.clone(),
                    path: path.to_string(),
                    status,
                    message,
                },
            };
        }
        let error = PublishError::Http {
            method: m.clone(),
            path: path.to_string(),
            status,
            message,
        };
        if status >= 500 {
            let wait = headers
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map_or(Duration::ZERO, Duration::from_secs);
            return if wait > self.policy.max_wait {
                Outcome::Fail(error)
            } else {
                Outcome::Retry { wait, error }
            };
        }
        Outcome::Fail(error)
    }

    fn with_headers<B>(&self, mut req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        for (k, v) in &self.headers {
            req = req.header(*k, v.as_str());
        }
        req.header(self.auth.header, self.auth.value.as_str())
    }
}

/// A 2xx answer: its JSON body (null when empty) and the next page's URL, if any.
fn answered(m: &Method, path: &str, headers: &HeaderMap, text: &str) -> Outcome {
    let next = headers
        .get("link")
        .and_then(|v| v.to_str().ok())
        .and_then(next_link);
    let value = if text.trim().is_empty() {
        Value::Null
    } else {
        match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                return Outcome::Fail(PublishError::BadAnswer {
                    method: m.clone(),
                    path: path.to_string(),
                    message: format!("not JSON ({e})"),
                })
            }
        }
    };
    Outcome::Done(value, next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ureq::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn next_link_finds_rel_next_only() {
        let link = "<https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=2>; rel=\"next\", <https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=5>; rel=\"last\"";
        assert_eq!(
            next_link(link).as_deref(),
            Some("https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=2")
        );
        assert_eq!(
            next_link("<https://x/a?page=1>; rel=\"prev\", <https://x/a?page=9>; rel=\"last\""),
            None
        );
        assert_eq!(next_link(""), None);
        assert_eq!(
            origin("http://127.0.0.1:8080/api/v3/x"),
            "http://127.0.0.1:8080"
        );
        assert_eq!(origin("https://h"), "https://h");
    }

    #[test]
    fn rate_limits_are_told_apart_from_plain_errors() {
        let none = headers(&[]);
        assert_eq!(
            rate_limit_wait(429, &headers(&[("retry-after", "3")]), "", 0),
            Some(3)
        );
        assert_eq!(
            rate_limit_wait(403, &headers(&[("retry-after", "2")]), "", 0),
            Some(2)
        );
        let primary = headers(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1010"),
        ]);
        assert_eq!(rate_limit_wait(403, &primary, "", 1000), Some(11));
        assert_eq!(
            rate_limit_wait(
                403,
                &none,
                "{\"message\":\"You have exceeded a secondary rate limit\"}",
                0
            ),
            Some(60)
        );
        // A permission error is not a rate limit (a fork's read-only token).
        assert_eq!(
            rate_limit_wait(
                403,
                &none,
                "{\"message\":\"Resource not accessible by integration\"}",
                0
            ),
            None
        );
        assert_eq!(
            rate_limit_wait(500, &headers(&[("retry-after", "1")]), "", 0),
            None
        );
        assert_eq!(
            rate_limit_wait(429, &headers(&[("ratelimit-reset", "105")]), "", 100),
            Some(6)
        );
    }

    #[test]
    fn error_messages_are_one_short_line() {
        assert_eq!(
            error_message(
                "{\"message\":\"Validation Failed\",\"errors\":[\"Line could not be resolved\"]}"
            ),
            "Validation Failed: [\"Line could not be resolved\"]"
        );
        assert_eq!(
            error_message("{\"message\":\"401 Unauthorized\"}"),
            "401 Unauthorized"
        );
        assert_eq!(
            error_message("<html>\n bad\n gateway</html>"),
            "<html> bad gateway</html>"
        );
        assert_eq!(error_message(""), "(empty answer)");
        assert!(error_message(&"x".repeat(1000)).ends_with('…'));
    }

    #[test]
    fn the_token_is_scrubbed_and_hidden_from_debug() {
        let api = Api::new(
            "http://127.0.0.1:1/api",
            Secret::new("authorization", "Bearer ", "ghs_secret123".into()),
            vec![],
            RetryPolicy::default(),
            false,
        );
        assert_eq!(
            api.scrub("bad Bearer ghs_secret123 here"),
            "bad Bearer *** here"
        );
        assert_eq!(format!("{:?}", api.auth), "authorization: ***");
        assert_eq!(
            api.display_path("http://127.0.0.1:1/api/repos/x"),
            "/repos/x"
        );
        assert_eq!(
            api.display_path("http://127.0.0.1:1/repositories/1"),
            "/repositories/1"
        );
    }
}
