//! CRUSH compatibility vectors: every row of `../shared/vectors/ceph/crush_mappings.csv`
//! (crushtool 16.2.15 `--test --show-mappings`) and `object_mappings.csv` (osdmaptool
//! `--test-map-object`) must match exactly.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use hashroute::crush::{CrushMap, CrushRouter, Pool, Workspace, ITEM_NONE};

fn load_map(name: &str) -> Option<Arc<CrushMap>> {
    let path = common::vectors_dir()?.join("ceph").join(format!("{name}.crush.txt"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(Arc::new(CrushMap::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))))
}

/// `[0,9,4]` as crushtool prints it (holes as 2147483647).
fn format_result(devices: &[i32]) -> String {
    let items: Vec<String> = devices.iter().map(|d| d.to_string()).collect();
    format!("[{}]", items.join(","))
}

#[test]
fn crush_mappings_match_crushtool() {
    let Some(rows) = common::read_csv("ceph/crush_mappings.csv") else { return };
    assert!(rows.len() >= 15_000, "{} rows", rows.len());
    let mut maps: HashMap<String, Arc<CrushMap>> = HashMap::new();
    let mut routers: HashMap<(String, String, String), CrushRouter> = HashMap::new();
    let (mut out, mut ws) = (Vec::new(), Workspace::default());
    let mut mismatches = Vec::new();
    for row in &rows {
        let map_name = &row["map"];
        let map = maps.entry(map_name.clone()).or_insert_with(|| load_map(map_name).expect("vectors present")).clone();
        let key = (map_name.clone(), row["rule"].clone(), row["weights"].clone());
        let router = routers.entry(key).or_insert_with(|| {
            let mut r = CrushRouter::new(map.clone(), &row["rule"]).expect("rule exists");
            for pair in row["weights"].split(';').filter(|p| !p.is_empty()) {
                let (dev, w) = pair.split_once(':').expect("dev:w");
                let name = map.device_name(dev.parse().expect("device id")).expect("device").to_owned();
                r = r.with_reweight(&name, w.parse().expect("weight")).expect("reweight");
            }
            r
        });
        let x: u32 = row["x"].parse().expect("x");
        let n: usize = row["num_rep"].parse().expect("num_rep");
        router.map_x(x, n, &mut out, &mut ws);
        let got = format_result(&out);
        if got != row["result"] {
            mismatches.push(format!("{map_name} rule {} x {x}: got {got}, crushtool {}", row["rule"], row["result"]));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} rows differ; first: {:?}",
        mismatches.len(),
        rows.len(),
        &mismatches[..mismatches.len().min(5)]
    );
    assert_eq!(ITEM_NONE, 2_147_483_647);
}

#[test]
fn object_mappings_match_osdmaptool() {
    let Some(rows) = common::read_csv("ceph/object_mappings.csv") else { return };
    assert!(rows.len() >= 600, "{} rows", rows.len());
    let (mut out, mut ws) = (Vec::new(), Workspace::default());
    let mut mismatches = Vec::new();
    for row in &rows {
        let map = load_map(&row["map"]).expect("vectors present");
        let pg_num: u32 = row["pg_num"].parse().expect("pg_num");
        let pool_id: u32 = row["pool"].parse().expect("pool");
        let mut pool = Pool::new(map.clone(), pool_id, pg_num, 3, "0").expect("pool");
        for dev in row["out"].split([';', ',']).filter(|d| !d.is_empty()) {
            let name = map.device_name(dev.parse().expect("device id")).expect("device").to_owned();
            pool = pool.with_reweight(&name, 0.0).expect("out");
        }
        let ps = pool.object_pg(row["object"].as_bytes());
        pool.up(ps, &mut out, &mut ws);
        let got = (pool.pgid(ps), format_result(&out));
        if got.0 != row["pgid"] || got.1 != row["up"] {
            mismatches.push(format!("{:?}: got {got:?}, osdmaptool {} {}", row["object"], row["pgid"], row["up"]));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} rows differ; first: {:?}",
        mismatches.len(),
        rows.len(),
        &mismatches[..mismatches.len().min(5)]
    );
}
