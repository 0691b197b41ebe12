//! A throw-away etcd cluster of several members on 127.0.0.1, for the failover tests.
//!
//! Every member binds free loopback ports and keeps its data in one temporary directory of the
//! cluster. Members are started, killed (SIGKILL, as a crash), frozen (SIGSTOP: the process keeps
//! its ports open and answers nothing), thawed, restarted with their data, and removed and added
//! back through the gateway's cluster API, always by their own pid. Dropping the [`Cluster`] kills
//! every member it started and removes the directory. Every wait is bounded.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_loopback_port, make_temp_dir, raw_http};

/// Longest wait for a member to become healthy (a loaded 2-core machine, an election).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// One member: its ports, data directory and process.
#[derive(Debug)]
struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
    frozen: bool,
}

/// A running cluster, killed and cleaned up on drop.
#[derive(Debug)]
pub struct Cluster {
    binary: PathBuf,
    dir: PathBuf,
    members: Vec<Member>,
}

impl Cluster {
    /// Starts `n` members on free loopback ports and waits until every one is healthy (a
    /// leader is elected). Retries on fresh ports a few times when one was taken.
    ///
    /// # Errors
    /// The last failure, with the tail of a member's log.
    pub fn start(binary: &Path, n: usize) -> Result<Cluster, String> {
        let mut last = String::new();
        for _ in 0..3 {
            let dir = make_temp_dir("etcd-cluster").map_err(|e| format!("cannot create a temporary directory: {e}"))?;
            let mut members = Vec::new();
            let mut ports = std::collections::BTreeSet::new();
            while members.len() < n {
                let (c, p) = (
                    free_loopback_port().map_err(|e| e.to_string())?,
                    free_loopback_port().map_err(|e| e.to_string())?,
                );
                if c == p || !ports.insert(c) || !ports.insert(p) {
                    continue;
                }
                let name = format!("m{}", members.len());
                members.push(Member { name, client_port: c, peer_port: p, child: None, frozen: false });
            }
            let mut cluster = Cluster { binary: binary.to_owned(), dir, members };
            let initial = cluster.initial_cluster();
            let spawned: Result<(), String> = (0..n).try_for_each(|i| cluster.spawn(i, &initial, "new"));
            match spawned.and_then(|()| (0..n).try_for_each(|i| cluster.wait_healthy(i))) {
                Ok(()) => return Ok(cluster),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// `name=http://127.0.0.1:PEER,...` of every member.
    fn initial_cluster(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn data_dir(&self, i: usize) -> PathBuf {
        self.dir.join(&self.members[i].name)
    }

    fn log_path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("{}.log", self.members[i].name))
    }

    /// Starts member `i`'s process (its log appended) without waiting.
    fn spawn(&mut self, i: usize, initial_cluster: &str, state: &str) -> Result<(), String> {
        let m = &self.members[i];
        let client = format!("http://127.0.0.1:{}", m.client_port);
        let peer = format!("http://127.0.0.1:{}", m.peer_port);
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path(i))
            .map_err(|e| format!("cannot open the etcd log: {e}"))?;
        let child = Command::new(&self.binary)
            .args([
                format!("--name={}", m.name),
                format!("--data-dir={}", self.data_dir(i).display()),
                format!("--listen-client-urls={client}"),
                format!("--advertise-client-urls={client}"),
                format!("--listen-peer-urls={peer}"),
                format!("--initial-advertise-peer-urls={peer}"),
                format!("--initial-cluster={initial_cluster}"),
                format!("--initial-cluster-state={state}"),
                "--initial-cluster-token=hashroute-test".into(),
                "--logger=zap".into(),
                "--log-outputs=stderr".into(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.binary.display()))?;
        self.members[i].child = Some(child);
        self.members[i].frozen = false;
        Ok(())
    }

    /// Waits until member `i` answers `/health` true (it has a leader), at most 30 s.
    pub fn wait_healthy(&mut self, i: usize) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(Ok(Some(status))) = self.members[i].child.as_mut().map(Child::try_wait) {
                self.members[i].child = None;
                return Err(format!("member {i} exited with {status}{}", self.log_tail(i, 5)));
            }
            if self.healthy(i) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("member {i} not healthy in {START_TIMEOUT:?}{}", self.log_tail(i, 5)));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether member `i` answers `/health` true.
    pub fn healthy(&self, i: usize) -> bool {
        !self.members[i].frozen
            && matches!(raw_http(self.members[i].client_port, "GET", "/health", "", None),
                Ok((200, body)) if body.contains("\"health\":\"true\""))
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// `127.0.0.1:PORT` of member `i`'s client port.
    pub fn endpoint(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.members[i].client_port)
    }

    /// Every member's endpoint, in member order.
    pub fn endpoints(&self) -> Vec<String> {
        (0..self.members.len()).map(|i| self.endpoint(i)).collect()
    }

    /// Member `i`'s process id, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.members[i].child.as_ref().map(Child::id)
    }

    /// Whether member `i`'s process runs (frozen or not).
    pub fn is_running(&self, i: usize) -> bool {
        self.members[i].child.is_some()
    }

    /// The member that is leader, as the running, unfrozen members report it (`None` while
    /// they do not agree on one).
    pub fn leader(&self) -> Option<usize> {
        let mut seen = None;
        for i in (0..self.members.len()).filter(|&i| self.is_running(i) && !self.members[i].frozen) {
            let (id, leader) = self.status_ids(i)?;
            if id == leader {
                seen = Some(i);
            }
        }
        seen
    }

    /// Polls until the running members agree on a leader; its index.
    pub fn wait_leader(&self) -> Result<usize, String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(l) = self.leader() {
                return Ok(l);
            }
            if Instant::now() > deadline {
                return Err(format!("no leader in {START_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `(member id, leader id)` as member `i` reports them.
    fn status_ids(&self, i: usize) -> Option<(String, String)> {
        let (status, body) =
            raw_http(self.members[i].client_port, "POST", "/v3/maintenance/status", "{}", None).ok()?;
        if status != 200 {
            return None;
        }
        let field = |name: &str| body.split(&format!("\"{name}\":\"")).nth(1)?.split('"').next().map(str::to_owned);
        Some((field("member_id")?, field("leader")?))
    }

    /// Kills member `i` (SIGKILL, as a crash) and waits for it; its data stays.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.members[i].frozen = false;
    }

    /// Sends `signal` (`STOP`, `CONT`) to member `i` by its pid.
    fn signal(&mut self, i: usize, signal: &str) -> Result<(), String> {
        let pid = self.pid(i).ok_or_else(|| format!("member {i} is not running"))?;
        // The shell's builtin kill: no procps needed on a bare machine.
        let status = Command::new("sh")
            .args(["-c", &format!("kill -{signal} {pid}")])
            .status()
            .map_err(|e| format!("cannot run sh: {e}"))?;
        if !status.success() {
            return Err(format!("kill -{signal} {pid} failed: {status}"));
        }
        Ok(())
    }

    /// Freezes member `i` (SIGSTOP): its ports stay open, it answers nothing.
    pub fn freeze(&mut self, i: usize) -> Result<(), String> {
        self.signal(i, "STOP")?;
        self.members[i].frozen = true;
        Ok(())
    }

    /// Thaws member `i` (SIGCONT).
    pub fn thaw(&mut self, i: usize) -> Result<(), String> {
        self.signal(i, "CONT")?;
        self.members[i].frozen = false;
        Ok(())
    }

    /// Starts member `i` again with its data, on its ports, and waits until it is healthy.
    /// Retries for a while if the old process' ports are not free yet.
    pub fn restart(&mut self, i: usize) -> Result<(), String> {
        self.kill(i);
        let initial = self.initial_cluster();
        let mut last = String::new();
        for _ in 0..5 {
            self.spawn(i, &initial, "new")?;
            match self.wait_healthy(i) {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
            self.kill(i);
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(last)
    }

    /// Removes member `i` from the cluster (the cluster API on another running member), kills
    /// it and deletes its data.
    pub fn remove(&mut self, i: usize) -> Result<(), String> {
        let via = self.other_running(i)?;
        let id = self.member_id(via, i)?;
        // etcd refuses ("unhealthy cluster") until the members left have been connected to each
        // other for 5 s (its health interval), as after a restart: poll until it accepts.
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match self.call_ok(via, "/v3/cluster/member/remove", &format!("{{\"ID\":\"{id}\"}}")) {
                Ok(_) => break,
                Err(e) if e.contains("unhealthy cluster") && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(200))
                }
                Err(e) => return Err(e),
            }
        }
        self.kill(i);
        std::fs::remove_dir_all(self.data_dir(i)).map_err(|e| format!("cannot remove member {i}'s data: {e}"))
    }

    /// Adds member `i` back (after [`Cluster::remove`]): announces its peer URL through the
    /// cluster API, then starts it with empty data as a member joining an existing cluster, and
    /// waits until it is healthy (it has caught up with the leader's snapshot or log).
    pub fn add(&mut self, i: usize) -> Result<(), String> {
        let via = self.other_running(i)?;
        let peer = format!("http://127.0.0.1:{}", self.members[i].peer_port);
        self.call_ok(via, "/v3/cluster/member/add", &format!("{{\"peerURLs\":[\"{peer}\"]}}"))?;
        let initial = self.initial_cluster();
        self.spawn(i, &initial, "existing")?;
        self.wait_healthy(i)
    }

    /// The cluster's id for member `i`, from member `via`'s member list.
    fn member_id(&self, via: usize, i: usize) -> Result<String, String> {
        let body = self.call_ok(via, "/v3/cluster/member/list", "{}")?;
        let peer = format!("http://127.0.0.1:{}", self.members[i].peer_port);
        // Members are objects {"ID":"…","name":"…","peerURLs":[…],…}; find the one with our peer.
        body.split("{\"ID\":\"")
            .skip(1)
            .find(|m| m.contains(&peer))
            .and_then(|m| m.split('"').next())
            .map(str::to_owned)
            .ok_or_else(|| format!("member {i} ({peer}) not in the member list: {body}"))
    }

    fn other_running(&self, i: usize) -> Result<usize, String> {
        (0..self.members.len())
            .find(|&j| j != i && self.is_running(j) && !self.members[j].frozen)
            .ok_or_else(|| "no other running member".to_owned())
    }

    fn call_ok(&self, i: usize, path: &str, body: &str) -> Result<String, String> {
        match raw_http(self.members[i].client_port, "POST", path, body, None)? {
            (200, b) => Ok(b),
            (s, b) => Err(format!("{path} on member {i} answered HTTP {s}: {b}")),
        }
    }

    /// The last `lines` lines of member `i`'s log, for messages.
    pub fn log_tail(&self, i: usize, lines: usize) -> String {
        let text = std::fs::read_to_string(self.log_path(i)).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        format!(" [log: {}]", all[all.len().saturating_sub(lines)..].join(" | "))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SIGKILL by pid also ends a stopped process.
        for i in 0..self.members.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
