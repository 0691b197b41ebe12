//! A loopback proxy in front of an etcd client port that loses what a flaky network loses: the
//! answer to a write that etcd applied, or the write itself. Each connection carries one
//! request (relayed to etcd as HTTP/1.0, so etcd closes after its answer). Only unary calls go
//! through it (not watches). Stopped on drop; every socket has 5 s timeouts.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Work run by the proxy while it holds a lost answer or a swallowed write.
type Hook = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Rules {
    /// Run once, after the next lost answer (or swallowed write) and before its connection
    /// closes: other writers committing changes meanwhile.
    hook: Mutex<Option<Hook>>,
    /// Transactions to relay whose answers are then dropped (the connection closed instead).
    lose_answers: AtomicUsize,
    /// Transactions to drop without relaying (the connection closed instead).
    swallow: AtomicUsize,
    /// Transactions seen.
    txns: AtomicUsize,
}

/// The proxy; see the module docs.
pub struct LossyProxy {
    port: u16,
    rules: Arc<Rules>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl LossyProxy {
    /// A proxy on a free loopback port relaying to 127.0.0.1:`target`.
    pub fn start(target: u16) -> LossyProxy {
        let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (rules, stop) = (Arc::new(Rules::default()), Arc::new(AtomicBool::new(false)));
        let (r, flag) = (rules.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            // Bounded: ends when the proxy is dropped.
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((s, _)) => {
                        let r = r.clone();
                        std::thread::spawn(move || {
                            let _ = relay(s, target, &r);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        LossyProxy { port, rules, stop, thread: Some(thread) }
    }

    /// `127.0.0.1:PORT` of the proxy.
    pub fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The next `n` transactions reach etcd, their answers do not reach the client.
    pub fn lose_answers(&self, n: usize) {
        self.rules.lose_answers.store(n, Ordering::SeqCst);
    }

    /// The next `n` transactions never reach etcd.
    pub fn swallow(&self, n: usize) {
        self.rules.swallow.store(n, Ordering::SeqCst);
    }

    /// Runs `hook` on the proxy's thread once the next lost or swallowed transaction is held,
    /// before the client learns anything.
    pub fn meanwhile(&self, hook: impl FnOnce() + Send + 'static) {
        *self.rules.hook.lock().unwrap() = Some(Box::new(hook));
    }

    /// Transactions seen so far.
    pub fn txns(&self) -> usize {
        self.rules.txns.load(Ordering::SeqCst)
    }
}

impl Drop for LossyProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Takes one from `counter` if it is above 0.
fn take(counter: &AtomicUsize) -> bool {
    counter.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
}

/// Reads one request, applies the rules, relays it and its answer; the connection then closes.
fn relay(mut client: TcpStream, target: u16, rules: &Rules) -> std::io::Result<()> {
    client.set_nonblocking(false)?;
    client.set_read_timeout(Some(IO_TIMEOUT))?;
    client.set_write_timeout(Some(IO_TIMEOUT))?;
    let (head, body) = read_request(&mut client)?;
    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
    let mut lose = false;
    if path == "/v3/kv/txn" {
        rules.txns.fetch_add(1, Ordering::SeqCst);
        if take(&rules.swallow) {
            run_hook(rules);
            return Ok(());
        }
        lose = take(&rules.lose_answers);
    }
    let mut etcd = TcpStream::connect(SocketAddrV4::new(Ipv4Addr::LOCALHOST, target))?;
    etcd.set_read_timeout(Some(IO_TIMEOUT))?;
    etcd.set_write_timeout(Some(IO_TIMEOUT))?;
    // HTTP/1.0 without keep-alive: etcd answers once and closes.
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("").replacen("HTTP/1.1", "HTTP/1.0", 1);
    let mut out = request_line + "\r\n";
    for line in lines.filter(|l| !l.is_empty() && !l.to_ascii_lowercase().starts_with("connection:")) {
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    etcd.write_all(out.as_bytes())?;
    etcd.write_all(&body)?;
    let mut answer = Vec::new();
    etcd.read_to_end(&mut answer)?;
    if lose {
        run_hook(rules);
    } else {
        client.write_all(&answer)?;
    }
    Ok(())
}

fn run_hook(rules: &Rules) {
    let hook = rules.hook.lock().unwrap().take();
    if let Some(h) = hook {
        h();
    }
}

/// The head (request line and headers, without the blank line) and the body of one request.
fn read_request(s: &mut TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = s.read(&mut chunk)?;
        if n == 0 || buf.len() > 1 << 20 {
            return Err(std::io::Error::other("no complete request head"));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    let mut body = buf[end + 4..].to_vec();
    while body.len() < length {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::Error::other("request body cut short"));
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok((head, body))
}
