//! Throw-away `redis-server` processes for the live tests and the scale-out example.
//!
//! Every server binds 127.0.0.1 only, on a port the OS reported free, in its own temporary
//! directory, with persistence off. [`RedisServer`] is a guard: dropping it (also while a failing
//! test unwinds) kills the process, waits for it, and removes the directory, so no run leaves a
//! server or files behind.
#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Environment variable naming the `redis-server` binary, overriding the `PATH` search.
pub const BINARY_ENV: &str = "HASHROUTE_REDIS_SERVER";

/// Locates `redis-server`: `$HASHROUTE_REDIS_SERVER`, else `PATH`, else the Debian locations
/// (`/usr/bin`, `/usr/sbin`, `/usr/local/bin`). The error says where it looked.
pub fn find_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(BINARY_ENV) {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("${BINARY_ENV}={} is not a file", p.display())) };
    }
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(["/usr/bin", "/usr/sbin", "/usr/local/bin"].map(PathBuf::from));
    dirs.iter()
        .map(|d| d.join("redis-server"))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("searched ${BINARY_ENV}, PATH, /usr/bin, /usr/sbin, /usr/local/bin"))
}

/// Asks the OS for a free loopback TCP port. Another process may take it before the server
/// binds; [`RedisServer::start`] retries on a fresh port when that happens.
pub fn free_loopback_port() -> std::io::Result<u16> {
    let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))?;
    Ok(l.local_addr()?.port())
}

/// A running `redis-server` on 127.0.0.1, killed and cleaned up on drop.
#[derive(Debug)]
pub struct RedisServer {
    child: Child,
    dir: PathBuf,
    port: u16,
}

static DIR_COUNTER: AtomicUsize = AtomicUsize::new(0);

fn make_temp_dir() -> std::io::Result<PathBuf> {
    loop {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let n = DIR_COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hashroute-redis-{}-{n}-{nanos}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

impl RedisServer {
    /// Starts `binary` on a free loopback port, `cluster` selecting `--cluster-enabled yes`, with
    /// `extra` appended to the command line (e.g. `["--maxmemory", "4mb"]`). Returns once the
    /// server answers `PING` (at most ~10 s); retries up to 5 ports if the chosen one was taken.
    ///
    /// # Errors
    /// The last start failure, with the tail of the server's log.
    pub fn start(binary: &Path, cluster: bool, extra: &[&str]) -> Result<RedisServer, String> {
        let mut last = String::new();
        for _ in 0..5 {
            match Self::try_start(binary, cluster, extra) {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn try_start(binary: &Path, cluster: bool, extra: &[&str]) -> Result<RedisServer, String> {
        let port = free_loopback_port().map_err(|e| format!("no free loopback port: {e}"))?;
        let dir = make_temp_dir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let log = dir.join("redis.log");
        let mut cmd = Command::new(binary);
        cmd.arg("--port")
            .arg(port.to_string())
            .args(["--bind", "127.0.0.1", "--protected-mode", "yes", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .args(["--save", "", "--appendonly", "no"])
            .arg("--logfile")
            .arg(&log);
        if cluster {
            cmd.args(["--cluster-enabled", "yes", "--cluster-config-file"]).arg(dir.join("nodes.conf"));
        }
        cmd.args(extra).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(format!("cannot run {}: {e}", binary.display()));
            }
        };
        // From here on the guard owns the process and the directory.
        let mut server = RedisServer { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                let mut stderr = String::new();
                if let Some(mut e) = server.child.stderr.take() {
                    let _ = e.read_to_string(&mut stderr);
                }
                return Err(format!(
                    "redis-server on port {port} exited with {status}: {}{}",
                    stderr.trim(),
                    server.log_tail(5)
                ));
            }
            if server.ping() {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err(format!("redis-server on port {port} did not answer PING in 10 s: {}", server.log_tail(5)));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Raw-protocol `PING`, so readiness does not depend on the client crate.
    fn ping(&self) -> bool {
        let Ok(mut s) = TcpStream::connect_timeout(&self.addr().into(), Duration::from_millis(200)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        let mut buf = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    /// The loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:port`.
    pub fn addr(&self) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.port)
    }

    /// `redis://127.0.0.1:port/` for the `redis` client crate.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's temporary directory (removed on drop).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The last `lines` lines of the server log, prefixed for error messages ("" when empty).
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        let tail = all[all.len().saturating_sub(lines)..].join(" | ");
        if tail.is_empty() {
            String::new()
        } else {
            format!(" [log: {tail}]")
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // SIGKILL is fine: persistence is off, so there is nothing to flush, and it cannot hang.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
