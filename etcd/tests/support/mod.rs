//! Throw-away `etcd` servers for the live tests.
//!
//! Each server binds 127.0.0.1 only, on client and peer ports the OS reported free, with its
//! data directory in a fresh temporary directory. [`Etcd`] is a guard: dropping it (also while a
//! failing test unwinds) kills the process by its pid, waits for it and removes the directory,
//! so no run leaves a server or files behind. [`Etcd::stop`] and [`Etcd::restart`] kill and
//! start it again on the same ports and data directory, as a crash and a restart would.
//!
//! The harness talks to etcd through raw HTTP/1.0 on the plain client port, so that starting,
//! checking and configuring a server does not depend on the crate under test.
#![allow(dead_code, unreachable_pub)]

pub mod cluster;
pub mod proxy;

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Environment variable naming the `etcd` binary, overriding the `PATH` search.
pub const BINARY_ENV: &str = "HASHROUTE_ETCD";

/// How long a start may take before it counts as failed (a loaded 2-core CI machine).
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Locates `etcd`: `$HASHROUTE_ETCD`, else `PATH`, else `/usr/bin`, `/usr/sbin`,
/// `/usr/local/bin`. The error says where it looked.
pub fn find_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(BINARY_ENV) {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("${BINARY_ENV}={} is not a file", p.display())) };
    }
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(["/usr/bin", "/usr/sbin", "/usr/local/bin"].map(PathBuf::from));
    dirs.iter()
        .map(|d| d.join("etcd"))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("searched ${BINARY_ENV}, PATH, /usr/bin, /usr/sbin, /usr/local/bin"))
}

/// The `etcd` binary, or `None` after printing a visible `SKIPPED: etcd not installed` line.
///
/// # Panics
/// When the binary is missing and the `CI` environment variable is set: CI installs etcd
/// (scripts/install_etcd.sh), so there a missing binary is a failure, not a skip.
pub fn etcd_or_skip(test: &str) -> Option<PathBuf> {
    match find_binary() {
        Ok(p) => Some(p),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("{test}: etcd not installed ({why}); CI is set, so this fails: run scripts/install_etcd.sh")
        }
        Err(why) => {
            // Written to the stderr handle, not with eprintln!, which the test harness captures
            // (and hides) for a passing test.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: etcd not installed ({test}; {why}); install it with scripts/install_etcd.sh"
            );
            None
        }
    }
}

/// Asks the OS for a free loopback TCP port. Another process may take it before etcd binds;
/// [`Etcd::start_with`] retries on fresh ports when that happens.
pub fn free_loopback_port() -> std::io::Result<u16> {
    let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))?;
    Ok(l.local_addr()?.port())
}

static DIR_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A new, empty directory under the system temporary directory.
pub fn make_temp_dir(what: &str) -> std::io::Result<PathBuf> {
    loop {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let n = DIR_COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hashroute-{what}-{}-{n}-{nanos}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// What a test server runs with.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `--auth-token-ttl` in seconds (etcd's default is 300).
    pub auth_token_ttl: Option<u32>,
    /// Also serve https on a second client port, with a certificate for 127.0.0.1 signed by a
    /// test CA made with the `openssl` command ([`Etcd::ca_file`], [`Etcd::tls_endpoint`]).
    pub tls: bool,
}

/// A running `etcd` on 127.0.0.1, killed and cleaned up on drop.
#[derive(Debug)]
pub struct Etcd {
    binary: PathBuf,
    config: Config,
    child: Option<Child>,
    dir: PathBuf,
    client_port: u16,
    peer_port: u16,
    tls_port: Option<u16>,
    /// The root token once auth is on (for harness calls).
    root_token: Option<String>,
}

impl Etcd {
    /// [`Etcd::start_with`] with the default [`Config`].
    pub fn start(binary: &Path) -> Result<Etcd, String> {
        Etcd::start_with(binary, Config::default())
    }

    /// Starts `binary` on free loopback ports with a fresh data directory; returns once
    /// `/health` answers true (at most 20 s). Retries up to 5 port pairs if one was taken.
    ///
    /// # Errors
    /// The last start failure, with the tail of etcd's log.
    pub fn start_with(binary: &Path, config: Config) -> Result<Etcd, String> {
        let mut last = String::new();
        for _ in 0..5 {
            let ports = (free_loopback_port(), free_loopback_port(), free_loopback_port());
            let (Ok(client_port), Ok(peer_port), Ok(tls)) = ports else {
                return Err("no free loopback port".into());
            };
            if client_port == peer_port || tls == client_port || tls == peer_port {
                continue;
            }
            let dir = make_temp_dir("etcd").map_err(|e| format!("cannot create a temporary directory: {e}"))?;
            let mut etcd = Etcd {
                binary: binary.to_owned(),
                config: config.clone(),
                child: None,
                dir,
                client_port,
                peer_port,
                tls_port: config.tls.then_some(tls),
                root_token: None,
            };
            if config.tls {
                etcd.make_certificates()?;
            }
            match etcd.spawn_and_wait() {
                Ok(()) => return Ok(etcd),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn args(&self) -> Vec<String> {
        let client = format!("http://127.0.0.1:{}", self.client_port);
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let mut listen = client.clone();
        if let Some(p) = self.tls_port {
            listen = format!("{client},https://127.0.0.1:{p}");
        }
        let mut args: Vec<String> = vec![
            "--name=t".into(),
            format!("--data-dir={}", self.dir.join("data").display()),
            format!("--listen-client-urls={listen}"),
            format!("--advertise-client-urls={client}"),
            format!("--listen-peer-urls={peer}"),
            format!("--initial-advertise-peer-urls={peer}"),
            format!("--initial-cluster=t={peer}"),
            "--initial-cluster-state=new".into(),
            "--logger=zap".into(),
            "--log-outputs=stderr".into(),
        ];
        if let Some(ttl) = self.config.auth_token_ttl {
            args.push(format!("--auth-token-ttl={ttl}"));
        }
        if self.tls_port.is_some() {
            args.push(format!("--cert-file={}", self.dir.join("server.pem").display()));
            args.push(format!("--key-file={}", self.dir.join("server.key").display()));
        }
        args
    }

    /// Starts the process (appending to the log) and waits for `/health`.
    fn spawn_and_wait(&mut self) -> Result<(), String> {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .map_err(|e| format!("cannot open the etcd log: {e}"))?;
        let child = Command::new(&self.binary)
            .args(self.args())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.binary.display()))?;
        self.child = Some(child);
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return Err(format!("etcd on port {} exited with {status}{}", self.client_port, self.log_tail(5)));
            }
            if self.healthy() {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(format!(
                    "etcd on port {} not healthy in {START_TIMEOUT:?}{}",
                    self.client_port,
                    self.log_tail(5)
                ));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Whether `GET /health` answers `"health":"true"`.
    pub fn healthy(&self) -> bool {
        match raw_http(self.client_port, "GET", "/health", "", None) {
            Ok((200, body)) => body.contains("\"health\":\"true\""),
            _ => false,
        }
    }

    /// Kills the process (SIGKILL, as a crash would) and waits for it; keeps the data directory
    /// and the ports for [`Etcd::restart`].
    pub fn stop(&mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same ports and data directory, waiting for `/health`.
    /// Retries for a while if the old process' ports are not free yet.
    pub fn restart(&mut self) -> Result<(), String> {
        self.kill();
        let mut last = String::new();
        for _ in 0..5 {
            match self.spawn_and_wait() {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(last)
    }

    /// Whether the process is running.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The process id, while running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `127.0.0.1:PORT` of the plain client port.
    pub fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.client_port)
    }

    /// `127.0.0.1:PORT` of the https client port (with [`Config::tls`]).
    pub fn tls_endpoint(&self) -> Option<String> {
        self.tls_port.map(|p| format!("127.0.0.1:{p}"))
    }

    /// The test CA's certificate (with [`Config::tls`]).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// The temporary directory (removed on drop).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("etcd.log")
    }

    /// The last `lines` lines of etcd's log, prefixed for error messages ("" when empty).
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        let tail = all[all.len().saturating_sub(lines)..].join(" | ");
        if tail.is_empty() {
            String::new()
        } else {
            format!(" [log: {tail}]")
        }
    }

    /// A gateway call from the harness: `(status, body)`.
    pub fn call(&self, path: &str, body: &str) -> Result<(u16, String), String> {
        raw_http(self.client_port, "POST", path, body, self.root_token.as_deref())
    }

    fn call_ok(&self, path: &str, body: &str) -> Result<String, String> {
        match self.call(path, body)? {
            (200, b) => Ok(b),
            (s, b) => Err(format!("{path} answered HTTP {s}: {b}")),
        }
    }

    /// Turns auth on through the gateway: creates `root` with `root_password` and the root role,
    /// then `users` without any role (they can authenticate but not read or write), then enables
    /// auth. Harness calls go on with a root token.
    pub fn enable_auth(&mut self, root_password: &str, users: &[(&str, &str)]) -> Result<(), String> {
        let add = |name: &str, pw: &str| format!("{{\"name\":{name:?},\"password\":{pw:?}}}");
        self.call_ok("/v3/auth/user/add", &add("root", root_password))?;
        self.call_ok("/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}")?;
        for (name, pw) in users {
            self.call_ok("/v3/auth/user/add", &add(name, pw))?;
        }
        self.call_ok("/v3/auth/enable", "{}")?;
        let body = self.call_ok("/v3/auth/authenticate", &add("root", root_password))?;
        let token = body
            .split("\"token\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .ok_or_else(|| format!("no token in {body}"))?;
        self.root_token = Some(token.to_owned());
        Ok(())
    }

    /// A test CA and a server certificate for 127.0.0.1 signed by it, made with `openssl`.
    fn make_certificates(&self) -> Result<(), String> {
        let d = &self.dir;
        let run = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(d)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("cannot run openssl: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!("openssl {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
            }
        };
        run(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=hashroute test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ])?;
        run(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ])?;
        let mut ext = File::create(d.join("server.ext")).map_err(|e| e.to_string())?;
        ext.write_all(b"subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n").map_err(|e| e.to_string())?;
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ])
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        // SIGKILL by pid: etcd is one process, and nothing in a test store needs flushing.
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One HTTP/1.0 request to 127.0.0.1:`port` (the server closes the connection after the
/// answer); `(status, body)`. Bounded by 5 s timeouts.
pub fn raw_http(port: u16, method: &str, path: &str, body: &str, token: Option<&str>) -> Result<(u16, String), String> {
    let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    let mut s = TcpStream::connect_timeout(&addr.into(), Duration::from_secs(1)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(5))).map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(Duration::from_secs(5))).map_err(|e| e.to_string())?;
    let auth = token.map(|t| format!("Authorization: {t}\r\n")).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{auth}\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n").ok_or("no end of headers")?;
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or("no status")?;
    Ok((status, body.to_owned()))
}
