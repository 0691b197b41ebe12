//! `hashroute pg`: objects to placement groups to devices, as `osdmaptool --test-map-object`.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::Args;
use hashroute::crush::Workspace;

use crate::crush::device_list;
use crate::crush_args::{pool, read_crush_map};
use crate::failure::Failure;
use crate::keys::{for_each_key, InputFormat, Key};

/// Place objects like Ceph: prints `OBJECT<TAB>PGID<TAB>DEVICES` (the up set, `1.4b
/// osd.3,osd.7,osd.1`)
///
/// The object name's rjenkins hash, `ceph_stable_mod` over pg_num, the hashpspool seed with the
/// pool id, then the rule. Not modelled: upmap exceptions, pg_temp, primary affinity.
#[derive(Args, Debug)]
pub(crate) struct PgArgs {
    /// The CRUSH map in text form (`ceph osd getcrushmap | crushtool -d -`)
    #[arg(long, value_name = "FILE")]
    crush_map: PathBuf,
    /// The pool id
    #[arg(long, value_name = "P")]
    pool_id: u32,
    /// The pool's placement-group count (pgp_num is taken equal)
    #[arg(long, value_name = "N")]
    pg_num: u32,
    /// Replicas (the pool's size)
    #[arg(long, value_name = "S", default_value_t = 3)]
    size: usize,
    /// The pool's CRUSH rule, by name or id
    #[arg(long, value_name = "NAME|ID", default_value = "0")]
    rule: String,
    /// Device reweights (`ceph osd reweight`; 0 is out): osd.7=0,osd.12=0.5
    #[arg(long, value_name = "DEV=W,...")]
    reweight: Option<String>,
    /// Object names; when none are given, one per line is read from stdin
    #[arg(value_name = "OBJECT")]
    objects: Vec<OsString>,
}

pub(crate) fn run(args: PgArgs) -> Result<(), Failure> {
    let map = read_crush_map(&args.crush_map)?;
    let pool = pool(map, args.pool_id, args.pg_num, args.size, Some(&args.rule), args.reweight.as_deref())?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let (mut devices, mut ws, mut line) = (Vec::new(), Workspace::default(), Vec::with_capacity(64));
    for_each_key(&args.objects, InputFormat::Text, |raw, key| {
        let Key::Bytes(name) = key else { unreachable!("text keys are bytes") };
        let ps = pool.object_pg(name);
        pool.up(ps, &mut devices, &mut ws);
        device_list(pool.map(), &devices, &mut line);
        out.write_all(raw)?;
        write!(out, "\t{}\t", pool.pgid(ps))?;
        out.write_all(&line)?;
        out.write_all(b"\n")?;
        Ok(())
    })?;
    out.flush()?;
    Ok(())
}
