//! `hashroute migrate --crush-map OLD --to-crush-map NEW --pool-id P --pg-num N`: which of a
//! pool's placement groups change their device set when a new CRUSH map (or reweight) is
//! applied, over every placement group (exact, not a sample).

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::Args;
use hashroute::crush::{Workspace, ITEM_NONE};

use crate::crush_args::{pool, read_crush_map};
use crate::failure::Failure;

/// The CRUSH flags of `migrate`.
#[derive(Args, Debug)]
#[command(next_help_heading = "CRUSH")]
pub(crate) struct CrushMigrateArgs {
    /// The CRUSH map before the change (text form); with --to-crush-map, --pool-id and --pg-num,
    /// prints the exact share of the pool's placement groups whose device set changes, then per
    /// device the placement groups before and after, moving in and out
    #[arg(long, value_name = "FILE", requires_all = ["to_crush_map", "pool_id", "pg_num"])]
    pub(crate) crush_map: Option<PathBuf>,
    /// The CRUSH map after the change
    #[arg(long, value_name = "FILE", requires = "crush_map")]
    to_crush_map: Option<PathBuf>,
    /// The pool id
    #[arg(long, value_name = "P", requires = "crush_map")]
    pool_id: Option<u32>,
    /// The pool's placement-group count
    #[arg(long, value_name = "N", requires = "crush_map")]
    pg_num: Option<u32>,
    /// Replicas (the pool's size) [default: 3]
    #[arg(short = 'n', value_name = "SIZE", requires = "crush_map")]
    size: Option<usize>,
    /// The pool's CRUSH rule, by name or id, in both maps [default: 0]
    #[arg(long, value_name = "NAME|ID", requires = "crush_map")]
    rule: Option<String>,
    /// Device reweights before the change: osd.7=0,osd.12=0.5
    #[arg(long, value_name = "DEV=W,...", requires = "crush_map")]
    reweight: Option<String>,
    /// Device reweights after the change [default: those of --reweight]
    #[arg(long, value_name = "DEV=W,...", requires = "crush_map")]
    to_reweight: Option<String>,
}

/// Per device: placement groups before, after, moving in, moving out.
#[derive(Default, Clone, Copy)]
struct Counts {
    before: u64,
    after: u64,
    moved_in: u64,
    moved_out: u64,
}

impl CrushMigrateArgs {
    /// Runs the comparison when `--crush-map` is given; `Ok(false)` otherwise.
    pub(crate) fn run(&self) -> Result<bool, Failure> {
        let (Some(old), Some(new)) = (&self.crush_map, &self.to_crush_map) else { return Ok(false) };
        let (id, pg_num) = (self.pool_id.unwrap_or(0), self.pg_num.unwrap_or(0));
        let size = self.size.unwrap_or(3);
        let rule = self.rule.as_deref();
        let before = pool(read_crush_map(old)?, id, pg_num, size, rule, self.reweight.as_deref())?;
        let to_reweight = self.to_reweight.as_deref().or(self.reweight.as_deref());
        let after = pool(read_crush_map(new)?, id, pg_num, size, rule, to_reweight)?;
        let mut counts: BTreeMap<String, Counts> = BTreeMap::new();
        let name = |map: &hashroute::crush::CrushMap, d: i32| map.device_name(d).unwrap_or("-").to_owned();
        let (mut a, mut b, mut ws) = (Vec::new(), Vec::new(), Workspace::default());
        let mut changed = 0u64;
        for ps in 0..pg_num {
            before.up(ps, &mut a, &mut ws);
            after.up(ps, &mut b, &mut ws);
            let (mut sa, mut sb) = (a.clone(), b.clone());
            sa.retain(|&d| d != ITEM_NONE);
            sb.retain(|&d| d != ITEM_NONE);
            sa.sort_unstable();
            sb.sort_unstable();
            if sa != sb {
                changed += 1;
            }
            for &d in &sa {
                let c = counts.entry(name(before.map(), d)).or_default();
                c.before += 1;
                if !sb.contains(&d) {
                    c.moved_out += 1;
                }
            }
            for &d in &sb {
                let c = counts.entry(name(after.map(), d)).or_default();
                c.after += 1;
                if !sa.contains(&d) {
                    c.moved_in += 1;
                }
            }
        }
        let mut out = BufWriter::new(io::stdout().lock());
        writeln!(
            out,
            "migration crush pool {id} ({pg_num} placement groups, size {size}; exact): {:.4}% of placement groups change their device set ({changed} of {pg_num})",
            100.0 * changed as f64 / f64::from(pg_num.max(1)),
        )?;
        let width = counts.keys().map(String::len).max().unwrap_or(6).max(6);
        writeln!(out, "{:width$}  {:>8}  {:>8}  {:>8}  {:>8}", "device", "before", "after", "in", "out")?;
        let mut rows: Vec<_> = counts.into_iter().collect();
        rows.sort_by_key(|x| natural(&x.0));
        for (dev, c) in rows {
            writeln!(out, "{dev:width$}  {:>8}  {:>8}  {:>8}  {:>8}", c.before, c.after, c.moved_in, c.moved_out)?;
        }
        out.flush()?;
        Ok(true)
    }
}

/// `osd.10` after `osd.9`: names ordered by their text with the trailing number compared as a
/// number.
fn natural(name: &str) -> (String, u64) {
    let split = name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    (name[..split].to_owned(), name[split..].parse().unwrap_or(0))
}
