//! `hashroute ring`: one ring for every client, stored in etcd (the `hashroute-etcd` crate),
//! and `--etcd`/`--prefix` for `route` and `replicas` (the routes of the stored ring).
//!
//! Changes print `REVISION<TAB>FINGERPRINT` (the ring after the change; `-` while nothing is
//! routed), the same line `ring watch` prints when a watcher serves that ring, so a script can
//! wait until every watcher has a change. Every failure is one line and exit 1; an etcd that
//! does not answer fails within 20 s (the bound below). Within that bound a change rides
//! through etcd's own failures: an endpoint that does not answer is passed over, a leader
//! election is waited out, and a change whose answer was lost is read back and either found
//! applied or tried again (the library's `RingStore::change_with_id`), so it is applied exactly
//! once.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use hashroute::{Node, NodeId, Router};
use hashroute_etcd::{
    ChangeId, Client, Committed, MemberState, Options, RingError, RingEvent, RingRouter, RingState, RingStore,
    WatchConfig,
};

use crate::failure::Failure;
use crate::keys::{for_each_key, InputFormat, Key};
use crate::route::write_line;
use crate::router_args::AlgoArgs;
use crate::tokens_file;

/// Total time the etcd calls of one command may take (connecting, reading, retrying a change
/// through a leader election): every call is cut to what is left, so a command fails within
/// 20 s whatever etcd does (18 s, leaving the process time to start, connect and print).
const TOTAL_BOUND: Duration = Duration::from_secs(18);

/// The request timeout of one endpoint is this divided among the endpoints (2 to 5 s each):
/// long enough for a loaded etcd, short enough that an endpoint that does not answer (a frozen
/// member) leaves time to try the others and to retry.
const ENDPOINT_SHARE: Duration = Duration::from_secs(10);

/// Environment variable holding the password when `--user` gives only a name.
const PASSWORD_ENV: &str = "HASHROUTE_ETCD_PASSWORD";

/// A ring shared through etcd: create it, change its members, watch it
#[derive(Args, Debug)]
pub(crate) struct RingArgs {
    #[command(subcommand)]
    cmd: RingCmd,
}

#[derive(Subcommand, Debug)]
enum RingCmd {
    /// Create an empty ring with the router flags; refuses when anything is stored at the prefix
    Init(InitArgs),
    /// Add a member (a token ring allocates its tokens in the same transaction)
    Join(JoinArgs),
    /// Remove a member (jump and its family remove only their last one: use down)
    Leave(NameArgs),
    /// Mark a member down: its keys go to the next live node of their preference list, no other
    /// key moves (the delayed removal: leave later)
    Down(NameArgs),
    /// Make a member active again (down, staged join, or draining)
    Up(NameArgs),
    /// Stage a member's removal: still routed, absent from the staged view, until leave
    Drain(NameArgs),
    /// Change a member's weight
    Reweigh(ReweighArgs),
    /// The ring's fingerprint (as `hashroute fingerprint` prints it for the same nodes while no
    /// member is down), then NAME<TAB>WEIGHT<TAB>LABELS<TAB>STATE per member in node order
    Status(StatusFormatArgs),
    /// The routed token ring as a tokens file (NAME ZONE RACK TOKEN [WEIGHT])
    Tokens(StatusArgs),
    /// REVISION<TAB>FINGERPRINT for the ring now and for every new one, until killed; keeps going
    /// across etcd restarts
    Watch(StatusArgs),
}

/// Where the ring is: etcd endpoints, key prefix, credentials.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "etcd")]
pub(crate) struct EtcdArgs {
    /// etcd endpoints, comma-separated (http://, or https:// with --ca-file)
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]")]
    etcd: String,
    /// The ring's key prefix (keys PREFIX/config and PREFIX/members/NAME)
    #[arg(long, value_name = "PREFIX")]
    prefix: String,
    /// etcd user when auth is on: NAME:PASSWORD, or NAME with the password in $HASHROUTE_ETCD_PASSWORD
    #[arg(long, value_name = "NAME:PASSWORD")]
    user: Option<String>,
    /// PEM CA certificate(s) to verify etcd's https endpoints (needs the `tls` feature)
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
}

/// `ring init`: the etcd flags and the router flags.
#[derive(Args, Debug)]
#[command(mut_arg("algo", |a| a.required(true)))]
struct InitArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
    #[command(flatten)]
    algo: AlgoArgs,
}

/// `--change-id`: the idempotency token of one change.
#[derive(Args, Debug, Clone)]
struct ChangeIdArg {
    /// The change's id (1 to 64 letters, digits, '-' or '_'; default: a fresh random one). A
    /// change with an id already in the ring's change log is not applied again: rerun a command
    /// that ended "may or may not have been applied" with the id its message names
    #[arg(long, value_name = "ID", value_parser = parse_change_id)]
    change_id: Option<ChangeId>,
}

impl ChangeIdArg {
    fn id(&self) -> ChangeId {
        self.change_id.clone().unwrap_or_default()
    }
}

fn parse_change_id(text: &str) -> Result<ChangeId, String> {
    text.parse()
}

/// `ring join`.
#[derive(Args, Debug)]
struct JoinArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
    #[command(flatten)]
    change: ChangeIdArg,
    /// The member's name (its node name in routes)
    #[arg(value_name = "NAME")]
    name: String,
    /// Its weight
    #[arg(long, value_name = "W", default_value_t = 1.0)]
    weight: f64,
    /// Its zone (datacenter) label
    #[arg(long, value_name = "Z")]
    zone: Option<String>,
    /// Its rack label
    #[arg(long, value_name = "R")]
    rack: Option<String>,
    /// Stage the join: stored (tokens allocated) but not routed until `ring up NAME`
    #[arg(long)]
    stage: bool,
}

/// A command on one member.
#[derive(Args, Debug)]
struct NameArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
    #[command(flatten)]
    change: ChangeIdArg,
    /// The member's name
    #[arg(value_name = "NAME")]
    name: String,
}

/// `ring reweigh`.
#[derive(Args, Debug)]
struct ReweighArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
    #[command(flatten)]
    change: ChangeIdArg,
    /// The member's name
    #[arg(value_name = "NAME")]
    name: String,
    /// The new weight
    #[arg(value_name = "W")]
    weight: f64,
}

/// A command on the whole ring.
#[derive(Args, Debug)]
struct StatusArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
}

/// `ring status`: where the ring is, and how to print it.
#[derive(Args, Debug)]
struct StatusFormatArgs {
    #[command(flatten)]
    etcd: EtcdArgs,
    #[command(flatten)]
    format: crate::output::FormatArgs,
}

/// The router flags `--etcd` replaces (the stored ring decides the algorithm and the nodes):
/// those `--tokens-file` replaces, and `--tokens-file` itself.
const REPLACED: [&str; tokens_file::REPLACED.len() + 1] = {
    let mut all = [""; tokens_file::REPLACED.len() + 1];
    let mut i = 0;
    while i < tokens_file::REPLACED.len() {
        all[i] = tokens_file::REPLACED[i];
        i += 1;
    }
    all[i] = "tokens_file";
    all
};

/// `--etcd`, `--prefix`, `--user`, `--ca-file` on the router-building commands: the stored ring
/// instead of `--algo` and `--nodes*`.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Stored ring")]
pub(crate) struct StoredRingArgs {
    /// Route with the ring stored in etcd at these endpoints (with --prefix); replaces --algo and --nodes*
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]", requires = "prefix", conflicts_with_all = REPLACED)]
    etcd: Option<String>,
    /// The stored ring's key prefix
    #[arg(long, value_name = "PREFIX", requires = "etcd")]
    prefix: Option<String>,
    /// etcd user when auth is on: NAME:PASSWORD, or NAME with the password in $HASHROUTE_ETCD_PASSWORD
    #[arg(long, value_name = "NAME:PASSWORD", requires = "etcd")]
    user: Option<String>,
    /// PEM CA certificate(s) to verify etcd's https endpoints (needs the `tls` feature)
    #[arg(long, value_name = "FILE", requires = "etcd")]
    ca_file: Option<PathBuf>,
}

impl StoredRingArgs {
    /// Whether `--etcd` was given.
    pub(crate) fn is_set(&self) -> bool {
        self.etcd.is_some()
    }

    /// The stored ring's router, when `--etcd` was given.
    pub(crate) fn router(&self) -> Result<Option<RingRouter>, Failure> {
        let (Some(etcd), Some(prefix)) = (&self.etcd, &self.prefix) else { return Ok(None) };
        let args = EtcdArgs {
            etcd: etcd.clone(),
            prefix: prefix.clone(),
            user: self.user.clone(),
            ca_file: self.ca_file.clone(),
        };
        let state = args.store(Instant::now() + TOTAL_BOUND)?.read().map_err(ring_failure)?;
        state.router().map(Some).map_err(|e| ring_failure(RingError::Decode(e)))
    }
}

impl EtcdArgs {
    /// A client (one call proves etcd answers and the credentials are right) and the store,
    /// every call of which ends by `deadline`.
    fn store(&self, deadline: Instant) -> Result<RingStore, Failure> {
        let (client, prefix) = self.client()?;
        let client = client.with_deadline(deadline);
        client.check().map_err(|e| Failure::msg(e.to_string()))?;
        RingStore::new(client, prefix).map(|s| s.with_time_bound(TOTAL_BOUND)).map_err(ring_failure)
    }

    /// The store for a command that runs until killed (`ring watch`): its start is bounded, its
    /// watcher is not.
    fn unbounded_store(&self) -> Result<RingStore, Failure> {
        let (client, prefix) = self.client()?;
        client.with_deadline(Instant::now() + TOTAL_BOUND).check().map_err(|e| Failure::msg(e.to_string()))?;
        RingStore::new(client, prefix).map(|s| s.with_time_bound(TOTAL_BOUND)).map_err(ring_failure)
    }

    /// The client, not yet contacted, and the prefix.
    fn client(&self) -> Result<(Client, &str), Failure> {
        let endpoints: Vec<&str> = self.etcd.split(',').map(str::trim).filter(|e| !e.is_empty()).collect();
        let per_endpoint =
            (ENDPOINT_SHARE / endpoints.len().max(1) as u32).clamp(Duration::from_secs(2), Duration::from_secs(5));
        let mut options =
            Options::new().connect_timeout(per_endpoint.min(Duration::from_secs(2))).request_timeout(per_endpoint);
        if let Some(user) = &self.user {
            let (name, password) = match user.split_once(':') {
                Some((name, password)) => (name.to_owned(), password.to_owned()),
                None => (
                    user.clone(),
                    std::env::var(PASSWORD_ENV).map_err(|_| {
                        Failure::msg(format!("--user {user}: give NAME:PASSWORD, or the password in ${PASSWORD_ENV}"))
                    })?,
                ),
            };
            options = options.credentials(name, password);
        }
        if let Some(ca) = &self.ca_file {
            options = options.ca_file(ca);
        }
        let client = Client::new(&endpoints, options).map_err(|e| Failure::msg(e.to_string()))?;
        Ok((client, &self.prefix))
    }
}

fn ring_failure(e: RingError) -> Failure {
    Failure::msg(e.to_string())
}

pub(crate) fn run(args: RingArgs) -> Result<(), Failure> {
    let deadline = Instant::now() + TOTAL_BOUND;
    match args.cmd {
        RingCmd::Init(a) => init(a, deadline),
        RingCmd::Join(a) => join(a, deadline),
        RingCmd::Leave(a) => change(&a.etcd, &a.change, deadline, "leave", |s| s.without_member(&a.name)),
        RingCmd::Down(a) => {
            change(&a.etcd, &a.change, deadline, "down", |s| s.with_member_state(&a.name, MemberState::Down))
        }
        RingCmd::Up(a) => {
            change(&a.etcd, &a.change, deadline, "up", |s| s.with_member_state(&a.name, MemberState::Active))
        }
        RingCmd::Drain(a) => {
            change(&a.etcd, &a.change, deadline, "drain", |s| s.with_member_state(&a.name, MemberState::Draining))
        }
        RingCmd::Reweigh(a) => change(&a.etcd, &a.change, deadline, "reweigh", |s| s.with_weight(&a.name, a.weight)),
        RingCmd::Status(a) => {
            let state = a.etcd.store(deadline)?.read().map_err(ring_failure)?;
            let report = StatusReport::of(&state);
            if a.format.json() {
                return crate::output::print_json("hashroute.ring-status/1", &report.json());
            }
            print_status(&report)
        }
        RingCmd::Tokens(a) => tokens(&a.etcd.store(deadline)?.read().map_err(ring_failure)?),
        RingCmd::Watch(a) => watch(a.etcd.unbounded_store()?),
    }
}

fn init(args: InitArgs, deadline: Instant) -> Result<(), Failure> {
    let spec = args.algo.spec()?;
    print_committed(args.etcd.store(deadline)?.init(spec))
}

fn join(args: JoinArgs, deadline: Instant) -> Result<(), Failure> {
    let mut node = Node::new(args.name.clone()).with_weight(args.weight);
    for (key, value) in [("zone", &args.zone), ("rack", &args.rack)] {
        if let Some(v) = value {
            node = node.with_label(key, v.clone());
        }
    }
    change(&args.etcd, &args.change, deadline, "join", |s| s.with_member(&node, args.stage))
}

/// One change with its id (the one given, or a fresh one), printed as a commit; when its outcome
/// stays unknown, the message names the id to settle it with.
fn change(
    etcd: &EtcdArgs,
    id: &ChangeIdArg,
    deadline: Instant,
    what: &str,
    f: impl FnMut(&RingState) -> Result<RingState, RingError>,
) -> Result<(), Failure> {
    let id = id.id();
    match etcd.store(deadline)?.change_with_id(what, &id, f) {
        Err(e @ RingError::Unresolved { .. }) => {
            Err(Failure::msg(format!("{e}; run it again with --change-id {id} to settle it")))
        }
        done => print_committed(done),
    }
}

/// `REVISION<TAB>FINGERPRINT` of the ring after a change.
fn print_committed(done: Result<Committed, RingError>) -> Result<(), Failure> {
    let done = done.map_err(ring_failure)?;
    let mut out = io::stdout().lock();
    writeln!(out, "{}\t{}", done.revision, fingerprint_of(&done.state))?;
    out.flush()?;
    Ok(())
}

/// The routed ring's fingerprint, `-` when no member is routed.
fn fingerprint_of(state: &RingState) -> String {
    state.router().map(|r| r.fingerprint().to_string()).unwrap_or_else(|_| "-".into())
}

/// What `ring status` reports, computed apart from its printing (one struct, several formats).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StatusReport {
    /// The routed ring's fingerprint, `None` while no member is routed.
    pub(crate) fingerprint: Option<String>,
    /// The etcd revision of the ring's last change.
    pub(crate) revision: i64,
    /// The serial of the ring's last change.
    pub(crate) serial: u64,
    /// The members in node order.
    pub(crate) members: Vec<MemberReport>,
}

/// One member in a [`StatusReport`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MemberReport {
    pub(crate) name: String,
    pub(crate) weight: f64,
    /// `(key, value)` pairs, sorted by key.
    pub(crate) labels: Vec<(String, String)>,
    pub(crate) state: &'static str,
}

impl StatusReport {
    /// The figures of `state` (builds its router once, for the fingerprint).
    pub(crate) fn of(state: &RingState) -> StatusReport {
        StatusReport {
            fingerprint: state.router().ok().map(|r| r.fingerprint().to_string()),
            revision: state.revision(),
            serial: state.serial(),
            members: state
                .members()
                .iter()
                .map(|m| MemberReport {
                    name: m.name().to_owned(),
                    weight: m.weight(),
                    labels: m.labels().iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                    state: m.state().name(),
                })
                .collect(),
        }
    }
}

/// `ring status --format json` (docs/json.md): the text's figures, labels as an object.
#[derive(serde::Serialize)]
struct StatusJson<'a> {
    fingerprint: Option<&'a str>,
    revision: i64,
    serial: u64,
    members: Vec<MemberJson<'a>>,
}

/// One member of [`StatusJson`].
#[derive(serde::Serialize)]
struct MemberJson<'a> {
    name: &'a str,
    weight: f64,
    labels: std::collections::BTreeMap<&'a str, &'a str>,
    state: &'static str,
}

impl StatusReport {
    fn json(&self) -> StatusJson<'_> {
        StatusJson {
            fingerprint: self.fingerprint.as_deref(),
            revision: self.revision,
            serial: self.serial,
            members: self
                .members
                .iter()
                .map(|m| MemberJson {
                    name: &m.name,
                    weight: m.weight,
                    labels: m.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
                    state: m.state,
                })
                .collect(),
        }
    }
}

/// The fingerprint (`-` when nothing is routed), then `NAME<TAB>WEIGHT<TAB>LABELS<TAB>STATE` per
/// member in node order (labels `k=v,k=v` or `-`).
fn print_status(report: &StatusReport) -> Result<(), Failure> {
    let mut out = BufWriter::new(io::stdout().lock());
    writeln!(out, "{}", report.fingerprint.as_deref().unwrap_or("-"))?;
    for m in &report.members {
        let labels: Vec<String> = m.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let labels = if labels.is_empty() { "-".to_owned() } else { labels.join(",") };
        writeln!(out, "{}\t{}\t{labels}\t{}", m.name, m.weight, m.state)?;
    }
    out.flush()?;
    Ok(())
}

/// The routed token ring as a tokens file (`NAME ZONE RACK TOKEN [WEIGHT]`). The format needs a
/// zone and a rack on every line: members without them are written with Cassandra's
/// SimpleSnitch names, `datacenter1` and `rack1` (labels do not change routes or fingerprints).
fn tokens(state: &RingState) -> Result<(), Failure> {
    let router = state.router().map_err(|e| ring_failure(RingError::Decode(e)))?;
    let hashroute::AnyRouter::TokenRing(ring) = router.configured() else {
        return Err(Failure::msg(format!("the ring is {}, not token-ring: it has no tokens", router.algorithm())));
    };
    let mut defaulted = false;
    let nodes = ring.nodes().iter().map(|(_, n)| {
        let mut n = n.clone();
        for (key, default) in [("zone", "datacenter1"), ("rack", "rack1")] {
            if n.label(key).is_none() {
                n = n.with_label(key, default);
                defaulted = true;
            }
        }
        n
    });
    let text = hashroute::TokenRing::from_nodes(nodes.collect::<Vec<Node>>())?.to_tokens_file()?;
    if defaulted {
        note("members without a zone or rack label are written in datacenter1 / rack1");
    }
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Prints the ring served now and every new one until killed (or stdout closes); etcd outages
/// and refused revisions are notes on stderr while the last ring keeps being served.
fn watch(store: RingStore) -> Result<(), Failure> {
    let closed = Arc::new(AtomicBool::new(false));
    let flag = closed.clone();
    let config = WatchConfig::default().on_event(move |event: &RingEvent| {
        let line = match event {
            RingEvent::Serving { revision, fingerprint } => format!("{revision}\t{fingerprint}"),
            RingEvent::Unroutable { revision } => format!("{revision}\t-"),
            RingEvent::Refused { revision, error } => return note(&format!("revision {revision} refused: {error}")),
            RingEvent::Disconnected(e) => return note(&format!("{e}; still serving the last ring")),
            RingEvent::Following { endpoint, revision } => {
                return note(&format!("following etcd at {endpoint} (ring revision {revision})"))
            }
            RingEvent::Stale { revision, served } => {
                return note(&format!("revision {revision} is older than the ring served ({served}): not served"))
            }
            _ => return,
        };
        let mut out = io::stdout().lock();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            flag.store(true, Ordering::Release);
        }
    });
    let watcher = store.watch(config).map_err(ring_failure)?;
    // The watch thread does the work; this one only notices a closed stdout. Bounded per turn.
    while !closed.load(Ordering::Acquire) {
        let _ = watcher.wait_for_revision(i64::MAX, Duration::from_millis(500));
    }
    Err(Failure::BrokenPipe)
}

fn note(text: &str) {
    let _ = writeln!(io::stderr().lock(), "hashroute: note: {}", crate::one_line(text));
}

/// `route --etcd`: `KEY<TAB>NODE` per key with the stored ring.
pub(crate) fn route(router: &RingRouter, keys: &[OsString], input: InputFormat) -> Result<(), Failure> {
    if input == InputFormat::U64 {
        router.route_hash(0).map_err(|e| {
            Failure::msg(format!("--input {}: {e} (its key hash is not 64 bits, or a member is down)", input.name()))
        })?;
    }
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    for_each_key(keys, input, |raw, key| {
        let id = match key {
            Key::Bytes(bytes) => router.route(bytes),
            Key::Hash(hash) => router.route_hash(hash)?,
        };
        write_line(&mut out, raw, router.node_name(id).as_bytes())
    })?;
    out.flush()?;
    Ok(())
}

/// `replicas --etcd`: the first `n` nodes of each key's preference list (down members last).
pub(crate) fn replicas(router: &RingRouter, n: usize, keys: &[OsString], input: InputFormat) -> Result<(), Failure> {
    router.replicas(b"", n)?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut ids: Vec<NodeId> = Vec::with_capacity(n);
    for_each_key(keys, input, |raw, key| {
        let Key::Bytes(bytes) = key else { return Err(Failure::msg("replicas takes key bytes, not --input u64")) };
        ids.clear();
        router.preference(bytes, &mut |id| {
            ids.push(id);
            if ids.len() == n {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        let names: Vec<&str> = ids.iter().map(|&id| router.node_name(id)).collect();
        write_line(&mut out, raw, names.join(",").as_bytes())
    })?;
    out.flush()?;
    Ok(())
}
