//! `--crush-map FILE --rule R --reweight DEV=W,...`: a Ceph CRUSH map as the router source of
//! route, replicas and fingerprint (instead of --algo and --nodes*), and the map reader every
//! CRUSH command shares.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use hashroute::crush::{CrushMap, CrushRouter, Pool};
use hashroute::Error;

use crate::failure::Failure;

/// The CRUSH router flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "CRUSH")]
pub(crate) struct CrushArgs {
    /// A Ceph CRUSH map in text form (`ceph osd getcrushmap | crushtool -d -`); replaces --algo
    /// and --nodes*. A key's CRUSH input is its Ceph object hash (rjenkins); --input u64 gives
    /// the input x itself
    #[arg(long, value_name = "FILE", conflicts_with_all = crate::tokens_file::REPLACED)]
    pub(crate) crush_map: Option<PathBuf>,
    /// The CRUSH rule, by name or id [default: 0]
    #[arg(long, value_name = "NAME|ID", requires = "crush_map")]
    pub(crate) rule: Option<String>,
    /// Device reweights (`ceph osd reweight`; 0 is `ceph osd out`): osd.7=0,osd.12=0.5
    #[arg(long, value_name = "DEV=W,...", requires = "crush_map")]
    pub(crate) reweight: Option<String>,
}

impl CrushArgs {
    /// The router the flags describe, when `--crush-map` is given.
    pub(crate) fn router(&self) -> Result<Option<CrushRouter>, Failure> {
        let Some(path) = &self.crush_map else { return Ok(None) };
        let map = read_crush_map(path)?;
        router(map, self.rule.as_deref(), self.reweight.as_deref()).map(Some)
    }
}

/// A router over `map` with `rule` (default 0) and the `--reweight` list applied.
pub(crate) fn router(map: Arc<CrushMap>, rule: Option<&str>, reweight: Option<&str>) -> Result<CrushRouter, Failure> {
    let rule = rule.unwrap_or("0");
    let mut router = CrushRouter::new(map, rule).map_err(|e| Failure::context(format!("--rule {rule}"), e))?;
    for (name, w) in parse_reweights(reweight)? {
        router = router.with_reweight(&name, w).map_err(|e| Failure::context(format!("--reweight {name}={w}"), e))?;
    }
    Ok(router)
}

/// A pool over `map` with the `--reweight` list applied.
pub(crate) fn pool(
    map: Arc<CrushMap>,
    id: u32,
    pg_num: u32,
    size: usize,
    rule: Option<&str>,
    reweight: Option<&str>,
) -> Result<Pool, Failure> {
    let rule = rule.unwrap_or("0");
    let mut pool = Pool::new(map, id, pg_num, size, rule).map_err(|e| Failure::context("pool", e))?;
    for (name, w) in parse_reweights(reweight)? {
        pool = pool.with_reweight(&name, w).map_err(|e| Failure::context(format!("--reweight {name}={w}"), e))?;
    }
    Ok(pool)
}

/// `osd.7=0,osd.12=0.5` to `(name, weight)` pairs.
pub(crate) fn parse_reweights(list: Option<&str>) -> Result<Vec<(String, f64)>, Failure> {
    let Some(list) = list else { return Ok(Vec::new()) };
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, w) =
                pair.split_once('=').ok_or_else(|| Failure::msg(format!("--reweight: {pair:?} is not DEV=WEIGHT")))?;
            let w: f64 = w
                .trim()
                .parse()
                .map_err(|_| Failure::msg(format!("--reweight: weight {w:?} of {name} is not a number")))?;
            Ok((name.trim().to_owned(), w))
        })
        .collect()
}

/// Reads and compiles a CRUSH map file. Errors are one line: `crush map PATH:LINE: what`.
pub(crate) fn read_crush_map(path: &Path) -> Result<Arc<CrushMap>, Failure> {
    let context = || format!("crush map {}", path.display());
    let bytes = std::fs::read(path).map_err(|e| Failure::context(context(), e))?;
    let text = String::from_utf8(bytes).map_err(|_| Failure::context(context(), "not valid UTF-8"))?;
    CrushMap::parse(&text).map(Arc::new).map_err(|e| file_error(path, e))
}

/// The parser's `Malformed("line N: ...")` as `crush map PATH:N: ...`.
fn file_error(path: &Path, err: Error) -> Failure {
    if let Error::Malformed(detail) = &err {
        if let Some((line, rest)) = detail.strip_prefix("line ").and_then(|d| d.split_once(": ")) {
            if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) {
                return Failure::msg(format!("crush map {}:{line}: {rest}", path.display()));
            }
        }
    }
    Failure::context(format!("crush map {}", path.display()), err)
}
