//! [`RingRouter`]: the router of a stored ring, with the state and fingerprint it came from.

use std::ops::ControlFlow;
use std::sync::Arc;

use hashroute::arcs::Arcs;
use hashroute::fingerprint::Fingerprint;
use hashroute::{Algorithm, AnyRouter, Failover, NodeId, NodeSet, Router};

use super::error::DecodeError;
use super::state::RingState;

/// The routes: the configured router alone while no member is down, else wrapped in
/// [`Failover`] (which needs a preference list, so only a ring with down members requires one).
#[derive(Debug, Clone)]
enum Routes {
    Plain(AnyRouter),
    Degraded(Failover<AnyRouter>),
}

/// The router of a stored ring ([`RingState::router`]), together with the state it was built
/// from and its fingerprint, so that one [`SharedRouter`](hashroute::SharedRouter) snapshot
/// gives routes, revision and fingerprint that belong together.
///
/// Routes like the configured algorithm over the routed members; members marked down are
/// routed around as [`Failover`] does (their keys go to the next live node of the preference
/// list, no other key moves). While no member is down, its routes, [`Router::arcs`] and
/// [`Router::canonical_bytes`] are the configured router's, so its fingerprint equals
/// `hashroute fingerprint` of the same nodes; a member marked down changes the routes and the
/// fingerprint (the probe encoding of [`hashroute::fingerprint()`]).
///
/// Cost of a route: the configured router's, plus one predictable branch while no member is
/// down; with members down, a preference walk for the keys whose primary is down.
#[derive(Debug, Clone)]
pub struct RingRouter {
    routes: Routes,
    state: Arc<RingState>,
    fingerprint: Fingerprint,
}

impl RingRouter {
    pub(crate) fn new(router: AnyRouter, down: &[&str], state: RingState) -> Result<RingRouter, DecodeError> {
        let routes = if down.is_empty() {
            Routes::Plain(router)
        } else {
            let mut failover = Failover::new(router)?;
            for name in down {
                failover.mark_down(name)?;
            }
            Routes::Degraded(failover)
        };
        let fingerprint = match &routes {
            Routes::Plain(r) => hashroute::fingerprint(r),
            Routes::Degraded(f) => hashroute::fingerprint(f),
        };
        Ok(RingRouter { routes, state: Arc::new(state), fingerprint })
    }

    /// The route fingerprint (computed once when the router was built).
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// The etcd revision of the ring's last change (0 for a state not read from etcd).
    pub fn revision(&self) -> i64 {
        self.state.revision()
    }

    /// The state this router was built from.
    pub fn state(&self) -> &RingState {
        &self.state
    }

    /// The configured router over the routed members, down members included as if they were
    /// up.
    pub fn configured(&self) -> &AnyRouter {
        match &self.routes {
            Routes::Plain(r) => r,
            Routes::Degraded(f) => f.inner(),
        }
    }

    /// Members marked down.
    pub fn down_count(&self) -> usize {
        match &self.routes {
            Routes::Plain(_) => 0,
            Routes::Degraded(f) => f.down_count(),
        }
    }

    /// Whether node `id` is marked down.
    pub fn is_down(&self, id: NodeId) -> bool {
        match &self.routes {
            Routes::Plain(_) => false,
            Routes::Degraded(f) => f.is_down(id),
        }
    }
}

impl Router for RingRouter {
    fn algorithm(&self) -> Algorithm {
        self.configured().algorithm()
    }

    fn nodes(&self) -> &NodeSet {
        self.configured().nodes()
    }

    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        match &self.routes {
            Routes::Plain(r) => r.route(key),
            Routes::Degraded(f) => f.route(key),
        }
    }

    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        match &self.routes {
            Routes::Plain(r) => r.route_batch(keys, out),
            Routes::Degraded(f) => f.route_batch(keys, out),
        }
    }

    fn route_hash(&self, hash: u64) -> hashroute::Result<NodeId> {
        match &self.routes {
            Routes::Plain(r) => r.route_hash(hash),
            Routes::Degraded(f) => f.route_hash(hash),
        }
    }

    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> hashroute::Result<()> {
        match &self.routes {
            Routes::Plain(r) => r.preference(key, visit),
            Routes::Degraded(f) => f.preference(key, visit),
        }
    }

    fn memory_bytes(&self) -> usize {
        let routes = match &self.routes {
            Routes::Plain(r) => r.memory_bytes(),
            Routes::Degraded(f) => f.memory_bytes(),
        };
        routes + std::mem::size_of::<RingState>() + self.state.heap_bytes()
    }

    fn arcs(&self) -> Option<Arcs<'_>> {
        match &self.routes {
            Routes::Plain(r) => r.arcs(),
            Routes::Degraded(_) => None,
        }
    }

    fn canonical_bytes(&self) -> Vec<u8> {
        match &self.routes {
            Routes::Plain(r) => r.canonical_bytes(),
            Routes::Degraded(f) => f.canonical_bytes(),
        }
    }
}
