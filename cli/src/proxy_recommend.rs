//! `recommend --from-config`: after the recommendation, what the user can change *within* the
//! proxy — nginx and HAProxy give each server points in proportion to its weight (160 and 16 per
//! unit), so scaling every weight by the same factor keeps the shares and smooths the balance.

use std::io::Write;

use crate::proxy::{ConfigKind, ProxyConfig};
use hashroute::{Node, NodeSet};

use crate::failure::Failure;

/// Keys sampled per layout (sampling noise ≈ sqrt(N / KEYS) of the mean).
const KEYS: usize = 200_000;

/// Writes one line per weight scale the proxy accepts: `weights ×k: max/mean M`.
pub(crate) fn write_weight_scales(out: &mut impl Write, config: &ProxyConfig) -> Result<(), Failure> {
    let (proxy, max_weight) = match config.kind {
        ConfigKind::Nginx => ("nginx", 1_000_000.0),
        ConfigKind::Haproxy => ("haproxy", 256.0),
        _ => {
            writeln!(
                out,
                "\nwithin twemproxy: each server's points follow its share of the total weight (160 per server \
                 at equal weights), so scaling weights changes nothing; names (`HOST:PORT:WEIGHT NAME`) move the points"
            )?;
            return Ok(());
        }
    };
    let heaviest = config.nodes.iter().map(|(_, n)| n.weight()).fold(1.0, f64::max);
    writeln!(
        out,
        "\nwithin {proxy}: every weight scaled by the same factor (same shares, more points; {KEYS} sampled keys)"
    )?;
    for k in [1.0, 2.0, 4.0, 8.0, 16.0, 64.0] {
        if heaviest * k > max_weight {
            break;
        }
        let nodes = NodeSet::new(config.nodes.iter().map(|(_, n)| scaled(n, k)))?;
        let router = config.spec.build(nodes)?;
        let balance = hashroute_analysis::balance(&router, KEYS)?;
        writeln!(out, "  weights x{k:<3} max/mean {:.3}", balance.max_over_mean)?;
    }
    Ok(())
}

fn scaled(node: &Node, k: f64) -> Node {
    let mut out = Node::new(node.name()).with_weight(node.weight() * k);
    for (key, value) in node.labels() {
        out = out.with_label(key.clone(), value.clone());
    }
    out
}
