//! The tokens file (`NAME ZONE RACK TOKEN [WEIGHT]`) and what the CLI's `tokens add|remove|
//! reweigh` do with it: any text gives a one-line error naming the line, or a ring that writes
//! back to an equal ring; then one membership change (as the CLI makes it) moves keys only to
//! the added node, only off the removed one, or only between the reweighed node and the others,
//! leaves every other node's token positions with that node (the allocator may move or merge
//! a token, not hand its range away), and writes a file that reads back to the same ring.
#![no_main]

use hashroute::{fingerprint, Node, Router, TokenRing};
use libfuzzer_sys::fuzz_target;

/// A membership change, from the input's first bytes.
#[derive(Debug)]
enum Change {
    Add { name: String, weight: u8 },
    Remove(u8),
    Reweigh(u8, u8),
}

/// Rings larger than this are skipped: a membership change rebuilds the allocator (O(P log P)).
const MAX_TOKENS: usize = 4096;

// Input: byte 0 picks the change, byte 1 its node (or weight), byte 2 the tokens per node, the
// rest is the tokens file (seeds: the golden tokens files behind a 3-byte header).
fuzz_target!(|data: &[u8]| {
    let [kind, which, v, text @ ..] = data else { return };
    let text = String::from_utf8_lossy(text);
    let change = match kind % 3 {
        0 => Change::Add { name: format!("fuzz-{which}"), weight: *which },
        1 => Change::Remove(*which),
        _ => Change::Reweigh(*which, kind / 3),
    };
    let ring = match TokenRing::parse(&text) {
        Ok(ring) => ring,
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "error is not one line: {msg}");
            return;
        }
    };
    // The file reads back to the same ring, and writing is stable.
    let written = ring.to_tokens_file().expect("a parsed ring can be written");
    let reread = TokenRing::parse(&written).expect("the written file parses");
    assert_eq!(fingerprint(&reread), fingerprint(&ring), "write/read changed the routes");
    assert_eq!(reread.to_tokens_file().unwrap(), written, "writing is not stable");
    if ring.token_count() > MAX_TOKENS {
        return;
    }
    let Ok(ring) = ring.with_tokens_per_node(u32::from(v % 64) + 1) else { return };
    change_and_check(&ring, &change);
});

/// Applies one change as the CLI does and checks movement and the written file.
fn change_and_check(ring: &TokenRing, change: &Change) {
    let name_at =
        |i: u8| ring.node_name(hashroute::NodeId::from_index(u32::from(i) % ring.node_count() as u32)).to_owned();
    let (after, who) = match change {
        Change::Add { name, weight } => {
            let node = Node::new(name.clone())
                .with_weight(f64::from(weight % 4 + 1))
                .with_label("zone", "dc1")
                .with_label("rack", "rack1");
            (ring.with_node(node), name.clone())
        }
        Change::Remove(i) => {
            let name = name_at(*i);
            (ring.without_node(&name), name)
        }
        Change::Reweigh(i, w) => {
            let name = name_at(*i);
            (ring.with_weight(&name, f64::from(w % 4 + 1)), name)
        }
    };
    let Ok(after) = after else { return };
    // Minimal movement on the token space: sampled positions change owner only to or from the
    // changed node (by name).
    for i in 0..512u64 {
        let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let (a, b) = (ring.route_hash(h).unwrap(), after.route_hash(h).unwrap());
        let (a, b) = (ring.node_name(a), after.node_name(b));
        assert!(a == b || a == who || b == who, "position {h:#x} moved {a} -> {b}, not involving {who}");
    }
    // Existing tokens of the other nodes stay where they were, with the same owner.
    for (token, owner) in ring.tokens() {
        let name = ring.node_name(owner);
        if name != who {
            let now = after.route_token(token);
            assert!(
                after.node_name(now) == name || after.node_name(now) == who,
                "token {token} of {name} now routes to {}",
                after.node_name(now)
            );
        }
    }
    if let Ok(text) = after.to_tokens_file() {
        let reread = TokenRing::parse(&text).expect("the changed ring's file parses");
        assert_eq!(fingerprint(&reread), fingerprint(&after));
    }
}
