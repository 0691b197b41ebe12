//! Several client processes sharing one ring through one etcd.
//!
//! ```text
//! etcd &                                   # or any etcd 3.4+ reachable from here
//! cargo run -p hashroute-etcd --example ring_fleet -- --etcd 127.0.0.1:2379 --clients 4
//! ```
//!
//! The parent creates a ring under a fresh prefix, starts `--clients` copies of itself as client
//! processes (each a [`RingWatcher`] printing `REVISION FINGERPRINT` whenever it swaps in a new
//! ring, and routing a few keys with the ring it serves), then makes changes — joins, a weight
//! change, a member down and up, a staged join, a drain and a leave — and after each one waits
//! until every client serves that revision, printing how long that took. The clients stop when
//! the parent closes their stdin; the prefix is deleted at the end.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use hashroute::{Algorithm, Node, RouterSpec};
use hashroute_etcd::{Client, Committed, Options, RingError, RingEvent, RingStore, WatchConfig};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// One change the parent makes.
type Change = Box<dyn Fn(&RingStore) -> std::result::Result<Committed, RingError>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let etcd = flag("--etcd").unwrap_or_else(|| "127.0.0.1:2379".into());
    match flag("--client") {
        Some(prefix) => client(&etcd, &prefix),
        None => parent(&etcd, flag("--clients").map(|n| n.parse()).transpose()?.unwrap_or(3)),
    }
}

/// A client: serve the ring, print each new one, route a key with it; stop when stdin closes.
fn client(etcd: &str, prefix: &str) -> Result<()> {
    let store = RingStore::new(Client::connect(&[etcd], Options::new())?, prefix)?;
    let config = WatchConfig::default().on_event(|event: &RingEvent| {
        if let RingEvent::Serving { revision, fingerprint } = event {
            println!("{revision} {fingerprint}");
            let _ = std::io::stdout().flush();
        }
    });
    let watcher = store.watch(config)?;
    // Readers use the shared router directly: lock-free, always the newest ring.
    let shared = watcher.wait_for_router(Duration::from_secs(10)).ok_or("no routable ring")?;
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line)? > 0 {
        let key = line.trim();
        eprintln!("client {}: {key} -> {}", std::process::id(), shared.route_name(key.as_bytes()));
        line.clear();
    }
    Ok(())
}

fn parent(etcd: &str, clients: usize) -> Result<()> {
    let prefix = format!("/hashroute/example/{}", std::process::id());
    let store = RingStore::new(Client::connect(&[etcd], Options::new())?, &prefix)?;
    store.init(RouterSpec::new(Algorithm::Ring).with_vnodes(160))?;
    for name in ["cache-a", "cache-b", "cache-c"] {
        store.join(&Node::new(name))?;
    }
    println!("ring at {prefix} on {etcd}; starting {clients} client processes");
    let exe = std::env::current_exe()?;
    let mut fleet: Vec<(Child, Receiver<String>)> = (0..clients)
        .map(|_| {
            let mut child = Command::new(&exe)
                .args(["--etcd", etcd, "--client", &prefix])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()?;
            let lines = lines(child.stdout.take().ok_or("no stdout")?);
            Ok((child, lines))
        })
        .collect::<Result<_>>()?;
    let changes: Vec<(&str, Change)> = vec![
        ("join cache-d", Box::new(|s| s.join(&Node::new("cache-d")))),
        ("reweigh cache-a 2", Box::new(|s| s.reweigh("cache-a", 2.0))),
        ("down cache-b", Box::new(|s| s.mark_down("cache-b"))),
        ("up cache-b", Box::new(|s| s.mark_up("cache-b"))),
        ("join cache-e (staged)", Box::new(|s| s.join_staged(&Node::new("cache-e")))),
        ("up cache-e", Box::new(|s| s.mark_up("cache-e"))),
        ("drain cache-c", Box::new(|s| s.drain("cache-c"))),
        ("leave cache-c", Box::new(|s| s.leave("cache-c"))),
    ];
    for (what, change) in changes {
        let done = change(&store)?;
        let committed_at = Instant::now();
        let fingerprint = done.state.router()?.fingerprint().to_string();
        for (_, lines) in &fleet {
            wait_for(lines, done.revision, &fingerprint)?;
        }
        println!(
            "{what:<22} revision {:>4}  fingerprint {fingerprint}  every client in {:?}",
            done.revision,
            committed_at.elapsed()
        );
    }
    for (child, _) in &mut fleet {
        if let Some(stdin) = child.stdin.as_mut() {
            writeln!(stdin, "user:42")?;
        }
        drop(child.stdin.take());
        child.wait()?;
    }
    store.client().delete_prefix(prefix.as_bytes())?;
    Ok(())
}

/// The lines a client prints, read on a thread.
fn lines(stdout: ChildStdout) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(std::result::Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Reads a client's lines until it serves `revision`, which must have `fingerprint`.
fn wait_for(lines: &Receiver<String>, revision: i64, fingerprint: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let line = lines.recv_timeout(deadline.saturating_duration_since(Instant::now()))?;
        let (rev, fp) = line.split_once(' ').ok_or("bad client line")?;
        if rev.parse::<i64>()? >= revision {
            if fp != fingerprint {
                return Err(format!("a client serves {fp} at revision {rev}, expected {fingerprint}").into());
            }
            return Ok(());
        }
    }
}
