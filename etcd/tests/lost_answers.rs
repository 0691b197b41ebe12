//! Ring changes whose answer is lost, or whose write never arrives, against a real etcd
//! (scripts/install_etcd.sh) behind a loopback proxy that loses them on purpose
//! (tests/support/proxy.rs): every change still returns Ok, applied exactly once, whichever
//! way the connection failed. Each test starts its own etcd on free loopback ports and kills it
//! by its pid. Without `etcd` the tests print `SKIPPED: etcd not installed` and pass, unless
//! `CI` is set.

mod support;

use std::time::Duration;

use hashroute::{Algorithm, Node, RouterSpec};
use hashroute_etcd::{ChangeId, Client, Committed, MemberState, Options, RingError, RingState, RingStore, CHANGE_LOG};
use support::proxy::LossyProxy;
use support::{etcd_or_skip, Etcd};

const PREFIX: &str = "/hashroute/lossy";

fn start(test: &str) -> Option<(Etcd, LossyProxy)> {
    let bin = etcd_or_skip(test)?;
    let etcd = Etcd::start(&bin).unwrap_or_else(|e| panic!("{test}: {e}"));
    let port: u16 = etcd.endpoint().rsplit(':').next().unwrap().parse().unwrap();
    let proxy = LossyProxy::start(port);
    Some((etcd, proxy))
}

/// A store whose only endpoint is the proxy, with a 10 s time bound.
fn through(proxy: &LossyProxy, prefix: &str) -> RingStore {
    let options = Options::new().connect_timeout(Duration::from_secs(1)).request_timeout(Duration::from_secs(3));
    let client = Client::new(&[&proxy.endpoint()], options).unwrap();
    RingStore::new(client, prefix).unwrap().with_time_bound(Duration::from_secs(10))
}

/// Runs `change` with the proxy set to lose (or swallow) the next transaction; checks that it
/// returned Ok, that the serial grew by exactly one, and whether it says it was recovered.
fn once(
    s: &RingStore,
    proxy: &LossyProxy,
    lose: bool,
    change: impl FnOnce(&RingStore) -> Result<Committed, RingError>,
) -> RingState {
    let before = s.read().unwrap();
    if lose {
        proxy.lose_answers(1);
    } else {
        proxy.swallow(1);
    }
    let txns = proxy.txns();
    let c = change(s).unwrap_or_else(|e| panic!("lose={lose}: {e}"));
    assert!(proxy.txns() > txns);
    assert_eq!(c.recovered, lose, "an answer lost is found applied; a write lost is retried");
    let after = s.read().unwrap();
    assert_eq!(after.serial(), before.serial() + 1, "applied exactly once");
    assert_eq!(c.state.serial(), after.serial());
    after
}

#[test]
fn every_ring_change_survives_a_lost_answer_or_a_lost_write() {
    let Some((_etcd, proxy)) = start("every_ring_change_survives_a_lost_answer_or_a_lost_write") else { return };
    let s = through(&proxy, PREFIX);
    s.init(RouterSpec::new(Algorithm::Ring).with_vnodes(40)).unwrap();
    s.join(&Node::new("seed")).unwrap();
    for lose in [true, false] {
        let x = if lose { "x" } else { "y" };
        let st = once(&s, &proxy, lose, |s| s.join(&Node::new(x)));
        assert_eq!(st.members().iter().filter(|m| m.name() == x).count(), 1);
        let st = once(&s, &proxy, lose, |s| s.reweigh(x, 2.5));
        assert_eq!(st.member(x).unwrap().weight(), 2.5);
        let st = once(&s, &proxy, lose, |s| s.mark_down(x));
        assert_eq!(st.member(x).unwrap().state(), MemberState::Down);
        let st = once(&s, &proxy, lose, |s| s.mark_up(x));
        assert_eq!(st.member(x).unwrap().state(), MemberState::Active);
        let st = once(&s, &proxy, lose, |s| s.drain(x));
        assert_eq!(st.member(x).unwrap().state(), MemberState::Draining);
        let st = once(&s, &proxy, lose, |s| s.leave(x));
        assert!(st.member(x).is_none());
        let staged = format!("{x}-staged");
        let st = once(&s, &proxy, lose, |s| s.join_staged(&Node::new(staged.clone())));
        assert_eq!(st.member(&staged).unwrap().state(), MemberState::Joining);
    }

    // A token ring: the tokens allocated inside the transaction whose answer was lost are the
    // ones stored, once.
    let t = through(&proxy, "/hashroute/lossy-tokens");
    t.init(RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(8)).unwrap();
    t.join(&Node::new("seed")).unwrap();
    for (lose, name) in [(true, "t1"), (false, "t2")] {
        let st = once(&t, &proxy, lose, |t| t.join(&Node::new(name)));
        let mut tokens: Vec<i64> = st.members().iter().flat_map(|m| m.tokens().iter().copied()).collect();
        assert_eq!(st.member(name).unwrap().tokens().len(), 8);
        let n = tokens.len();
        tokens.sort_unstable();
        tokens.dedup();
        assert_eq!(tokens.len(), n, "no token twice");
    }
}

#[test]
fn a_change_id_settles_a_change_across_calls() {
    let Some((_etcd, proxy)) = start("a_change_id_settles_a_change_across_calls") else { return };
    let s = through(&proxy, PREFIX);
    s.init(RouterSpec::new(Algorithm::Ring).with_vnodes(40)).unwrap();
    let id = ChangeId::new();
    let join = |st: &RingState| st.with_member(&Node::new("a"), false);
    let first = s.change_with_id("join", &id, join).unwrap();
    assert!(!first.recovered);
    // The same id again (a caller that never saw the first answer): found applied, nothing
    // written, not a duplicate-member error.
    let again = s.change_with_id("join", &id, join).unwrap();
    assert!(again.recovered || !again.changed, "{again:?}");
    let st = s.read().unwrap();
    assert_eq!(st.serial(), first.state.serial());
    assert_eq!(st.change_serial(&id), Some(first.state.serial()));
    // A new id is a new change: the duplicate join is refused.
    assert!(matches!(s.join(&Node::new("a")), Err(RingError::DuplicateMember { .. })));
}

/// More changes than the change log keeps commit while an answer is lost (other writers, a
/// slow reply): etcd's history decides, applied or not, and the change lands exactly once.
#[test]
fn a_lost_answer_is_settled_from_history_when_the_log_moved_on() {
    let Some((etcd, proxy)) = start("a_lost_answer_is_settled_from_history_when_the_log_moved_on") else { return };
    let s = through(&proxy, PREFIX);
    s.init(RouterSpec::new(Algorithm::Ring).with_vnodes(40)).unwrap();
    s.join(&Node::new("busy")).unwrap();
    let direct = RingStore::new(Client::new(&[&etcd.endpoint()], Options::new()).unwrap(), PREFIX).unwrap();
    let others = CHANGE_LOG + 6;
    for (lose, name) in [(true, "x"), (false, "y")] {
        // The proxy first (it carries no watch), etcd itself second: the history watch goes to
        // etcd, where the client moves after the proxy failed the write.
        let options = Options::new().connect_timeout(Duration::from_secs(1)).request_timeout(Duration::from_secs(3));
        let client = Client::new(&[&proxy.endpoint(), &etcd.endpoint()], options).unwrap();
        let s = RingStore::new(client, PREFIX).unwrap().with_time_bound(Duration::from_secs(10));
        let before = s.read().unwrap();
        let d = direct.clone();
        proxy.meanwhile(move || {
            for i in 0..others {
                d.reweigh("busy", if i % 2 == 0 { 2.0 } else { 1.0 }).unwrap();
            }
        });
        if lose {
            proxy.lose_answers(1);
        } else {
            proxy.swallow(1);
        }
        let c = s.join(&Node::new(name)).unwrap_or_else(|e| panic!("lose={lose}: {e}"));
        assert_eq!(c.recovered, lose);
        let after = s.read().unwrap();
        assert_eq!(after.serial(), before.serial() + 1 + others as u64, "lose={lose}: applied exactly once");
        assert_eq!(after.members().iter().filter(|m| m.name() == name).count(), 1);
    }
}
