//! The connection: endpoints, options, failover, authentication, one JSON call.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{quote, quote_bytes, Error};
use crate::json;

/// Largest unary answer read, in bytes. etcd caps a request at 1.5 MiB by default; a range over
/// a big prefix can be larger, but an answer past this is taken as hostile rather than buffered.
pub const MAX_RESPONSE_BYTES: u64 = 64 << 20;

/// How to reach etcd: credentials, TLS and timeouts. Built with [`Options::new`] and the
/// chained setters; cheap to clone.
#[derive(Clone, PartialEq, Eq)]
pub struct Options {
    pub(crate) credentials: Option<(String, String)>,
    pub(crate) ca_file: Option<PathBuf>,
    pub(crate) connect_timeout: Duration,
    pub(crate) request_timeout: Duration,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The password never reaches a log line.
        f.debug_struct("Options")
            .field("user", &self.credentials.as_ref().map(|(u, _)| u))
            .field("ca_file", &self.ca_file)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

impl Options {
    /// No credentials, plain http, a 2 s connect timeout and a 5 s request timeout per endpoint:
    /// with one endpoint down, a call fails within about 5 s; with `n` endpoints, within `n`
    /// times the request timeout.
    pub fn new() -> Options {
        Options {
            credentials: None,
            ca_file: None,
            connect_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(5),
        }
    }

    /// Authenticate as `user` (etcd's `/v3/auth/authenticate`) and send the token with every
    /// call; a token that expired is renewed once per call. Without this, a store with auth on
    /// answers [`Error::AuthRequired`].
    pub fn credentials(mut self, user: impl Into<String>, password: impl Into<String>) -> Options {
        self.credentials = Some((user.into(), password.into()));
        self
    }

    /// Use https, verifying the server against the PEM certificates in `path` (endpoints given as
    /// `HOST:PORT` become `https://HOST:PORT`). Needs the `tls` feature; without it
    /// [`Client::new`] returns [`Error::Tls`].
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Options {
        self.ca_file = Some(path.into());
        self
    }

    /// Time allowed to open a TCP (and TLS) connection to one endpoint before trying the next.
    pub fn connect_timeout(mut self, timeout: Duration) -> Options {
        self.connect_timeout = timeout;
        self
    }

    /// Time allowed for one call to one endpoint, connection included.
    pub fn request_timeout(mut self, timeout: Duration) -> Options {
        self.request_timeout = timeout;
        self
    }
}

/// One parsed endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// As the user gave it, for messages.
    pub(crate) name: String,
    /// `http://host:port` or `https://host:port`.
    pub(crate) base: String,
}

/// Whether a call may be sent again to another endpoint after the request went out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Reads: any transport failure moves on to the next endpoint.
    Read,
    /// Writes: only a failure to connect moves on (nothing was sent); after the request went
    /// out, the outcome is unknown and the error says so.
    Write,
}

/// A transport failure on one endpoint.
pub(crate) enum Failure {
    /// Nothing was sent.
    Connect(String),
    /// The request went out and the answer did not come in time.
    Timeout,
    /// The request went out and the connection broke.
    Broken(String),
    /// An answer that is an error in itself.
    Answer(Error),
}

/// A synchronous etcd v3 client over the JSON gateway. Cheap to clone (an `Arc`); `Send + Sync`,
/// so one client serves every thread. Calls block the calling thread for at most the
/// [`Options`] timeouts per endpoint.
#[derive(Debug, Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
    /// Calls through this handle give up at this instant ([`Client::with_deadline`]).
    pub(crate) deadline: Option<Instant>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) endpoints: Vec<Endpoint>,
    pub(crate) options: Options,
    agent: ureq::Agent,
    /// Index of the endpoint that answered last: calls start there.
    preferred: AtomicUsize,
    /// `None`: not authenticated yet; `Some("")`: auth is off on the store, send no token.
    token: Mutex<Option<String>>,
    roots: Option<Roots>,
}

/// The CA certificates of [`Options::ca_file`], parsed once.
#[cfg(feature = "tls")]
type Roots = Arc<Vec<ureq::tls::Certificate<'static>>>;
/// Nothing to hold without the `tls` feature.
#[cfg(not(feature = "tls"))]
type Roots = std::convert::Infallible;

/// An agent for `options`; see [`Inner::agent_for`].
fn make_agent(options: &Options, roots: Option<&Roots>, idle: Option<Duration>) -> ureq::Agent {
    let builder = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .max_redirects(0)
        .user_agent(concat!("hashroute-etcd/", env!("CARGO_PKG_VERSION")))
        .timeout_connect(Some(options.connect_timeout));
    let builder = match idle {
        None => builder.timeout_global(Some(options.request_timeout)),
        Some(idle) => builder.timeout_recv_response(Some(options.request_timeout)).timeout_per_read(Some(idle)),
    };
    #[cfg(feature = "tls")]
    let builder = match roots {
        Some(roots) => builder.tls_config(
            ureq::tls::TlsConfig::builder().root_certs(ureq::tls::RootCerts::Specific(roots.clone())).build(),
        ),
        None => builder,
    };
    #[cfg(not(feature = "tls"))]
    let _ = roots;
    ureq::Agent::new_with_config(builder.build())
}

impl Client {
    /// Builds a client without contacting etcd. `endpoints` are `HOST:PORT` (IPv6 as
    /// `[ADDR]:PORT`), optionally with an `http://` or `https://` scheme; calls go to the one that
    /// answered last and move on to the next when it cannot be reached.
    ///
    /// # Errors
    /// [`Error::InvalidEndpoint`] for an empty list or a malformed endpoint; [`Error::Tls`] for an
    /// unreadable CA file, or https without the `tls` feature.
    pub fn new(endpoints: &[&str], options: Options) -> Result<Client, Error> {
        if endpoints.is_empty() {
            return Err(Error::InvalidEndpoint { endpoint: String::new(), reason: "no endpoint given" });
        }
        let tls = options.ca_file.is_some();
        let endpoints = endpoints.iter().map(|e| parse_endpoint(e, tls)).collect::<Result<Vec<_>, _>>()?;
        #[cfg(not(feature = "tls"))]
        if tls || endpoints.iter().any(|e| e.base.starts_with("https://")) {
            return Err(Error::Tls("https endpoints need hashroute-etcd built with the `tls` feature".into()));
        }
        #[cfg(feature = "tls")]
        let roots = match &options.ca_file {
            Some(path) => Some(crate::tls::load_roots(path)?),
            None => None,
        };
        #[cfg(not(feature = "tls"))]
        let roots = None;
        let agent = make_agent(&options, roots.as_ref(), None);
        let inner = Inner { endpoints, agent, options, preferred: AtomicUsize::new(0), token: Mutex::new(None), roots };
        Ok(Client { inner: Arc::new(inner), deadline: None })
    }

    /// A handle on the same connection whose calls give up at `deadline`: each call to an
    /// endpoint gets the smaller of [`Options::request_timeout`] and the time left, and a call
    /// made after `deadline` fails at once with [`Error::Timeout`] (nothing sent). What a
    /// command with an overall time bound uses; the endpoint order and the token stay shared
    /// with the original. Costs nothing. Not for a client that runs watches (a watcher started
    /// from it would fail every reconnect after the deadline).
    #[must_use]
    pub fn with_deadline(&self, deadline: Instant) -> Client {
        Client { inner: self.inner.clone(), deadline: Some(deadline) }
    }

    /// The deadline set by [`Client::with_deadline`].
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The endpoint calls start at now (the one that answered last, or the next one after an
    /// endpoint failed a write), as given.
    pub fn preferred_endpoint(&self) -> &str {
        let (_, ep) = self.inner.order().next().expect("a client has at least one endpoint");
        &ep.name
    }

    /// [`Client::new`], then one call that proves the store answers: authentication when
    /// credentials are set (so wrong ones fail here), else `/v3/maintenance/status`.
    ///
    /// # Errors
    /// Those of [`Client::new`]; [`Error::Unreachable`] naming every endpoint when none answers
    /// (within about `endpoints × request timeout`); [`Error::AuthFailed`] for refused
    /// credentials.
    pub fn connect(endpoints: &[&str], options: Options) -> Result<Client, Error> {
        let client = Client::new(endpoints, options)?;
        client.check()?;
        Ok(client)
    }

    /// The call [`Client::connect`] makes: authentication when credentials are set (so wrong
    /// ones fail here), else `/v3/maintenance/status`. Passes over endpoints that do not answer.
    ///
    /// # Errors
    /// As [`Client::connect`].
    pub fn check(&self) -> Result<(), Error> {
        if self.inner.options.credentials.is_some() {
            self.token()?;
        } else {
            self.status()?;
        }
        Ok(())
    }

    /// The endpoints as given, in order.
    pub fn endpoints(&self) -> Vec<&str> {
        self.inner.endpoints.iter().map(|e| e.name.as_str()).collect()
    }

    /// One JSON call with the token, renewing it once when etcd says it is missing or expired.
    pub(crate) fn call(&self, path: &str, body: &Value, kind: Kind) -> Result<Value, Error> {
        let mut token = self.token()?;
        match self.inner.call_raw(&self.inner.agent, path, body, kind, token.as_deref(), self.deadline) {
            Err(Error::AuthRequired { .. }) if self.inner.options.credentials.is_some() => {
                self.forget_token(&token);
                token = self.token()?;
                self.inner.call_raw(&self.inner.agent, path, body, kind, token.as_deref(), self.deadline)
            }
            other => other,
        }
    }

    /// The current token (authenticating first when there is none); `None` without credentials
    /// or when auth is off on the store.
    pub(crate) fn token(&self) -> Result<Option<String>, Error> {
        let Some((user, password)) = &self.inner.options.credentials else { return Ok(None) };
        // Held during authentication so that threads finding no token authenticate once.
        let mut guard = self.inner.token.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = guard.as_ref() {
            return Ok((!t.is_empty()).then(|| t.clone()));
        }
        let body = json!({ "name": user, "password": password });
        let token = match self.inner.call_raw(
            &self.inner.agent,
            "/v3/auth/authenticate",
            &body,
            Kind::Read,
            None,
            self.deadline,
        ) {
            Ok(v) => {
                let t = json::string(&v, "token").map_err(|r| self.inner.malformed(r))?;
                if t.is_empty() {
                    return Err(self.inner.malformed("authentication answered no token".into()));
                }
                t.to_owned()
            }
            Err(Error::Server { message, .. }) if message.contains("authentication is not enabled") => String::new(),
            Err(e) => return Err(e),
        };
        *guard = Some(token.clone());
        Ok((!token.is_empty()).then_some(token))
    }

    /// Drops `stale` so that the next call authenticates again (unless another thread already
    /// replaced it).
    pub(crate) fn forget_token(&self, stale: &Option<String>) {
        let mut guard = self.inner.token.lock().unwrap_or_else(|e| e.into_inner());
        if guard.as_deref().unwrap_or("") == stale.as_deref().unwrap_or("") {
            *guard = None;
        }
    }
}

impl Inner {
    /// An agent with this client's timeouts and TLS roots; `idle` (for watches) replaces the
    /// per-call deadline with a per-read one, so a stream lasts as long as data keeps coming.
    pub(crate) fn agent_for(&self, idle: Option<Duration>) -> ureq::Agent {
        make_agent(&self.options, self.roots.as_ref(), idle)
    }

    /// Endpoints in the order to try: the one that answered last first.
    pub(crate) fn order(&self) -> impl Iterator<Item = (usize, &Endpoint)> {
        let n = self.endpoints.len();
        let start = self.preferred.load(Ordering::Relaxed) % n;
        (0..n).map(move |i| ((start + i) % n, &self.endpoints[(start + i) % n]))
    }

    pub(crate) fn prefer(&self, index: usize) {
        self.preferred.store(index, Ordering::Relaxed);
    }

    pub(crate) fn endpoint_list(&self) -> String {
        self.endpoints.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ")
    }

    fn malformed(&self, reason: String) -> Error {
        let endpoint = self.endpoints[self.preferred.load(Ordering::Relaxed) % self.endpoints.len()].name.clone();
        Error::Malformed { endpoint, reason }
    }

    /// One JSON call, trying the endpoints in turn as `kind` allows, each within the request
    /// timeout or the time left before `deadline`, whichever is shorter.
    ///
    /// A write whose outcome became unknown on an endpoint (no answer in time, a broken
    /// connection, etcd's "unavailable": no leader, leader changed) moves the preferred endpoint
    /// on, so that the caller's next call (a read to learn the outcome, a retry) goes elsewhere.
    pub(crate) fn call_raw(
        &self,
        agent: &ureq::Agent,
        path: &str,
        body: &Value,
        kind: Kind,
        token: Option<&str>,
        deadline: Option<Instant>,
    ) -> Result<Value, Error> {
        let bytes = body.to_string().into_bytes();
        let mut last_connect = String::new();
        let mut last_other = None;
        for (index, ep) in self.order() {
            let Some(budget) = self.budget(deadline) else {
                last_other.get_or_insert(Error::Timeout {
                    endpoint: ep.name.clone(),
                    after: Duration::ZERO,
                    outcome_unknown: false,
                });
                break;
            };
            let sent = self.send_within(agent, ep, path, &bytes, token, budget);
            let failure = match sent.and_then(|resp| self.decode(ep, resp)) {
                Ok(v) => {
                    self.prefer(index);
                    return Ok(v);
                }
                // A store without a leader or shutting down: another member may serve a read.
                Err(Failure::Answer(e @ Error::Server { code: 14, .. })) if kind == Kind::Read => Failure::Answer(e),
                Err(Failure::Answer(e @ Error::Server { code: 14, .. })) => {
                    self.prefer(index + 1);
                    return Err(e);
                }
                Err(Failure::Answer(e)) => {
                    self.prefer(index);
                    return Err(e);
                }
                Err(f) => f,
            };
            match failure {
                Failure::Connect(cause) => last_connect = format!("{}: {cause}", ep.name),
                Failure::Timeout if kind == Kind::Write => {
                    self.prefer(index + 1);
                    return Err(Error::Timeout {
                        endpoint: ep.name.clone(),
                        after: whole_ms(budget),
                        outcome_unknown: true,
                    });
                }
                Failure::Broken(cause) if kind == Kind::Write => {
                    self.prefer(index + 1);
                    return Err(Error::OutcomeUnknown { endpoint: ep.name.clone(), cause });
                }
                Failure::Timeout => {
                    last_other = Some(Error::Timeout {
                        endpoint: ep.name.clone(),
                        after: whole_ms(budget),
                        outcome_unknown: false,
                    })
                }
                Failure::Broken(cause) => {
                    last_other = Some(Error::Disconnected { endpoint: ep.name.clone(), cause: quote(&cause) })
                }
                Failure::Answer(e) => last_other = Some(e),
            }
        }
        Err(last_other.unwrap_or_else(|| Error::Unreachable { endpoints: self.endpoint_list(), cause: last_connect }))
    }

    /// The time one endpoint may take: the request timeout, cut to what is left before
    /// `deadline`; `None` when the deadline has passed.
    fn budget(&self, deadline: Option<Instant>) -> Option<Duration> {
        let timeout = self.options.request_timeout;
        match deadline {
            None => Some(timeout),
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                (!left.is_zero()).then(|| timeout.min(left))
            }
        }
    }

    /// [`Inner::send`] with the agent's timeouts cut to `budget` when it is shorter.
    fn send_within(
        &self,
        agent: &ureq::Agent,
        ep: &Endpoint,
        path: &str,
        body: &[u8],
        token: Option<&str>,
        budget: Duration,
    ) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        if budget >= self.options.request_timeout {
            return self.send(agent, ep, path, body, token);
        }
        let mut req = agent
            .post(format!("{}{path}", ep.base))
            .config()
            .timeout_global(Some(budget))
            .timeout_connect(Some(self.options.connect_timeout.min(budget)))
            .build()
            .content_type("application/json");
        if let Some(t) = token {
            req = req.header("authorization", t);
        }
        req.send(body).map_err(|e| classify(ep, e))
    }

    /// Sends one POST to one endpoint and returns the status and the response.
    pub(crate) fn send(
        &self,
        agent: &ureq::Agent,
        ep: &Endpoint,
        path: &str,
        body: &[u8],
        token: Option<&str>,
    ) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let mut req = agent.post(format!("{}{path}", ep.base)).content_type("application/json");
        if let Some(t) = token {
            req = req.header("authorization", t);
        }
        req.send(body).map_err(|e| classify(ep, e))
    }

    /// Reads a unary answer: etcd's error object becomes its [`Error`], anything that is not a
    /// JSON object with a header is [`Error::Malformed`] or [`Error::Http`].
    fn decode(&self, ep: &Endpoint, mut resp: ureq::http::Response<ureq::Body>) -> Result<Value, Failure> {
        let status = resp.status().as_u16();
        let bytes = match resp.body_mut().with_config().limit(MAX_RESPONSE_BYTES).read_to_vec() {
            Ok(b) => b,
            Err(ureq::Error::BodyExceedsLimit(_)) => {
                return Err(Failure::Answer(Error::Malformed {
                    endpoint: ep.name.clone(),
                    reason: format!("answer larger than {MAX_RESPONSE_BYTES} bytes"),
                }))
            }
            Err(e) => return Err(classify(ep, e)),
        };
        decode_answer(&ep.name, status, &bytes, self.user()).map_err(Failure::Answer)
    }

    pub(crate) fn user(&self) -> &str {
        self.options.credentials.as_ref().map(|(u, _)| u.as_str()).unwrap_or("")
    }
}

/// `d` cut to whole milliseconds, for messages ("1.93s", not "1.929526022s").
fn whole_ms(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis().try_into().unwrap_or(u64::MAX))
}

/// Turns one answer's status and body into its JSON object or its [`Error`].
pub(crate) fn decode_answer(endpoint: &str, status: u16, bytes: &[u8], user: &str) -> Result<Value, Error> {
    let v: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(_) if status != 200 => {
            return Err(Error::Http { endpoint: endpoint.to_owned(), status, body: quote_bytes(bytes) })
        }
        Err(e) => {
            return Err(Error::Malformed {
                endpoint: endpoint.to_owned(),
                reason: format!("not JSON ({e}): {:?}", quote_bytes(bytes)),
            })
        }
    };
    if let Some((code, message)) = json::grpc_error(&v) {
        return Err(server_error(endpoint, code, &message, user));
    }
    if status != 200 {
        return Err(Error::Http { endpoint: endpoint.to_owned(), status, body: quote_bytes(bytes) });
    }
    // Every etcd answer carries a header; without one this is not etcd speaking.
    json::header_revision(&v).map_err(|reason| Error::Malformed { endpoint: endpoint.to_owned(), reason })?;
    Ok(v)
}

/// etcd's error (gRPC code and message) as the most specific [`Error`].
pub(crate) fn server_error(endpoint: &str, code: i64, message: &str, user: &str) -> Error {
    let message = quote(message);
    if message.contains("authentication failed") {
        Error::AuthFailed { user: user.to_owned(), message }
    } else if message.contains("user name is empty") || message.contains("invalid auth token") || code == 16 {
        Error::AuthRequired { message }
    } else if message.contains("permission denied") || code == 7 {
        Error::PermissionDenied { message }
    } else {
        Error::Server { endpoint: endpoint.to_owned(), code, message }
    }
}

/// Sorts a ureq failure into "nothing was sent" (the next endpoint may be tried whatever the
/// call) and the failures after the request went out.
pub(crate) fn classify(ep: &Endpoint, e: ureq::Error) -> Failure {
    use std::io::ErrorKind as K;
    use ureq::Timeout as T;
    match e {
        ureq::Error::Timeout(T::Connect | T::Resolve) => Failure::Connect("connect timed out".into()),
        ureq::Error::Timeout(_) => Failure::Timeout,
        ureq::Error::HostNotFound => Failure::Connect("host not found".into()),
        ureq::Error::ConnectionFailed => Failure::Connect("connection failed".into()),
        ureq::Error::Io(io)
            if matches!(
                io.kind(),
                K::ConnectionRefused | K::HostUnreachable | K::NetworkUnreachable | K::AddrNotAvailable
            ) =>
        {
            Failure::Connect(io.to_string())
        }
        // ureq completes the TLS handshake while connecting and reports its failures (an
        // unknown issuer, a name mismatch) as InvalidData; after the handshake that kind only
        // comes from a corrupted record, which an intact connection does not produce.
        ureq::Error::Io(io) if io.kind() == K::InvalidData && ep.base.starts_with("https://") => {
            Failure::Connect(format!("TLS: {}", quote(&io.to_string())))
        }
        ureq::Error::Io(io) => Failure::Broken(io.to_string()),
        ureq::Error::Protocol(p) => Failure::Answer(Error::Malformed {
            endpoint: ep.name.clone(),
            reason: format!("not HTTP/1.1: {}", quote(&p.to_string())),
        }),
        other if is_tls_error(&other) => Failure::Connect(format!("TLS: {}", quote(&other.to_string()))),
        other => Failure::Broken(other.to_string()),
    }
}

#[cfg(feature = "tls")]
fn is_tls_error(e: &ureq::Error) -> bool {
    matches!(e, ureq::Error::Tls(_) | ureq::Error::Rustls(_) | ureq::Error::Pem(_))
}

#[cfg(not(feature = "tls"))]
fn is_tls_error(e: &ureq::Error) -> bool {
    matches!(e, ureq::Error::Tls(_))
}

/// `HOST:PORT`, `http://HOST:PORT` or `https://HOST:PORT` (IPv6 hosts in brackets); a bare
/// endpoint is https when `tls` is set.
pub(crate) fn parse_endpoint(endpoint: &str, tls: bool) -> Result<Endpoint, Error> {
    let bad = |reason| Error::InvalidEndpoint { endpoint: quote(endpoint), reason };
    let (scheme, rest) = if let Some(r) = endpoint.strip_prefix("http://") {
        ("http", r)
    } else if let Some(r) = endpoint.strip_prefix("https://") {
        ("https", r)
    } else {
        (if tls { "https" } else { "http" }, endpoint)
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() {
        return Err(bad("expected HOST:PORT"));
    }
    if rest.chars().any(|c| c.is_whitespace() || c.is_control() || "/?#@\\".contains(c)) {
        return Err(bad("expected HOST:PORT without a path, user or spaces"));
    }
    let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad("missing :PORT"))?;
    let port_ok =
        !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && port.parse::<u16>().is_ok_and(|p| p > 0);
    if !port_ok {
        return Err(bad("the port must be a number from 1 to 65535"));
    }
    let host_ok = if let Some(inner) = host.strip_prefix('[') {
        inner.strip_suffix(']').is_some_and(|a| a.parse::<std::net::Ipv6Addr>().is_ok())
    } else {
        !host.is_empty() && !host.contains(':') && !host.contains('[') && !host.contains(']')
    };
    if !host_ok {
        return Err(bad("the host must be a name, an IPv4 address or [IPv6]"));
    }
    Ok(Endpoint { name: endpoint.to_owned(), base: format!("{scheme}://{host}:{port}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_and_bad_ones_are_named() {
        assert_eq!(parse_endpoint("127.0.0.1:2379", false).map(|e| e.base), Ok("http://127.0.0.1:2379".into()));
        assert_eq!(parse_endpoint("etcd-0:2379", true).map(|e| e.base), Ok("https://etcd-0:2379".into()));
        assert_eq!(parse_endpoint("http://[::1]:2379/", true).map(|e| e.base), Ok("http://[::1]:2379".into()));
        for bad in [
            "",
            "host",
            "host:",
            "host:0",
            "host:70000",
            ":2379",
            "a b:1",
            "h:1/x",
            "::1:2379",
            "[zz]:1",
            "u@h:1",
            "h:+1",
        ] {
            let err = parse_endpoint(bad, false).unwrap_err();
            assert!(matches!(err, Error::InvalidEndpoint { .. }), "{bad}: {err}");
            assert!(!err.to_string().contains('\n'));
        }
        assert!(Client::new(&[], Options::new()).is_err());
    }

    #[test]
    fn answers_decode_to_typed_errors() {
        let d = |status, body: &str| decode_answer("h:1", status, body.as_bytes(), "root");
        assert!(d(200, "{\"header\":{}}").is_ok());
        assert!(matches!(d(200, "garbage\n"), Err(Error::Malformed { .. })));
        assert!(matches!(d(200, "[1,2]"), Err(Error::Malformed { .. })));
        assert!(matches!(d(200, "{}"), Err(Error::Malformed { .. })));
        assert!(matches!(d(200, "{\"header\":{\"revision\":\"x\"}}"), Err(Error::Malformed { .. })));
        assert!(matches!(d(404, "Not Found"), Err(Error::Http { status: 404, .. })));
        assert!(matches!(d(502, "{}"), Err(Error::Http { status: 502, .. })));
        let e = d(400, r#"{"error":"etcdserver: user name is empty","code":3}"#);
        assert!(matches!(e, Err(Error::AuthRequired { .. })), "{e:?}");
        let e = d(
            400,
            r#"{"error":"x","message":"etcdserver: authentication failed, invalid user ID or password","code":3}"#,
        );
        assert!(matches!(e, Err(Error::AuthFailed { ref user, .. }) if user == "root"), "{e:?}");
        let e = d(403, r#"{"error":"etcdserver: permission denied","code":7}"#);
        assert!(matches!(e, Err(Error::PermissionDenied { .. })), "{e:?}");
        let e = d(503, r#"{"error":"etcdserver: no leader","code":14}"#);
        assert!(matches!(e, Err(Error::Server { code: 14, .. })), "{e:?}");
    }

    #[test]
    fn debug_hides_the_password() {
        let o = Options::new().credentials("root", "s3cret");
        assert!(!format!("{o:?}").contains("s3cret"));
    }
}
