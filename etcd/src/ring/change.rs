//! Ring changes as pure functions from one [`RingState`] to the next.
//!
//! The store runs them between its read and its compare-and-swap, so each is computed from the
//! exact state it replaces. Each validates with the kernel: the change itself on the router of
//! every member (so the kernel's rules hold: jump removes only its last node, weights only where
//! the algorithm has them, a token ring's join allocates its tokens with
//! [`TokenRing::with_node`](hashroute::TokenRing::with_node)), then the routed and staged
//! routers of the result. A change that returns the state unchanged (same serial) is a no-op.

use hashroute::{Algorithm, AnyRouter, Node, NodeSet, Router};

use super::error::{quote_text, DecodeError, RingError};
use super::state::{check_labels, check_name, Member, MemberState, RingState};

impl RingState {
    /// The ring with `node` joined, active (or [`MemberState::Joining`] when `staged`), at the
    /// end of the node order. On a token ring a node without tokens gets
    /// [`tokens_per_node`](hashroute::RouterSpec::tokens_per_node) tokens from the kernel's
    /// allocator, computed against every member's tokens (staged ones included), so keys move
    /// only to the new member; a node with tokens keeps them (they must not clash).
    ///
    /// # Errors
    /// [`RingError::InvalidMember`] for a bad name, label or weight, or tokens on another
    /// algorithm; [`RingError::DuplicateMember`]; [`RingError::Refused`] when the kernel
    /// refuses the result.
    pub fn with_member(&self, node: &Node, staged: bool) -> Result<RingState, RingError> {
        let name = node.name();
        let invalid = |reason: String| RingError::InvalidMember { name: quote_text(name), reason };
        check_name(name).map_err(invalid)?;
        check_labels(node.labels()).map_err(invalid)?;
        check_weight(node.weight()).map_err(invalid)?;
        if self.member(name).is_some() {
            return Err(RingError::DuplicateMember { name: quote_text(name) });
        }
        let token_ring = self.spec.algorithm == Algorithm::TokenRing;
        if !token_ring && !node.tokens().is_empty() {
            return Err(invalid(format!("tokens apply to token-ring only, this ring is {}", self.spec.algorithm)));
        }
        let after = match self.full_router()? {
            Some(full) => full.with_node(node.clone()),
            None => NodeSet::new([node.clone()]).and_then(|nodes| self.spec.build(nodes)),
        }
        .map_err(RingError::Refused)?;
        let mut members = self.members.clone();
        members.push(Member {
            name: name.to_owned(),
            weight: node.weight(),
            labels: node.labels().clone(),
            state: if staged { MemberState::Joining } else { MemberState::Active },
            tokens: Vec::new(),
            order: self.next_order,
            serial: 0,
        });
        self.finish(members, self.next_order + 1, token_ring.then(|| after.nodes()))
    }

    /// The ring without member `name` (any state). On a token ring the kernel's allocator hands
    /// its ranges to other members ([`TokenRing::without_node`](hashroute::TokenRing)), whose
    /// token lists change accordingly.
    ///
    /// # Errors
    /// [`RingError::UnknownMember`]; [`RingError::Refused`] when the kernel refuses the removal
    /// (jump and its family remove only their last node: mark others down instead) or it would
    /// leave no routed member.
    pub fn without_member(&self, name: &str) -> Result<RingState, RingError> {
        self.require(name)?;
        let members: Vec<Member> = self.members.iter().filter(|m| m.name != name).cloned().collect();
        if members.is_empty() {
            return self.finish(members, self.next_order, None);
        }
        let full = self.full_router()?.ok_or_else(|| RingError::UnknownMember { name: quote_text(name) })?;
        let after = full.without_node(name).map_err(RingError::Refused)?;
        let token_ring = self.spec.algorithm == Algorithm::TokenRing;
        self.finish(members, self.next_order, token_ring.then(|| after.nodes()))
    }

    /// The ring with member `name` at `weight`. On a token ring the allocator moves ranges
    /// between that member and the others only.
    ///
    /// # Errors
    /// [`RingError::UnknownMember`], [`RingError::InvalidMember`] for a weight that is not a
    /// finite number above 0, [`RingError::Refused`] for an algorithm without weights.
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<RingState, RingError> {
        let member = self.require(name)?;
        check_weight(weight).map_err(|reason| RingError::InvalidMember { name: quote_text(name), reason })?;
        if member.weight == weight {
            return Ok(self.clone());
        }
        let full = self.full_router()?.ok_or_else(|| RingError::UnknownMember { name: quote_text(name) })?;
        let after = full.with_weight(name, weight).map_err(RingError::Refused)?;
        let mut members = self.members.clone();
        for m in members.iter_mut().filter(|m| m.name == name) {
            m.weight = weight;
        }
        let token_ring = self.spec.algorithm == Algorithm::TokenRing;
        self.finish(members, self.next_order, token_ring.then(|| after.nodes()))
    }

    /// The ring with member `name` in `state`: `down` (from active or draining), `active` (from
    /// down, joining or draining; a joining member moves to the end of the node order) or
    /// `draining` (from active). The same state is a no-op.
    ///
    /// # Errors
    /// [`RingError::UnknownMember`], [`RingError::InvalidTransition`], [`RingError::Refused`]
    /// when the kernel refuses the result (every routed member down, an algorithm without
    /// preference lists cannot route around a down member).
    pub fn with_member_state(&self, name: &str, state: MemberState) -> Result<RingState, RingError> {
        let member = self.require(name)?;
        let from = member.state;
        if from == state {
            return Ok(self.clone());
        }
        let refuse = |reason| Err(RingError::InvalidTransition { name: quote_text(name), state: from, reason });
        match (from, state) {
            (_, MemberState::Joining) => return refuse("only a join stages a member"),
            (MemberState::Joining, _) if state != MemberState::Active => {
                return refuse("it is not routed yet (up activates it, leave cancels the join)")
            }
            (MemberState::Down, MemberState::Draining) => {
                return refuse("it is down (leave removes it; up first to drain it while it serves)")
            }
            _ => {}
        }
        let mut members = self.members.clone();
        let mut next_order = self.next_order;
        for m in members.iter_mut().filter(|m| m.name == name) {
            m.state = state;
            if from == MemberState::Joining {
                // Entering the routed set appends it, as a join would.
                m.order = next_order;
                next_order += 1;
            }
        }
        self.finish(members, next_order, None)
    }

    fn require(&self, name: &str) -> Result<&Member, RingError> {
        self.member(name).ok_or_else(|| RingError::UnknownMember { name: quote_text(name) })
    }

    /// The router over every member in node order, whatever its state (tokens included): what
    /// the kernel's incremental changes are checked and allocated on.
    fn full_router(&self) -> Result<Option<AnyRouter>, RingError> {
        if self.members.is_empty() {
            return Ok(None);
        }
        let nodes = NodeSet::new(self.members.iter().map(Member::node)).map_err(DecodeError::Router)?;
        Ok(Some(self.spec.build(nodes).map_err(DecodeError::Router)?))
    }

    /// The next state: `members` (tokens taken from `tokens` when given), serial + 1 on the
    /// state and on every member that changed, checked by building its routers.
    fn finish(
        &self,
        mut members: Vec<Member>,
        next_order: u64,
        tokens: Option<&NodeSet>,
    ) -> Result<RingState, RingError> {
        if let Some(nodes) = tokens {
            for m in &mut members {
                if let Some(id) = nodes.id_of(&m.name) {
                    m.tokens = nodes.get(id).tokens().to_vec();
                }
            }
        }
        members.sort_unstable_by_key(|m| m.order);
        let serial = self.serial + 1;
        for m in &mut members {
            let unchanged = self.member(&m.name).is_some_and(|old| Member { serial: old.serial, ..m.clone() } == *old);
            if !unchanged {
                m.serial = serial;
            }
        }
        let next = RingState {
            spec: self.spec.clone(),
            serial,
            next_order,
            members,
            revision: self.revision,
            changes: self.changes.clone(),
        };
        next.check_routable(self)?;
        Ok(next)
    }

    /// The routed and staged routers of a new state build; a state may have no routed member
    /// only if the one before had none either (a new ring, staged joins).
    fn check_routable(&self, before: &RingState) -> Result<(), RingError> {
        let routed = match self.router() {
            Ok(_) => true,
            Err(DecodeError::Empty) if !before.has_routed_members() => false,
            Err(DecodeError::Empty) => {
                return Err(RingError::Refused(hashroute::Error::InvalidParameter {
                    name: "members",
                    reason: "the change would leave no routed member".into(),
                }))
            }
            Err(DecodeError::Router(e)) => return Err(RingError::Refused(e)),
            Err(e) => return Err(RingError::Decode(e)),
        };
        if !self.has_staged_changes() {
            // The staged view is the routed ring itself: built and checked above.
            return Ok(());
        }
        match self.target_router() {
            Ok(_) => Ok(()),
            Err(DecodeError::Empty) if !routed => Ok(()),
            Err(DecodeError::Empty) => Err(RingError::Refused(hashroute::Error::InvalidParameter {
                name: "members",
                reason: "the staged changes would leave no member (keep one active)".into(),
            })),
            Err(DecodeError::Router(e)) => Err(RingError::Refused(e)),
            Err(e) => Err(RingError::Decode(e)),
        }
    }
}

/// A finite weight above 0.
fn check_weight(weight: f64) -> Result<(), String> {
    if weight.is_finite() && weight > 0.0 {
        Ok(())
    } else {
        Err(format!("weight {weight} is not a finite number above 0"))
    }
}
