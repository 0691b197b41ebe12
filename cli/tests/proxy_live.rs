//! Agreement with the real proxies: nutcracker (twemproxy) over memcached, nginx and HAProxy are
//! started on free 127.0.0.1 ports, a few thousand keys go through each proxy, and the server
//! the proxy chose (the memcached that holds the key; the backend's answer for nginx; the
//! `srv_name` header for HAProxy) must be the one hashroute names from the *same* configuration
//! file — then once more after a server is added to that file (the resize a user rehearses).
//!
//! Every process is started by this test, stopped by its pid on every exit path (a guard), and
//! every loop is bounded in count and time. Without a program the test prints `SKIPPED: ...`
//! and passes, unless `CI` is set: CI installs them (scripts/install_proxies.sh), so there a
//! missing program is a failure. Configs write every port explicitly (nginx's implicit-port
//! rule is covered by the vectors: a test cannot bind port 80 reliably).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hashroute::Router;
use hashroute_cli::proxy::ProxyConfig;

/// Keys sent through each proxy per layout.
const KEYS: usize = 2_000;

/// How long a server may take to accept connections.
const READY: Duration = Duration::from_secs(15);

/// I/O timeout of every socket.
const IO: Duration = Duration::from_secs(5);

/// The program `name` on PATH or in the Debian locations, or `None` after printing why the
/// test is skipped.
///
/// # Panics
/// When it is missing and `CI` is set.
fn program_or_skip(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"].map(PathBuf::from));
    if let Some(p) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
        return Some(p);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{name} not found; CI is set, so this fails: run scripts/install_proxies.sh");
    }
    eprintln!("SKIPPED: {name} not found; install it with scripts/install_proxies.sh");
    None
}

/// `n` distinct free loopback ports (held open until all are chosen, so they differ).
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> =
        (0..n).map(|_| TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).expect("a free port")).collect();
    listeners.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("hashroute-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A process this test started: killed by its pid and waited for on drop.
struct Proc {
    child: Child,
    what: String,
    log: Option<PathBuf>,
}

impl Proc {
    /// Starts `cmd` and waits until every port of `ports` accepts connections.
    fn start(mut cmd: Command, what: &str, ports: &[u16], log: Option<PathBuf>) -> Proc {
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let mut p = Proc { child, what: what.to_owned(), log };
        let deadline = Instant::now() + READY;
        for &port in ports {
            loop {
                if let Ok(Some(status)) = p.child.try_wait() {
                    let mut err = String::new();
                    if let Some(mut e) = p.child.stderr.take() {
                        let _ = e.read_to_string(&mut err);
                    }
                    panic!("{what} exited with {status}: {} {}", err.trim(), p.log_tail());
                }
                if TcpStream::connect_timeout(&SocketAddrV4::new(Ipv4Addr::LOCALHOST, port).into(), IO).is_ok() {
                    break;
                }
                assert!(Instant::now() < deadline, "{what}: port {port} not ready in {READY:?} {}", p.log_tail());
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        p
    }

    fn log_tail(&self) -> String {
        self.log.as_ref().and_then(|l| std::fs::read_to_string(l).ok()).map_or(String::new(), |t| {
            let lines: Vec<&str> = t.lines().collect();
            lines[lines.len().saturating_sub(5)..].join(" | ")
        })
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = &self.what;
    }
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect_timeout(&SocketAddrV4::new(Ipv4Addr::LOCALHOST, port).into(), IO).unwrap();
    s.set_read_timeout(Some(IO)).unwrap();
    s.set_write_timeout(Some(IO)).unwrap();
    // One write per request and no Nagle: else delayed ACKs cost 40 ms per round trip.
    s.set_nodelay(true).unwrap();
    s
}

/// A seeded stream of request targets: `/key-i`, paths with queries, odd but legal bytes.
fn uris(count: usize, seed: u64) -> Vec<String> {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/=&!$*+,;:@";
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..count)
        .map(|i| match i % 3 {
            0 => format!("/key-{i}"),
            1 => format!("/p/{i}?q={}&r={}", next() % 1000, next() % 7),
            _ => {
                let len = 1 + (next() % 40) as usize;
                let tail: String = (0..len).map(|_| CHARS[(next() % CHARS.len() as u64) as usize] as char).collect();
                format!("/{tail}")
            }
        })
        .collect()
}

/// One HTTP/1.0 GET; returns (body, the named response header's value).
fn http_get(port: u16, target: &str, header: &str) -> (String, Option<String>) {
    let mut s = connect(port);
    s.write_all(format!("GET {target} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(s);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.contains(" 200 "), "GET {target}: {status:?}");
    let mut value = None;
    for _ in 0..100 {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case(header) {
                value = Some(v.trim().to_owned());
            }
        }
    }
    let mut body = String::new();
    reader.take(1 << 16).read_to_string(&mut body).unwrap();
    (body, value)
}

/// Compares every key's proxy answer with the router read from `config` (pool `pool`).
fn agree(config: &Path, pool: &str, keys: &[String], mut proxy_answer: impl FnMut(&str) -> String) -> usize {
    let parsed = ProxyConfig::read(config, None, Some(pool)).unwrap_or_else(|e| panic!("{e}"));
    let router = parsed.router().unwrap();
    let mut spread = std::collections::HashMap::new();
    let mut wrong = Vec::new();
    for key in keys {
        let want = router.node_name(router.route(key.as_bytes()));
        let got = proxy_answer(key);
        if got != want {
            wrong.push(format!("{key:?}: proxy {got}, hashroute {want}"));
        }
        *spread.entry(got).or_insert(0usize) += 1;
    }
    assert!(
        wrong.is_empty(),
        "{}: {} of {} keys differ, e.g. {:?}",
        config.display(),
        wrong.len(),
        keys.len(),
        &wrong[..wrong.len().min(8)]
    );
    assert_eq!(spread.len(), router.node_count(), "every server got keys: {spread:?}");
    keys.len()
}

fn nginx_conf(dir: &TempDir, front: u16, backends: &[(u16, u32)]) -> String {
    let d = dir.0.display();
    let mut conf = format!(
        "master_process off;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{ worker_connections 256; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/cb;\n  proxy_temp_path {d}/px;\n  fastcgi_temp_path {d}/fc;\n  \
         uwsgi_temp_path {d}/uw;\n  scgi_temp_path {d}/sc;\n  upstream u_live {{\n    hash $request_uri consistent;\n"
    );
    for &(port, w) in backends {
        conf += &format!("    server 127.0.0.1:{port} weight={w} max_fails=0;\n");
    }
    conf += &format!(
        "  }}\n  server {{\n    listen 127.0.0.1:{front};\n    location / {{ proxy_pass http://u_live; }}\n  }}\n"
    );
    for &(port, _) in backends {
        conf += &format!(
            "  server {{\n    listen 127.0.0.1:{port};\n    location / {{ return 200 \"127.0.0.1:{port}\"; }}\n  }}\n"
        );
    }
    conf + "}\n"
}

#[test]
fn nginx_live() {
    let Some(nginx) = program_or_skip("nginx") else { return };
    let dir = TempDir::new("nginx");
    let ports = free_ports(6);
    let keys = uris(KEYS, 0x6e67);
    let mut backends: Vec<(u16, u32)> = ports[1..5].iter().zip([1, 1, 2, 5]).map(|(&p, w)| (p, w)).collect();
    let mut checked = 0;
    for round in 0..2 {
        if round == 1 {
            backends.push((ports[5], 3)); // the resize: one more server
        }
        let conf = dir.path("nginx.conf");
        std::fs::write(&conf, nginx_conf(&dir, ports[0], &backends)).unwrap();
        let mut cmd = Command::new(&nginx);
        cmd.arg("-p").arg(&dir.0).arg("-c").arg(&conf);
        let all: Vec<u16> = std::iter::once(ports[0]).chain(backends.iter().map(|b| b.0)).collect();
        let _proc = Proc::start(cmd, "nginx", &all, Some(dir.path("error.log")));
        checked += agree(&conf, "u_live", &keys, |key| http_get(ports[0], key, "x-none").0);
    }
    assert_eq!(checked, 2 * KEYS);
}

fn haproxy_conf(front: u16, servers: &[(&str, u16, u32, Option<u32>)]) -> String {
    let mut conf = "global\n    maxconn 256\n    nbthread 1\n\ndefaults\n    mode http\n    timeout connect 2s\n    \
                    timeout client 10s\n    timeout server 10s\n\n"
        .to_owned();
    conf += &format!(
        "frontend f_live\n    bind 127.0.0.1:{front}\n    default_backend b_live\n\nbackend b_live\n    balance uri\n    \
         hash-type consistent\n    http-response set-header X-Srv-Name %[srv_name]\n"
    );
    for &(name, port, w, id) in servers {
        let id = id.map_or(String::new(), |i| format!(" id {i}"));
        conf += &format!("    server {name} 127.0.0.1:{port} weight {w}{id}\n");
    }
    for &(name, port, _, _) in servers {
        conf += &format!(
            "\nfrontend be_{name}\n    bind 127.0.0.1:{port}\n    http-request return status 200 content-type text/plain string {name}\n"
        );
    }
    conf
}

#[test]
fn haproxy_live() {
    let Some(haproxy) = program_or_skip("haproxy") else { return };
    let dir = TempDir::new("haproxy");
    let ports = free_ports(6);
    let keys = uris(KEYS, 0x6870);
    let mut servers: Vec<(&str, u16, u32, Option<u32>)> = vec![
        ("s1", ports[1], 1, None),
        ("s2", ports[2], 1, Some(7)),
        ("s3", ports[3], 2, None),
        ("s4", ports[4], 5, None),
    ];
    let mut checked = 0;
    for round in 0..2 {
        if round == 1 {
            servers.push(("s5", ports[5], 3, None));
        }
        let conf = dir.path("haproxy.cfg");
        std::fs::write(&conf, haproxy_conf(ports[0], &servers)).unwrap();
        let mut cmd = Command::new(&haproxy);
        cmd.arg("-db").arg("-f").arg(&conf);
        let all: Vec<u16> = std::iter::once(ports[0]).chain(servers.iter().map(|s| s.1)).collect();
        let _proc = Proc::start(cmd, "haproxy", &all, None);
        checked += agree(&conf, "b_live", &keys, |key| {
            let (body, name) = http_get(ports[0], key, "x-srv-name");
            let name = name.unwrap_or_else(|| panic!("{key}: no X-Srv-Name header"));
            assert_eq!(body.trim(), name, "the backend that answered is the one HAProxy names");
            name
        });
    }
    assert_eq!(checked, 2 * KEYS);
}

/// Memcached text protocol: `set` through the proxy.
fn mc_set(s: &mut BufReader<TcpStream>, key: &str) {
    s.get_mut().write_all(format!("set {key} 0 0 1\r\nv\r\n").as_bytes()).unwrap();
    let mut line = String::new();
    s.read_line(&mut line).unwrap();
    assert_eq!(line, "STORED\r\n", "set {key}");
}

/// Whether a memcached holds `key`.
fn mc_has(s: &mut BufReader<TcpStream>, key: &str) -> bool {
    s.get_mut().write_all(format!("get {key}\r\n").as_bytes()).unwrap();
    let mut found = false;
    for _ in 0..4 {
        let mut line = String::new();
        s.read_line(&mut line).unwrap();
        if line == "END\r\n" {
            return found;
        }
        if line.starts_with("VALUE ") {
            found = true;
        }
    }
    panic!("get {key}: no END")
}

/// A nutcracker server line: port, weight, name.
type McServer<'a> = (u16, u32, Option<&'a str>);

fn nutcracker_conf(pools: &[(&str, u16, &str, &[McServer<'_>])]) -> String {
    let mut conf = String::new();
    for &(name, listen, hash, servers) in pools {
        conf += &format!(
            "{name}:\n  listen: 127.0.0.1:{listen}\n  hash: {hash}\n  distribution: ketama\n  auto_eject_hosts: false\n  \
             timeout: 2000\n  servers:\n"
        );
        for &(port, w, label) in servers {
            conf += &format!("   - 127.0.0.1:{port}:{w}{}\n", label.map_or(String::new(), |l| format!(" {l}")));
        }
    }
    conf
}

#[test]
fn twemproxy_live() {
    let (Some(nutcracker), Some(memcached)) = (program_or_skip("nutcracker"), program_or_skip("memcached")) else {
        return;
    };
    let dir = TempDir::new("nutcracker");
    let ports = free_ports(9);
    let (md5_port, fnv_port, stats_port) = (ports[0], ports[1], ports[2]);
    let mc_ports = &ports[3..];
    let _memcached: Vec<Proc> = mc_ports
        .iter()
        .map(|&p| {
            let mut cmd = Command::new(&memcached);
            cmd.args(["-l", "127.0.0.1", "-U", "0", "-t", "1", "-m", "16", "-u", "root", "-p"]).arg(p.to_string());
            Proc::start(cmd, "memcached", &[p], None)
        })
        .collect();
    let keys: Vec<String> = uris(KEYS, 0x7477).into_iter().map(|u| u.replace(['/', '?', '&', '='], ":")).collect();
    let mut md5_servers: Vec<McServer<'_>> = vec![
        (mc_ports[0], 1, Some("alpha")),
        (mc_ports[1], 1, Some("beta")),
        (mc_ports[2], 2, Some("gamma")),
        (mc_ports[3], 5, Some("delta")),
    ];
    let mut fnv_servers: Vec<McServer<'_>> = mc_ports[..4].iter().map(|&p| (p, 1, None)).collect();
    let mut checked = 0;
    for round in 0..2 {
        if round == 1 {
            md5_servers.push((mc_ports[4], 3, Some("epsilon")));
            fnv_servers.push((mc_ports[5], 1, None));
        }
        let conf = dir.path("nutcracker.yml");
        let all_mc: Vec<u16> = mc_ports.to_vec();
        std::fs::write(
            &conf,
            nutcracker_conf(&[
                ("md5_live", md5_port, "md5", &md5_servers),
                ("fnv_live", fnv_port, "fnv1a_64", &fnv_servers),
            ]),
        )
        .unwrap();
        let mut cmd = Command::new(&nutcracker);
        cmd.arg("-c").arg(&conf).arg("-o").arg(dir.path("nutcracker.log"));
        cmd.args(["-a", "127.0.0.1", "-s"]).arg(stats_port.to_string()).arg("-p").arg(dir.path("nutcracker.pid"));
        let _proc = Proc::start(cmd, "nutcracker", &[md5_port, fnv_port], Some(dir.path("nutcracker.log")));
        for (pool, port, servers) in [("md5_live", md5_port, &md5_servers), ("fnv_live", fnv_port, &fnv_servers)] {
            // Empty every memcached, store each key through the proxy, then find where it landed.
            let mut backends: Vec<(u16, BufReader<TcpStream>)> =
                all_mc.iter().map(|&p| (p, BufReader::new(connect(p)))).collect();
            for (_, b) in &mut backends {
                b.get_mut().write_all(b"flush_all\r\n").unwrap();
                let mut ok = String::new();
                b.read_line(&mut ok).unwrap();
                assert_eq!(ok, "OK\r\n");
            }
            let mut proxy = BufReader::new(connect(port));
            for key in &keys {
                mc_set(&mut proxy, key);
            }
            let name_of = |p: u16| {
                let (_, _, label) = servers.iter().find(|s| s.0 == p).copied().unwrap_or((p, 0, None));
                label.map_or(format!("127.0.0.1:{p}"), str::to_owned)
            };
            checked += agree(&conf, pool, &keys, |key| {
                let holders: Vec<u16> = backends.iter_mut().filter_map(|(p, b)| mc_has(b, key).then_some(*p)).collect();
                assert_eq!(holders.len(), 1, "{pool}: key {key:?} held by {holders:?}");
                name_of(holders[0])
            });
        }
    }
    assert_eq!(checked, 4 * KEYS);
}
