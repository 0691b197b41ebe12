//! The client against servers that are not etcd, or etcd gone wrong: garbage bytes, broken
//! HTTP, JSON that is not etcd's, errors, silence, dropped connections, oversized answers, and
//! closed ports. Every call must come back as a typed one-line error within its timeout, never
//! a panic or a hang. No etcd needed: a tiny TCP server on a loopback port plays the part.

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hashroute_etcd::{Client, Compare, Error, Op, Options, WatchEvent, WatchOptions};

/// What the fake server does with each request.
#[derive(Clone, Copy)]
enum Reply {
    /// Writes these bytes and closes.
    Bytes(&'static str),
    /// Reads the request and never answers.
    Silent,
    /// Closes as soon as the request is read.
    Close,
    /// Announces and streams an answer larger than the client's limit.
    Huge,
}

/// A loopback server answering every connection with one [`Reply`]; stopped on drop.
struct Fake {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Fake {
    fn new(reply: Reply) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            // Bounded: ends when the test drops the server.
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((s, _)) => {
                        let flag = flag.clone();
                        held.push(std::thread::spawn(move || serve(s, reply, &flag)));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            for h in held {
                let _ = h.join();
            }
        });
        Fake { port, stop, thread: Some(thread) }
    }

    fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request (headers and a Content-Length body) and acts out `reply`.
fn serve(mut s: TcpStream, reply: Reply, stop: &AtomicBool) {
    s.set_nonblocking(false).ok();
    s.set_read_timeout(Some(Duration::from_secs(2))).ok();
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    let complete = |req: &[u8]| -> bool {
        let text = String::from_utf8_lossy(req);
        let Some((head, body)) = text.split_once("\r\n\r\n") else { return false };
        let len = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
            .unwrap_or(0usize);
        body.len() >= len
    };
    while !complete(&req) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    match reply {
        Reply::Bytes(b) => {
            let _ = s.write_all(b.as_bytes());
        }
        Reply::Close => {}
        Reply::Silent => {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        Reply::Huge => {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 200000000\r\n\r\n{\"header\":{},\"kvs\":[\"");
            let chunk = vec![b'A'; 1 << 16];
            // Bounded: 70 MiB at most, or until the client hangs up.
            for _ in 0..1120 {
                if s.write_all(&chunk).is_err() || stop.load(Ordering::Relaxed) {
                    break;
                }
            }
        }
    }
}

fn http(status: &str, body: &str) -> &'static str {
    let text = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    Box::leak(text.into_boxed_str())
}

fn quick(timeout_ms: u64) -> Options {
    Options::new().connect_timeout(Duration::from_millis(timeout_ms)).request_timeout(Duration::from_millis(timeout_ms))
}

fn one_line(e: &Error) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n') && !s.contains('\r') && !s.is_empty(), "not one line: {s:?}");
    s
}

/// Every call against `fake` fails with a typed, one-line error.
fn every_call_fails(fake: &Fake) -> Vec<Error> {
    let c = Client::new(&[&fake.endpoint()], quick(1000)).unwrap();
    let errors = vec![
        c.get(b"k").unwrap_err(),
        c.get_prefix(b"p/").unwrap_err(),
        c.put(b"k", b"v").unwrap_err(),
        c.delete(b"k").unwrap_err(),
        c.txn(&[Compare::absent(b"k".to_vec())], &[Op::put(b"k".to_vec(), b"v".to_vec())]).unwrap_err(),
        c.status().unwrap_err(),
        c.compact(5).unwrap_err(),
        Client::connect(&[&fake.endpoint()], quick(1000)).unwrap_err(),
        Client::connect(&[&fake.endpoint()], quick(1000).credentials("u", "p")).unwrap_err(),
    ];
    for e in &errors {
        one_line(e);
    }
    errors
}

/// Whether an error is the kind a case expects.
type Expect = fn(&Error) -> bool;

#[test]
fn garbage_answers_are_typed_errors() {
    let cases: Vec<(&str, &'static str, Expect)> = vec![
        ("not HTTP", "SSH-2.0-OpenSSH_9.2\r\n\r\nnonsense", |e| matches!(e, Error::Malformed { .. })),
        ("not JSON", http("200 OK", "not json!\n"), |e| matches!(e, Error::Malformed { .. })),
        ("JSON array", http("200 OK", "[1,2,3]"), |e| matches!(e, Error::Malformed { .. })),
        ("no header", http("200 OK", "{\"kvs\":[]}"), |e| matches!(e, Error::Malformed { .. })),
        ("bad revision", http("200 OK", "{\"header\":{\"revision\":\"soon\"}}"), |e| {
            matches!(e, Error::Malformed { .. })
        }),
        ("HTTP error", http("500 Internal Server Error", "oops\nline two"), |e| {
            matches!(e, Error::Http { status: 500, .. })
        }),
        ("404", http("404 Not Found", "Not Found"), |e| matches!(e, Error::Http { status: 404, .. })),
        ("gRPC error", http("503 Service Unavailable", "{\"error\":\"etcdserver: no leader\",\"code\":14}"), |e| {
            matches!(e, Error::Server { code: 14, .. })
        }),
        ("truncated", "HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"header\":", |e| {
            matches!(e, Error::Disconnected { .. } | Error::OutcomeUnknown { .. } | Error::Malformed { .. })
        }),
        ("bad chunking", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZZ\r\nxx\r\n", |e| {
            matches!(e, Error::Malformed { .. } | Error::Disconnected { .. } | Error::OutcomeUnknown { .. })
        }),
    ];
    for (name, reply, expected) in cases {
        let fake = Fake::new(Reply::Bytes(reply));
        let errors = every_call_fails(&fake);
        assert!(expected(&errors[0]), "{name}: get answered {:?}", errors[0]);
        eprintln!("{name}: {}", errors[0]);
    }
    // A well-formed answer whose fields are garbage.
    let bad_kv = http("200 OK", "{\"header\":{\"revision\":\"3\"},\"kvs\":[{\"key\":\"@@@\",\"mod_revision\":\"x\"}]}");
    let fake = Fake::new(Reply::Bytes(bad_kv));
    let c = Client::new(&[&fake.endpoint()], quick(1000)).unwrap();
    assert!(matches!(c.get(b"k"), Err(Error::Malformed { .. })));
    assert!(matches!(c.get_prefix(b"k"), Err(Error::Malformed { .. })));
    let no_token = http("200 OK", "{\"header\":{\"revision\":\"3\"},\"token\":17}");
    let fake = Fake::new(Reply::Bytes(no_token));
    let e = Client::connect(&[&fake.endpoint()], quick(1000).credentials("u", "p")).unwrap_err();
    assert!(matches!(e, Error::Malformed { .. }), "{e:?}");
}

#[test]
fn silence_times_out_and_says_whether_a_write_may_have_happened() {
    let fake = Fake::new(Reply::Silent);
    let c = Client::new(&[&fake.endpoint()], quick(300)).unwrap();
    let t0 = Instant::now();
    let read = c.get(b"k").unwrap_err();
    assert!(matches!(read, Error::Timeout { outcome_unknown: false, .. }), "{read:?}");
    let write = c.put(b"k", b"v").unwrap_err();
    assert!(matches!(write, Error::Timeout { outcome_unknown: true, .. }), "{write:?}");
    assert!(one_line(&write).contains("may or may not"));
    // A bound (the CLI's 20 s contract), not a speed test.
    assert!(t0.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_dropped_connection_is_an_error_and_an_unknown_write_outcome() {
    let fake = Fake::new(Reply::Close);
    let c = Client::new(&[&fake.endpoint()], quick(1000)).unwrap();
    let read = c.get(b"k").unwrap_err();
    assert!(matches!(read, Error::Disconnected { .. } | Error::Malformed { .. }), "{read:?}");
    let write = c.put(b"k", b"v").unwrap_err();
    assert!(matches!(write, Error::OutcomeUnknown { .. } | Error::Malformed { .. }), "{write:?}");
    one_line(&read);
    one_line(&write);
}

#[test]
fn an_oversized_answer_is_refused() {
    let fake = Fake::new(Reply::Huge);
    let c = Client::new(&[&fake.endpoint()], quick(10_000)).unwrap();
    let e = c.get(b"k").unwrap_err();
    assert!(matches!(e, Error::Malformed { .. }), "{e:?}");
    assert!(one_line(&e).contains("larger than"));
}

#[test]
fn closed_ports_are_unreachable_naming_every_endpoint() {
    let a = format!("127.0.0.1:{}", support::free_loopback_port().unwrap());
    let b = format!("127.0.0.1:{}", support::free_loopback_port().unwrap());
    let t0 = Instant::now();
    let e = Client::connect(&[&a, &b], Options::new()).unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(20));
    assert!(matches!(e, Error::Unreachable { .. }), "{e:?}");
    let msg = one_line(&e);
    assert!(msg.contains(&a) && msg.contains(&b), "{msg}");
    let c = Client::new(&[&a], Options::new()).unwrap();
    assert!(matches!(c.put(b"k", b"v"), Err(Error::Unreachable { .. })), "nothing sent, so not 'outcome unknown'");
    assert!(matches!(c.watch(b"w/", 0), Err(Error::Unreachable { .. })));
}

#[test]
fn bad_endpoints_and_options_are_refused_up_front() {
    for bad in ["", "localhost", "host:port", "host:99999", "http://h:1/v3", "h :1"] {
        let e = Client::new(&[bad], Options::new()).unwrap_err();
        assert!(matches!(e, Error::InvalidEndpoint { .. }), "{bad}: {e:?}");
        one_line(&e);
    }
    #[cfg(not(feature = "tls"))]
    {
        let e = Client::new(&["h:1"], Options::new().ca_file("/nonexistent.pem")).unwrap_err();
        assert!(matches!(e, Error::Tls(_)), "{e:?}");
        assert!(matches!(Client::new(&["https://h:1"], Options::new()), Err(Error::Tls(_))));
    }
    #[cfg(feature = "tls")]
    {
        let e = Client::new(&["h:1"], Options::new().ca_file("/nonexistent.pem")).unwrap_err();
        assert!(matches!(e, Error::Tls(_)), "{e:?}");
    }
}

fn watch_options() -> WatchOptions {
    WatchOptions {
        idle_reconnect: Duration::from_secs(5),
        first_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
    }
}

fn first_report(fake: &Fake) -> WatchEvent {
    let c = Client::new(&[&fake.endpoint()], quick(1000)).unwrap();
    let w = c.watch_with(b"w/", 1, watch_options()).unwrap();
    let ev = w.events().recv_timeout(Duration::from_secs(10)).expect("a report");
    let t0 = Instant::now();
    w.stop();
    assert!(t0.elapsed() < Duration::from_secs(10), "stop joins the thread");
    ev
}

#[test]
fn a_garbage_watch_stream_is_reported_and_retried() {
    let cases: Vec<(&str, &'static str)> = vec![
        ("not JSON", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ngarbage\n"),
        ("no result", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"header\":{}}\n"),
        (
            "bad event",
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"result\":{\"created\":true}}\n{\"result\":{\"events\":[{\"kv\":{\"key\":\"@@\"}}]}}\n",
        ),
        ("ends inside a line", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"result\":{\"crea"),
        ("HTTP error", "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 3\r\n\r\nbad"),
        ("not HTTP", "220 smtp.example ESMTP\r\n"),
    ];
    for (name, reply) in cases {
        let fake = Fake::new(Reply::Bytes(reply));
        match first_report(&fake) {
            WatchEvent::Disconnected(e) => {
                eprintln!("watch, {name}: {}", one_line(&e));
            }
            other => panic!("{name}: expected a disconnection report, got {other:?}"),
        }
    }
    // A stream that is fine but silent is stopped at once.
    let fake = Fake::new(Reply::Silent);
    let c = Client::new(&[&fake.endpoint()], quick(1000)).unwrap();
    let w = c.watch_with(b"w/", 1, watch_options()).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    w.stop();
}

#[test]
fn a_compaction_and_a_refusal_in_the_stream_end_the_watch() {
    let compacted = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"result\":{\"header\":{\"revision\":\"9\"},\"created\":true}}\n{\"result\":{\"header\":{},\"canceled\":true,\"compact_revision\":\"7\"}}\n";
    let fake = Fake::new(Reply::Bytes(compacted));
    assert_eq!(first_report(&fake), WatchEvent::Compacted { compact_revision: 7 });
    let refused = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"result\":{\"created\":true,\"canceled\":true,\"cancel_reason\":\"rpc error: code = InvalidArgument desc = etcdserver: user name is empty\"}}\n";
    let fake = Fake::new(Reply::Bytes(refused));
    assert!(matches!(first_report(&fake), WatchEvent::Failed(Error::AuthRequired { .. })));
    // Events the fake sends are delivered; a duplicate of an older revision is dropped.
    let events = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"result\":{\"created\":true}}\n{\"result\":{\"events\":[{\"kv\":{\"key\":\"dy9h\",\"mod_revision\":\"3\"}},{\"kv\":{\"key\":\"dy9i\",\"mod_revision\":\"4\"}}]}}\n";
    let fake = Fake::new(Reply::Bytes(events));
    let c = Client::new(&[&fake.endpoint()], quick(1000)).unwrap();
    let w = c.watch_with(b"w/", 4, watch_options()).unwrap();
    match w.events().recv_timeout(Duration::from_secs(10)).unwrap() {
        WatchEvent::Changes(evs) => {
            assert_eq!(evs.len(), 1, "revision 3 is before the start");
            assert_eq!(evs[0].kv.key, b"w/b");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.next_revision(), 5);
}
