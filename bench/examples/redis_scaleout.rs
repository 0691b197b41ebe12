//! Scale-out on real Redis servers: what happens to a read-through cache's hit rate and to the
//! backing store's load when a cache cluster grows from 4 to 8 nodes, per routing algorithm.
//!
//! By default the example starts 8 throw-away `redis-server` processes on free 127.0.0.1 ports
//! (non-cluster mode, `maxmemory` + `allkeys-lru`, persistence off), replays one seeded
//! Zipf(0.99) request stream per algorithm (GET; on a miss, count a backing-store read and SET),
//! grows the routed cluster from the first 4 servers to all 8 in the middle of the run, and
//! records the hit rate per window. The same stream also runs through an in-process exact-LRU
//! simulation sized with the key count Redis actually held, and the two are compared in
//! `results/redis_scaleout.md`.
//!
//! ```text
//! cargo run --release -p hashroute-bench --example redis_scaleout -- [--quick] [--algos modulo,ring160,...]
//!     [--schedule at-once|one-by-one|both] [--servers FILE --allow-flush [--keep-config]]
//!     [--keys N] [--requests N] [--windows N] [--budget-kb N] [--value-size N] [--seed N]
//!     [--zipf S] [--out DIR]
//! ```
//!
//! `--servers FILE` replays the experiment on your own servers (one `host:port` per line; the
//! first 4 are the initial cluster, the others are added; the lines are also the node names the
//! routers hash). It FLUSHALLs them, so it demands `--allow-flush`; use scratch servers sized
//! like production, never production itself. Unless `--keep-config` is given it also sets
//! `maxmemory` (empty `used_memory` + `--budget-kb`) and `allkeys-lru` on them; with
//! `--keep-config` their own limits apply, and if they never fill, the simulation's "capacity"
//! is simply the keys they held at the resize.

#[path = "../tests/redis_support/mod.rs"]
mod redis_support;

#[path = "redis_scaleout/lru.rs"]
mod lru;
#[path = "redis_scaleout/report.rs"]
mod report;
#[path = "redis_scaleout/routing.rs"]
mod routing;

use std::path::PathBuf;
use std::time::Instant;

use hashroute_analysis::{CacheSim, Lru};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use redis_support::RedisServer;

/// Servers of the initial cluster; the rest of the list is added.
pub(crate) const INITIAL: usize = 4;

/// How the added servers join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Schedule {
    /// All added servers in one membership change, at the middle window.
    AtOnce,
    /// One server every `windows / 10` windows from the middle window on (4 -> 5 -> … -> 8).
    OneByOne,
}

impl Schedule {
    /// CLI / CSV spelling.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Schedule::AtOnce => "at-once",
            Schedule::OneByOne => "one-by-one",
        }
    }

    /// Index (into the per-size router list) in force during `window`.
    fn router_index(self, window: usize, windows: usize, last: usize) -> usize {
        let mid = windows / 2;
        match (self, window < mid) {
            (_, true) => 0,
            (Schedule::AtOnce, false) => last,
            (Schedule::OneByOne, false) => ((window - mid) / (windows / 10).max(1) + 1).min(last),
        }
    }
}

/// Experiment parameters (see `usage`).
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) algos: Vec<String>,
    pub(crate) schedules: Vec<Schedule>,
    pub(crate) servers_file: Option<PathBuf>,
    pub(crate) allow_flush: bool,
    pub(crate) keep_config: bool,
    pub(crate) keys: usize,
    pub(crate) requests: usize,
    pub(crate) windows: usize,
    pub(crate) budget_kb: u64,
    pub(crate) value_size: usize,
    pub(crate) seed: u64,
    pub(crate) zipf: f64,
    pub(crate) batch: usize,
    pub(crate) out: PathBuf,
    pub(crate) command_line: String,
    /// The arguments as given, for the report's reproduce line.
    pub(crate) args: Vec<String>,
}

fn usage() -> &'static str {
    "usage: redis_scaleout [--quick] [--algos a,b,..] [--schedule at-once|one-by-one|both]\n\
     \x20      [--servers FILE --allow-flush [--keep-config]] [--keys N] [--requests N] [--windows N]\n\
     \x20      [--budget-kb N] [--value-size N] [--seed N] [--zipf S] [--batch N] [--out DIR]\n\
     algorithms: modulo, ring1, ring160, jump, rendezvous, slots (default: all)"
}

fn parse_args() -> Result<Config, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let mut cfg = Config {
        algos: routing::ALGORITHMS.iter().map(|a| a.0.to_string()).collect(),
        schedules: vec![Schedule::AtOnce, Schedule::OneByOne],
        servers_file: None,
        allow_flush: false,
        keep_config: false,
        keys: if quick { 20_000 } else { 50_000 },
        requests: if quick { 120_000 } else { 600_000 },
        windows: if quick { 40 } else { 60 },
        budget_kb: if quick { 256 } else { 640 },
        value_size: 100,
        seed: 42,
        zipf: 0.99,
        batch: 512,
        // The workspace root's results/ (this example lives in bench/).
        out: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("results"),
        command_line: std::iter::once("cargo run --release -p hashroute-bench --example redis_scaleout --".to_string())
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
        args: args.clone(),
    };
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value\n{}", usage()));
        fn num<T: std::str::FromStr>(name: &str, v: String) -> Result<T, String> {
            v.parse().map_err(|_| format!("{name}: {v:?} is not a valid number"))
        }
        match a.as_str() {
            "--quick" => {}
            "--allow-flush" => cfg.allow_flush = true,
            "--keep-config" => cfg.keep_config = true,
            "--algos" => cfg.algos = val("--algos")?.split(',').map(str::to_string).collect(),
            "--schedule" => {
                cfg.schedules = match val("--schedule")?.as_str() {
                    "at-once" => vec![Schedule::AtOnce],
                    "one-by-one" => vec![Schedule::OneByOne],
                    "both" => vec![Schedule::AtOnce, Schedule::OneByOne],
                    s => return Err(format!("--schedule {s:?}: expected at-once, one-by-one or both")),
                }
            }
            "--servers" => cfg.servers_file = Some(PathBuf::from(val("--servers")?)),
            "--keys" => cfg.keys = num("--keys", val("--keys")?)?,
            "--requests" => cfg.requests = num("--requests", val("--requests")?)?,
            "--windows" => cfg.windows = num("--windows", val("--windows")?)?,
            "--budget-kb" => cfg.budget_kb = num("--budget-kb", val("--budget-kb")?)?,
            "--value-size" => cfg.value_size = num("--value-size", val("--value-size")?)?,
            "--seed" => cfg.seed = num("--seed", val("--seed")?)?,
            "--zipf" => cfg.zipf = num("--zipf", val("--zipf")?)?,
            "--batch" => cfg.batch = num("--batch", val("--batch")?)?,
            "--out" => cfg.out = PathBuf::from(val("--out")?),
            "-h" | "--help" => return Err(usage().to_string()),
            other => return Err(format!("unknown argument {other:?}\n{}", usage())),
        }
    }
    for a in &cfg.algos {
        if !routing::ALGORITHMS.iter().any(|k| k.0 == a) {
            return Err(format!("--algos: unknown algorithm {a:?}\n{}", usage()));
        }
    }
    if cfg.keys == 0 || cfg.keys > u32::MAX as usize {
        return Err("--keys must be in 1..=4294967295".into());
    }
    if cfg.windows < 8 || cfg.requests < cfg.windows {
        return Err("--windows must be >= 8 and --requests >= --windows".into());
    }
    if cfg.batch == 0 {
        return Err("--batch must be positive".into());
    }
    if !(cfg.zipf.is_finite() && cfg.zipf >= 0.0) {
        return Err("--zipf must be a finite number >= 0".into());
    }
    if cfg.servers_file.is_some() && !cfg.allow_flush {
        return Err("--servers: the experiment runs FLUSHALL on every listed server; pass --allow-flush to confirm \
                    they are scratch servers"
            .into());
    }
    Ok(cfg)
}

/// A server the experiment talks to: its node name (what the routers hash) and address.
pub(crate) struct Endpoint {
    pub(crate) name: String,
    pub(crate) addr: String,
}

/// `host:port` lines, `#` comments and blank lines ignored; at least `INITIAL + 1` servers.
fn read_servers_file(path: &std::path::Path) -> Result<Vec<Endpoint>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--servers {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match line.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {}
            _ => return Err(format!("--servers {} line {}: expected host:port, got {line:?}", path.display(), n + 1)),
        }
        out.push(Endpoint { name: line.to_string(), addr: line.to_string() });
    }
    if out.len() <= INITIAL {
        return Err(format!(
            "--servers {}: {} servers listed; need {INITIAL} initial ones plus at least one to add",
            path.display(),
            out.len()
        ));
    }
    Ok(out)
}

/// Per-window counts of one live run and of its simulation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    pub(crate) nodes: usize,
    pub(crate) requests: u64,
    pub(crate) hits: u64,
    pub(crate) sim_hits: u64,
    pub(crate) sim_naive_hits: u64,
    pub(crate) sim_random_hits: u64,
}

/// One (schedule, algorithm) run.
#[derive(Clone, Debug)]
pub(crate) struct Run {
    pub(crate) schedule: Schedule,
    pub(crate) algo: String,
    pub(crate) windows: Vec<Window>,
    /// Traffic-weighted fraction of requests whose node changes, summed over the membership
    /// changes of the schedule.
    pub(crate) moved: f64,
    /// Unweighted fraction of the key universe that changes node, summed the same way.
    pub(crate) moved_keys: f64,
    /// Mean keys per initial server just before the resize (the simulation's capacity).
    pub(crate) keys_per_node: f64,
    /// Mean Redis bytes per key (used_memory above the empty baseline / keys) at that point.
    pub(crate) bytes_per_key: f64,
    pub(crate) evicted: u64,
    /// `hashroute_analysis::CacheSim`'s hit rate per window for the same parameters (its
    /// own request stream), at-once schedule only: the crate simulator's prediction.
    pub(crate) cachesim: Option<Vec<f64>>,
    pub(crate) seconds: f64,
}

struct Live {
    conns: Vec<redis::Connection>,
    baseline: Vec<u64>,
}

fn info_field(con: &mut redis::Connection, section: &str, field: &str) -> Result<u64, String> {
    let info: String = redis::cmd("INFO").arg(section).query(con).map_err(|e| format!("INFO {section}: {e}"))?;
    info.lines()
        .find_map(|l| l.strip_prefix(field).and_then(|r| r.strip_prefix(':')))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("INFO {section} has no numeric {field}"))
}

impl Live {
    /// Empties every server and (unless `keep_config`) sets `maxmemory` to the empty server's
    /// `used_memory` plus the budget, so each server holds `budget` bytes of cache data whatever
    /// its version's baseline.
    fn reset(&mut self, cfg: &Config) -> Result<(), String> {
        self.baseline.clear();
        for con in &mut self.conns {
            redis::cmd("FLUSHALL").query::<()>(con).map_err(|e| format!("FLUSHALL: {e}"))?;
            redis::cmd("CONFIG").arg("RESETSTAT").query::<()>(con).map_err(|e| format!("CONFIG RESETSTAT: {e}"))?;
            let used = info_field(con, "memory", "used_memory")?;
            self.baseline.push(used);
            if !cfg.keep_config {
                let max = used + cfg.budget_kb * 1024;
                redis::cmd("CONFIG")
                    .arg("SET")
                    .arg("maxmemory")
                    .arg(max)
                    .arg("maxmemory-policy")
                    .arg("allkeys-lru")
                    .query::<()>(con)
                    .map_err(|e| format!("CONFIG SET maxmemory: {e}"))?;
            }
        }
        Ok(())
    }
}

/// Zipf(s) over ranks `0..n` by inverse CDF: exact, O(log n) per draw, from a seeded generator.
fn zipf_stream(n: usize, s: f64, count: usize, seed: u64) -> (Vec<u32>, Vec<f64>) {
    let mut pmf: Vec<f64> = (0..n).map(|r| ((r + 1) as f64).powf(-s)).collect();
    let total: f64 = pmf.iter().sum();
    pmf.iter_mut().for_each(|p| *p /= total);
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for p in &pmf {
        acc += p;
        cdf.push(acc);
    }
    let mut rng = Pcg64::seed_from_u64(seed);
    let stream = (0..count)
        .map(|_| {
            let u: f64 = rng.gen();
            cdf.partition_point(|&c| c < u).min(n - 1) as u32
        })
        .collect();
    (stream, pmf)
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    cfg: &Config,
    live: &mut Live,
    schedule: Schedule,
    algo: &str,
    names: &[String],
    stream: &[u32],
    pmf: &[f64],
    keys: &[Vec<u8>],
) -> Result<Run, String> {
    let routers = routing::routers_for_growth(algo, names, INITIAL)?;
    let last = routers.len() - 1;
    // Route tables: node of every rank under every cluster size (routing is not what we measure).
    let tables: Vec<Vec<u8>> =
        routers.iter().map(|r| keys.iter().map(|k| r.route(k).index() as u8).collect()).collect();
    // Keys (and requests) that change node, summed over the schedule's membership changes.
    let changes: Vec<(usize, usize)> = match schedule {
        Schedule::AtOnce => vec![(0, last)],
        Schedule::OneByOne => (0..last).map(|i| (i, i + 1)).collect(),
    };
    let (mut moved, mut moved_keys) = (0.0, 0.0);
    for &(a, b) in &changes {
        let changed = || (0..keys.len()).filter(|&k| tables[a][k] != tables[b][k]);
        moved += changed().map(|k| pmf[k]).sum::<f64>();
        moved_keys += changed().count() as f64 / keys.len() as f64;
    }

    live.reset(cfg)?;
    let value = vec![b'v'; cfg.value_size];
    let per_window = stream.len() / cfg.windows;
    let mut windows = vec![Window::default(); cfg.windows];
    let (mut keys_per_node, mut bytes_per_key) = (0.0, 0.0);
    let started = Instant::now();
    let mut miss_in_batch = std::collections::HashSet::new();
    for (w, win) in windows.iter_mut().enumerate() {
        let ri = schedule.router_index(w, cfg.windows, last);
        if w == cfg.windows / 2 {
            // Calibration point: the initial cluster is warm and evicting.
            let mut keys_held = 0u64;
            let mut bytes = 0u64;
            for (i, con) in live.conns.iter_mut().take(INITIAL).enumerate() {
                keys_held += redis::cmd("DBSIZE").query::<u64>(con).map_err(|e| format!("DBSIZE: {e}"))?;
                bytes += info_field(con, "memory", "used_memory")?.saturating_sub(live.baseline[i]);
            }
            keys_per_node = keys_held as f64 / INITIAL as f64;
            bytes_per_key = bytes as f64 / keys_held.max(1) as f64;
        }
        win.nodes = INITIAL + ri;
        let table = &tables[ri];
        let end = if w + 1 == cfg.windows { stream.len() } else { (w + 1) * per_window };
        for batch in stream[w * per_window..end].chunks(cfg.batch) {
            let mut per_node: Vec<Vec<usize>> = vec![Vec::new(); win.nodes];
            for (i, &r) in batch.iter().enumerate() {
                per_node[table[r as usize] as usize].push(i);
            }
            let mut found = vec![false; batch.len()];
            for (node, idxs) in per_node.iter().enumerate() {
                if idxs.is_empty() {
                    continue;
                }
                let mut pipe = redis::pipe();
                for &i in idxs {
                    pipe.cmd("GET").arg(keys[batch[i] as usize].as_slice());
                }
                let got: Vec<Option<Vec<u8>>> = pipe.query(&mut live.conns[node]).map_err(|e| format!("GET: {e}"))?;
                for (&i, g) in idxs.iter().zip(got) {
                    found[i] = g.is_some();
                }
            }
            // Misses in request order: a key missed earlier in this batch was SET by then in a
            // sequential client, so its repeats count as hits and it is written once.
            miss_in_batch.clear();
            let mut sets: Vec<(redis::Pipeline, usize)> = (0..win.nodes).map(|_| (redis::pipe(), 0)).collect();
            for (i, &r) in batch.iter().enumerate() {
                if found[i] || !miss_in_batch.insert(r) {
                    win.hits += 1;
                } else {
                    let (pipe, n) = &mut sets[table[r as usize] as usize];
                    pipe.cmd("SET").arg(keys[r as usize].as_slice()).arg(value.as_slice()).ignore();
                    *n += 1;
                }
            }
            for (node, (pipe, n)) in sets.iter().enumerate() {
                if *n > 0 {
                    pipe.query::<()>(&mut live.conns[node]).map_err(|e| format!("SET: {e}"))?;
                }
            }
            win.requests += batch.len() as u64;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut evicted = 0;
    for con in &mut live.conns {
        evicted += info_field(con, "stats", "evicted_keys")?;
    }

    // The in-process prediction on the same stream and routes: exact LRU per node, once with
    // the key count Redis really held, once with the naive "budget / value size" capacity.
    let naive = (cfg.budget_kb * 1024) as usize / cfg.value_size.max(1);
    for (cap, naive_run) in [(keys_per_node.round() as usize, false), (naive, true)] {
        let mut caches: Vec<Lru> = (0..names.len()).map(|_| Lru::new(cap)).collect();
        for (w, win) in windows.iter_mut().enumerate() {
            let table = &tables[schedule.router_index(w, cfg.windows, last)];
            let end = if w + 1 == cfg.windows { stream.len() } else { (w + 1) * per_window };
            let hits =
                stream[w * per_window..end].iter().filter(|&&r| caches[table[r as usize] as usize].access(r)).count();
            if naive_run {
                win.sim_naive_hits = hits as u64;
            } else {
                win.sim_hits = hits as u64;
            }
        }
    }
    let mut caches: Vec<lru::RandomEvict> =
        (0..names.len()).map(|i| lru::RandomEvict::new(keys_per_node.round() as usize, cfg.seed ^ i as u64)).collect();
    for (w, win) in windows.iter_mut().enumerate() {
        let table = &tables[schedule.router_index(w, cfg.windows, last)];
        let end = if w + 1 == cfg.windows { stream.len() } else { (w + 1) * per_window };
        win.sim_random_hits =
            stream[w * per_window..end].iter().filter(|&&r| caches[table[r as usize] as usize].access(r)).count()
                as u64;
    }
    let cachesim = (schedule == Schedule::AtOnce).then(|| {
        CacheSim {
            universe: cfg.keys,
            zipf_s: cfg.zipf,
            capacity_per_node: keys_per_node.round() as usize,
            before: per_window * (cfg.windows / 2),
            after: per_window * (cfg.windows - cfg.windows / 2),
            window: per_window,
            seed: cfg.seed,
        }
        .run(&*routers[0], &*routers[last])
        .hit_rate
    });
    Ok(Run {
        schedule,
        algo: algo.to_string(),
        windows,
        moved,
        moved_keys,
        cachesim,
        keys_per_node,
        bytes_per_key,
        evicted,
        seconds,
    })
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("redis_scaleout: {e}");
        std::process::exit(2);
    }
}

fn real_main() -> Result<(), String> {
    let cfg = parse_args()?;
    // Guards first: whatever fails later, dropping them kills the servers.
    let mut guards: Vec<RedisServer> = Vec::new();
    let (endpoints, server_desc) = match &cfg.servers_file {
        Some(path) => (read_servers_file(path)?, format!("servers from {}", path.display())),
        None => {
            let binary = redis_support::find_binary()
                .map_err(|e| format!("redis-server not found ({e}); run scripts/install_redis.sh or pass --servers"))?;
            let version = std::process::Command::new(&binary)
                .arg("--version")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            let budget = format!("{}", cfg.budget_kb * 1024 + 2 * 1024 * 1024);
            for _ in 0..2 * INITIAL {
                guards.push(RedisServer::start(
                    &binary,
                    false,
                    &["--maxmemory", &budget, "--maxmemory-policy", "allkeys-lru"],
                )?);
            }
            let eps = guards
                .iter()
                .enumerate()
                .map(|(i, g)| Endpoint { name: format!("node-{i}"), addr: g.addr().to_string() })
                .collect();
            (eps, format!("{} local loopback servers ({version})", 2 * INITIAL))
        }
    };
    let names: Vec<String> = endpoints.iter().map(|e| e.name.clone()).collect();
    let mut conns = Vec::new();
    for ep in &endpoints {
        let client = redis::Client::open(format!("redis://{}/", ep.addr)).map_err(|e| format!("{}: {e}", ep.addr))?;
        conns.push(client.get_connection().map_err(|e| format!("connect {}: {e}", ep.addr))?);
    }
    let mut live = Live { conns, baseline: Vec::new() };

    let (stream, pmf) = zipf_stream(cfg.keys, cfg.zipf, cfg.requests, cfg.seed);
    let keys: Vec<Vec<u8>> = (0..cfg.keys).map(|r| format!("scaleout:{r}").into_bytes()).collect();
    eprintln!(
        "redis_scaleout: {server_desc}; {} requests over {} keys (Zipf {}), {} windows, budget {} KiB/server",
        cfg.requests, cfg.keys, cfg.zipf, cfg.windows, cfg.budget_kb
    );
    let total = Instant::now();
    let mut runs = Vec::new();
    for &schedule in &cfg.schedules {
        for algo in &cfg.algos {
            let run = run_one(&cfg, &mut live, schedule, algo, &names, &stream, &pmf, &keys)?;
            eprintln!(
                "  {:10} {:10} {:5.1}s  hit before {:.3} dip {:.3} after {:.3}  moved {:.3}  {:.0} keys/node",
                schedule.name(),
                algo,
                run.seconds,
                report::before(&run, |w| w.hits),
                report::dip(&run, |w| w.hits),
                report::after(&run, |w| w.hits),
                run.moved,
                run.keys_per_node
            );
            runs.push(run);
        }
    }
    report::write_all(&cfg, &server_desc, &runs, total.elapsed().as_secs_f64())?;
    drop(live);
    drop(guards);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_grow_at_the_middle() {
        let idx = |s: Schedule| (0..40).map(|w| s.router_index(w, 40, 4)).collect::<Vec<_>>();
        let at_once = idx(Schedule::AtOnce);
        assert!(at_once[..20].iter().all(|&i| i == 0) && at_once[20..].iter().all(|&i| i == 4));
        let steps = idx(Schedule::OneByOne);
        assert_eq!(&steps[18..34], &[0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4]);
        assert!(steps[34..].iter().all(|&i| i == 4));
    }

    #[test]
    fn zipf_stream_is_seeded_and_skewed() {
        let (a, pmf) = zipf_stream(1000, 0.99, 20_000, 7);
        let (b, _) = zipf_stream(1000, 0.99, 20_000, 7);
        assert_eq!(a, b);
        assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let zeros = a.iter().filter(|&&r| r == 0).count() as f64 / a.len() as f64;
        assert!((zeros - pmf[0]).abs() < 0.02, "rank 0 drawn {zeros}, expected {}", pmf[0]);
        assert!(a.iter().all(|&r| r < 1000));
    }

    #[test]
    fn random_eviction_keeps_capacity() {
        let mut c = lru::RandomEvict::new(10, 1);
        let hits = (0..1000u32).filter(|&k| c.access(k % 50)).count();
        assert!(hits > 0 && hits < 1000);
        assert!(!c.access(12_345), "never seen: a miss");
        assert!(c.access(12_345), "inserted on the miss");
    }
}
