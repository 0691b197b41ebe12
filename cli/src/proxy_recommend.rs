//! `recommend --from-config`: after the recommendation, what the user can change *within* the
//! proxy — nginx and HAProxy give each server points in proportion to its weight (160 and 16 per
//! unit), so scaling every weight by the same factor keeps the shares and smooths the balance.

use std::io::Write;

use crate::proxy::{ConfigKind, ProxyConfig};
use hashroute::{Node, NodeSet};
use serde::Serialize;

use crate::failure::Failure;

/// Keys sampled per layout (sampling noise ≈ sqrt(N / KEYS) of the mean).
const KEYS: usize = 200_000;

/// One weight scale the proxy accepts and the balance it gives.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct WeightScale {
    /// Every weight multiplied by this.
    pub(crate) factor: f64,
    /// The busiest node's load over the mean at that scale (sampled).
    pub(crate) max_over_mean: f64,
}

/// The proxy's name and its largest weight, for the proxies whose points follow the weights.
fn scalable(config: &ProxyConfig) -> Option<(&'static str, f64)> {
    match config.kind {
        ConfigKind::Nginx => Some(("nginx", 1_000_000.0)),
        ConfigKind::Haproxy => Some(("haproxy", 256.0)),
        _ => None,
    }
}

/// The balance at every weight scale the proxy accepts (none for twemproxy, where scaling
/// changes nothing). Cost: one router built and `KEYS` keys routed per scale.
pub(crate) fn weight_scales(config: &ProxyConfig) -> Result<Vec<WeightScale>, Failure> {
    let Some((_, max_weight)) = scalable(config) else { return Ok(Vec::new()) };
    let heaviest = config.nodes.iter().map(|(_, n)| n.weight()).fold(1.0, f64::max);
    let mut out = Vec::new();
    for k in [1.0, 2.0, 4.0, 8.0, 16.0, 64.0] {
        if heaviest * k > max_weight {
            break;
        }
        let nodes = NodeSet::new(config.nodes.iter().map(|(_, n)| scaled(n, k)))?;
        let router = config.spec.build(nodes)?;
        let balance = hashroute_analysis::balance(&router, KEYS)?;
        out.push(WeightScale { factor: k, max_over_mean: balance.max_over_mean });
    }
    Ok(out)
}

/// Writes one line per weight scale the proxy accepts: `weights ×k: max/mean M`.
pub(crate) fn write_weight_scales(out: &mut impl Write, config: &ProxyConfig) -> Result<(), Failure> {
    let Some((proxy, _)) = scalable(config) else {
        writeln!(
            out,
            "\nwithin twemproxy: each server's points follow its share of the total weight (160 per server \
             at equal weights), so scaling weights changes nothing; names (`HOST:PORT:WEIGHT NAME`) move the points"
        )?;
        return Ok(());
    };
    writeln!(
        out,
        "\nwithin {proxy}: every weight scaled by the same factor (same shares, more points; {KEYS} sampled keys)"
    )?;
    for s in weight_scales(config)? {
        writeln!(out, "  weights x{:<3} max/mean {:.3}", s.factor, s.max_over_mean)?;
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
