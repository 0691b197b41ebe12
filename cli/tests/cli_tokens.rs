//! The token-ring commands of the `hashroute` binary: `token`, `--tokens-file` and
//! `--algo token-ring --tokens-per-node` as router sources, `replicas --replication`, and
//! `tokens add|remove|reweigh`. Checked against the DataStax driver's vectors
//! (`../shared/vectors/cassandra_*`), against the library for the same ring, end to end for
//! minimal movement, and for the one-line error contract.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use hashroute::{Node, NodeSet, Replication, Router, TokenRing};

const BIN: &str = env!("CARGO_BIN_EXE_hashroute");

struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hashroute");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    // The child may exit before reading everything (an error before the first key).
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait hashroute");
    writer.join().expect("stdin writer");
    Run { code: out.status.code(), stdout: out.stdout, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

/// A call that must succeed silently; its stdout.
fn ok(args: &[&str], stdin: &[u8]) -> String {
    let r = run(args, stdin);
    assert_eq!(r.code, Some(0), "{args:?} failed: {}", r.stderr);
    assert!(r.stderr.is_empty(), "{args:?} wrote to stderr: {}", r.stderr);
    String::from_utf8(r.stdout).expect("UTF-8 output")
}

/// A call that must fail with exit `code` and exactly one `hashroute: error:` line holding
/// every needle.
fn fails(args: &[&str], code: i32, needles: &[&str]) {
    let r = run(args, b"");
    assert_eq!(r.code, Some(code), "{args:?}: stderr {:?}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: stderr {:?}", r.stderr);
    assert!(lines[0].starts_with("hashroute: error: "), "{args:?}: {:?}", lines[0]);
    assert!(!lines[0].contains("internal error"), "{args:?}: a panic: {:?}", lines[0]);
    for needle in needles {
        assert!(lines[0].contains(needle), "{args:?}: {:?} does not mention {needle:?}", lines[0]);
    }
    assert!(r.stdout.is_empty(), "{args:?} printed {:?}", String::from_utf8_lossy(&r.stdout));
}

/// `KEY<TAB>VALUE` lines into pairs.
fn pairs(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('\t').unwrap_or_else(|| panic!("no tab in {l:?}"));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn tmp_file(name: &str, contents: &[u8]) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-tokens-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_str().expect("UTF-8 temp path").to_owned()
}

fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("key-{i}")).collect()
}

/// The keys one per line, for stdin.
fn lines_of(keys: &[String]) -> String {
    keys.iter().map(|k| format!("{k}\n")).collect()
}

fn json(name: &str) -> Option<serde_json::Value> {
    let path = common::vectors_dir()?.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(serde_json::from_str(&text).unwrap())
}

/// `hashroute token` equals the driver's `Murmur3Token.from_key` on every row of the vectors,
/// from stdin in hex; keys given as arguments answer the same as on stdin.
#[test]
fn token_matches_the_cassandra_driver() {
    let Some(rows) = common::read_csv("cassandra_murmur3_tokens.csv") else { return };
    let input: String = rows.iter().map(|r| format!("{}\n", r["key_hex"])).collect();
    let out = pairs(&ok(&["token", "--input", "hex"], input.as_bytes()));
    assert_eq!(out.len(), 1500);
    for (row, (key, token)) in rows.iter().zip(&out) {
        assert_eq!(key, &row["key_hex"]);
        assert_eq!(token, &row["token"], "key {key}");
    }
    let some = keys(50);
    let mut args = vec!["token"];
    args.extend(some.iter().map(String::as_str));
    let from_args = ok(&args, b"");
    assert_eq!(from_args, ok(&["token"], lines_of(&some).as_bytes()));
    for (key, token) in pairs(&from_args) {
        assert_eq!(token, hashroute::cassandra::murmur3_token(key.as_bytes()).to_string());
    }
    assert_eq!(ok(&["token", ""], b""), "\t0\n", "the empty key's token is 0");
}

/// A vectors layout as a tokens file (`dc` is the zone), and its replication as a spec.
fn layout_file(name: &str, layout: &serde_json::Value) -> (String, String) {
    let mut text = String::from("# from cassandra_replicas.json\n");
    for node in layout["nodes"].as_array().unwrap() {
        for token in node["tokens"].as_array().unwrap() {
            let (n, dc, rack) =
                (node["name"].as_str().unwrap(), node["dc"].as_str().unwrap(), node["rack"].as_str().unwrap());
            text.push_str(&format!("{n} {dc} {rack} {}\n", token.as_i64().unwrap()));
        }
    }
    let strategy = layout["strategy"].as_object().unwrap();
    let spec = match strategy["class"].as_str().unwrap() {
        "SimpleStrategy" => format!("simple:{}", strategy["replication_factor"].as_u64().unwrap()),
        "NetworkTopologyStrategy" => {
            let dcs: Vec<String> = strategy
                .iter()
                .filter(|(k, _)| k.as_str() != "class")
                .map(|(dc, rf)| format!("{dc}={}", rf.as_u64().unwrap()))
                .collect();
            format!("nts:{}", dcs.join(","))
        }
        other => panic!("unknown strategy {other}"),
    };
    (tmp_file(&format!("vectors-{name}.txt"), text.as_bytes()), spec)
}

/// `replicas --tokens-file --replication` equals the driver's replica list for every key of
/// every layout; with SimpleStrategy, `route` is the first replica.
#[test]
fn replicas_match_the_cassandra_driver() {
    let Some(doc) = json("cassandra_replicas.json") else { return };
    let mut checked = 0;
    for (name, layout) in doc.as_object().unwrap().iter().filter(|(k, _)| !k.starts_with('_')) {
        let (file, spec) = layout_file(name, layout);
        let rows = layout["keys"].as_array().unwrap();
        let input: String = rows.iter().map(|r| format!("{}\n", r["key_hex"].as_str().unwrap())).collect();
        let out = pairs(&ok(
            &["replicas", "--tokens-file", &file, "--replication", &spec, "--input", "hex"],
            input.as_bytes(),
        ));
        let routes = pairs(&ok(&["route", "--tokens-file", &file, "--input", "hex"], input.as_bytes()));
        assert_eq!(out.len(), rows.len(), "{name}");
        for ((row, (key, replicas)), (_, owner)) in rows.iter().zip(&out).zip(&routes) {
            let want: Vec<&str> = row["replicas"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
            assert_eq!(key, row["key_hex"].as_str().unwrap());
            assert_eq!(replicas, &want.join(","), "{name}: key {key} ({spec})");
            if spec.starts_with("simple:") {
                assert_eq!(owner, want[0], "{name}: key {key}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 600, "three layouts of 200 keys");
}

/// A small three-zone ring written by the library, with weights.
fn library_ring() -> TokenRing {
    let nodes = (0..6).map(|i| {
        Node::new(format!("10.0.0.{i}"))
            .with_weight(f64::from(1 + i % 3))
            .with_label("zone", ["dc1", "dc2", "eu"][i as usize % 3])
            .with_label("rack", format!("r{}", i % 2))
    });
    TokenRing::builder().tokens_per_node(8).node_set(NodeSet::new(nodes).unwrap()).build().unwrap()
}

/// `route`, `replicas -n`, `replicas --replication` and `fingerprint` over a tokens file agree
/// with the library over the same ring; the order of the file's lines changes nothing.
#[test]
fn tokens_file_routes_as_the_library() {
    let ring = library_ring();
    let text = ring.to_tokens_file().unwrap();
    let file = tmp_file("library.txt", text.as_bytes());
    let mut shuffled: Vec<&str> = text.lines().collect();
    shuffled.reverse();
    shuffled.rotate_left(7);
    let shuffled = tmp_file("library-shuffled.txt", (shuffled.join("\n") + "\n").as_bytes());
    let keys = keys(3000);
    let input = lines_of(&keys);
    let routes = ok(&["route", "--tokens-file", &file], input.as_bytes());
    for (key, node) in pairs(&routes) {
        assert_eq!(node, ring.node_name(ring.route(key.as_bytes())), "{key}");
    }
    assert_eq!(routes, ok(&["route", "--tokens-file", &shuffled], input.as_bytes()), "line order changed routes");
    let fingerprint = ok(&["fingerprint", "--tokens-file", &file], b"");
    assert_eq!(fingerprint, format!("{}\n", hashroute::fingerprint(&ring)));
    assert_eq!(fingerprint, ok(&["fingerprint", "--tokens-file", &shuffled], b""));

    for (key, list) in pairs(&ok(&["replicas", "--tokens-file", &file, "-n", "3"], input.as_bytes())) {
        let ids = ring.replicas(key.as_bytes(), 3).unwrap();
        let want: Vec<&str> = ids.iter().map(|&id| ring.node_name(id)).collect();
        assert_eq!(list, want.join(","), "{key}");
    }
    for spec in ["simple:3", "nts:dc1=2,eu=1", "nts:dc2=1,dc1=1,eu=2", "nts:dc1=5", "nts:dc1=0,dc2=1"] {
        let replication: Replication = spec.parse().unwrap();
        let out = ok(&["replicas", "--tokens-file", &file, "--replication", spec], input.as_bytes());
        for (key, list) in pairs(&out) {
            let ids = ring.replicas_with(key.as_bytes(), &replication).unwrap();
            let want: Vec<&str> = ids.iter().map(|&id| ring.node_name(id)).collect();
            assert_eq!(list, want.join(","), "{key} {spec}");
        }
    }
}

/// `--algo token-ring --tokens-per-node V` allocates over `--nodes` / `--nodes-file` in list
/// order, as `RouterSpec` and the builder do; `migrate` takes it too.
#[test]
fn allocated_token_ring_from_a_node_list() {
    let keys = keys(2000);
    let input = lines_of(&keys);
    let check = |flags: &[&str], nodes: NodeSet, v: u32| {
        let ring = TokenRing::builder().tokens_per_node(v).node_set(nodes).build().unwrap();
        let mut args = vec!["route", "--algo", "token-ring"];
        args.extend_from_slice(flags);
        for (key, node) in pairs(&ok(&args, input.as_bytes())) {
            assert_eq!(node, ring.node_name(ring.route(key.as_bytes())), "{flags:?} {key}");
        }
        args[0] = "fingerprint";
        assert_eq!(ok(&args, b""), format!("{}\n", hashroute::fingerprint(&ring)), "{flags:?}");
    };
    let names = ["c", "a", "b", "d"];
    check(&["--tokens-per-node", "4", "--nodes", "c,a,b,d"], NodeSet::from_names(names).unwrap(), 4);
    check(&["--tokens-per-node", "16", "--nodes", "c,a,b,d"], NodeSet::from_names(names).unwrap(), 16);
    let weighted = tmp_file("weighted-nodes.txt", b"c 1\na 3\nb 2\n");
    let nodes =
        NodeSet::new([Node::new("c"), Node::new("a").with_weight(3.0), Node::new("b").with_weight(2.0)]).unwrap();
    check(&["--tokens-per-node", "8", "--nodes-file", &weighted], nodes, 8);
    // The node order is part of the allocation.
    let fp = |list: &str| ok(&["fingerprint", "--algo", "token-ring", "--tokens-per-node", "4", "--nodes", list], b"");
    assert_ne!(fp("a,b,c"), fp("c,b,a"));

    let from = tmp_file("migrate-from.txt", b"a\nb\nc\n");
    let to = tmp_file("migrate-to.txt", b"a\nb\nc\nd\n");
    let spec = hashroute::RouterSpec::new(hashroute::Algorithm::TokenRing).with_tokens_per_node(8);
    let before = spec.build(NodeSet::from_names(["a", "b", "c"]).unwrap()).unwrap();
    let after = spec.build(NodeSet::from_names(["a", "b", "c", "d"]).unwrap()).unwrap();
    let plan = hashroute::migration::plan(&before, &after).unwrap();
    let args = ["migrate", "--algo", "token-ring", "--tokens-per-node", "8", "--from", &from, "--to", &to, "--summary"];
    assert_eq!(ok(&args, b""), plan.summary().to_string());
}

/// The routes of `keys` through a tokens file.
fn routes(file: &str, input: &str) -> Vec<(String, String)> {
    pairs(&ok(&["route", "--tokens-file", file], input.as_bytes()))
}

/// Each token of a tokens file with its owner.
fn token_owners(text: &str) -> BTreeMap<i64, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[3].parse().unwrap(), f[0].to_owned())
        })
        .collect()
}

/// The owner of ring position `pos`: the node of the first token `>= pos`, wrapping.
fn owner_at(ring: &BTreeMap<i64, String>, pos: i64) -> &str {
    ring.range(pos..).next().or_else(|| ring.iter().next()).map(|(_, o)| o.as_str()).unwrap()
}

/// Every stretch of the ring whose owner differs between `before` and `after`, as
/// `(end, old owner, new owner)`: the stretches are cut at the tokens of both rings, so the
/// comparison is exact over all 2^64 positions, not a sample of keys.
fn moved_stretches(before: &BTreeMap<i64, String>, after: &BTreeMap<i64, String>) -> Vec<(i64, String, String)> {
    let cuts: BTreeSet<i64> = before.keys().chain(after.keys()).copied().collect();
    cuts.into_iter()
        .map(|t| (t, owner_at(before, t), owner_at(after, t)))
        .filter(|(_, old, new)| old != new)
        .map(|(t, old, new)| (t, old.to_owned(), new.to_owned()))
        .collect()
}

/// One membership change through the binary: its output is the library's ring for the same
/// change, byte for byte, and parses back; returns the new file's path and text.
fn change(step: &str, args: &[&str], library: &TokenRing) -> (String, String) {
    let text = ok(args, b"");
    assert_eq!(text, library.to_tokens_file().unwrap(), "{step}: not the library's ring");
    assert_eq!(ok(args, b""), text, "{step}: the same command printed other bytes");
    let parsed = TokenRing::parse(&text).unwrap_or_else(|e| panic!("{step}: the output does not parse: {e}"));
    assert_eq!(parsed.to_tokens_file().unwrap(), text, "{step}: no round trip");
    (tmp_file(&format!("{step}.txt"), text.as_bytes()), text)
}

/// `tokens add`, `remove` and `reweigh` print the library's new ring; routing a few thousand
/// keys through the old and the new file moves only the keys the change must move, and
/// every stretch of the ring changes owner only to or from the changed node (checked exactly,
/// over all positions).
#[test]
fn tokens_changes_move_the_fewest_keys() {
    let keys = keys(4000);
    let input = lines_of(&keys);
    let first = Node::new("n0").with_label("zone", "dc1").with_label("rack", "rack1");
    let mut lib = TokenRing::builder().tokens_per_node(8).node(first).build().unwrap();
    let (mut file, mut text) = change("add-n0", &["tokens", "add", "--node", "n0", "--tokens-per-node", "8"], &lib);
    assert_eq!(token_owners(&text).len(), 8);
    for i in 1..6 {
        let name = format!("n{i}");
        let (zone, rack, weight) = (["dc1", "dc2"][i % 2], format!("r{}", i % 3), (1 + i % 3).to_string());
        let node = Node::new(name.as_str())
            .with_weight(weight.parse().unwrap())
            .with_label("zone", zone)
            .with_label("rack", rack.as_str());
        lib = lib.with_node(node).unwrap();
        let args = [
            "tokens",
            "add",
            "--tokens-file",
            &file,
            "--node",
            &name,
            "--zone",
            zone,
            "--rack",
            &rack,
            "--weight",
            &weight,
            "--tokens-per-node",
            "8",
        ];
        let (new_file, new_text) = change(&format!("add-{name}"), &args, &lib);
        for ((key, old), (_, new)) in routes(&file, &input).iter().zip(routes(&new_file, &input)) {
            assert!(old == &new || new == name, "add {name}: {key} moved from {old} to {new}");
        }
        let (before, after) = (token_owners(&text), token_owners(&new_text));
        assert!(before.iter().all(|(t, o)| after.get(t) == Some(o)), "add {name}: an existing token moved");
        for (end, old, new) in moved_stretches(&before, &after) {
            assert_eq!(new, name, "add {name}: the range ending at {end} went from {old} to {new}");
        }
        (file, text) = (new_file, new_text);
    }

    lib = lib.with_weight("n2", 4.0).unwrap();
    let args = ["tokens", "reweigh", "--tokens-file", &file, "--node", "n2", "--weight", "4", "--tokens-per-node", "8"];
    let (new_file, new_text) = change("reweigh-n2", &args, &lib);
    let mut moved = 0;
    for ((key, old), (_, new)) in routes(&file, &input).iter().zip(routes(&new_file, &input)) {
        assert!(old == &new || old == "n2" || new == "n2", "reweigh n2: {key} moved from {old} to {new}");
        moved += usize::from(old != &new);
    }
    assert!(moved > 0, "raising a weight moved no key");
    for (end, old, new) in moved_stretches(&token_owners(&text), &token_owners(&new_text)) {
        assert!(old == "n2" || new == "n2", "reweigh n2: the range ending at {end} went from {old} to {new}");
    }
    (file, text) = (new_file, new_text);

    lib = lib.without_node("n3").unwrap();
    let args = ["tokens", "remove", "--tokens-file", &file, "--node", "n3", "--tokens-per-node", "8"];
    let (new_file, new_text) = change("remove-n3", &args, &lib);
    for ((key, old), (_, new)) in routes(&file, &input).iter().zip(routes(&new_file, &input)) {
        assert!(old == &new || old == "n3", "remove n3: {key} moved from {old} to {new}");
        assert_ne!(new, "n3");
    }
    // The allocator may move a neighbour's token over the removed node's range or merge a
    // node's adjacent tokens (see token_ring::allocate), so tokens are not compared one by one:
    // what must hold is that only n3's ranges change owner.
    let (before, after) = (token_owners(&text), token_owners(&new_text));
    let moved = moved_stretches(&before, &after);
    assert!(!moved.is_empty(), "removing n3 moved no range");
    for (end, old, new) in moved {
        assert_eq!(old, "n3", "remove n3: the range ending at {end} went from {old} to {new}");
    }
    assert!(after.values().all(|o| o != "n3"), "remove n3: n3 still holds a token");

    // Default V (16) and labels: a fresh ring's first node is written with dc1 and rack1.
    let fresh = ok(&["tokens", "add", "--node", "solo"], b"");
    assert_eq!(fresh.lines().filter(|l| !l.starts_with('#')).count(), 16);
    assert!(fresh.lines().skip(1).all(|l| l.starts_with("solo dc1 rack1 ")), "{fresh}");
}

/// The same command twice prints the same bytes.
#[test]
fn token_commands_are_deterministic() {
    let file = tmp_file("det.txt", library_ring().to_tokens_file().unwrap().as_bytes());
    let input = lines_of(&keys(500));
    let commands: Vec<Vec<&str>> = vec![
        vec!["token"],
        vec!["route", "--tokens-file", &file],
        vec!["replicas", "--tokens-file", &file, "--replication", "nts:dc1=2,dc2=1"],
        vec!["route", "--algo", "token-ring", "--tokens-per-node", "16", "--nodes", "a,b,c,d,e"],
        vec!["tokens", "add", "--tokens-file", &file, "--node", "x", "--weight", "2.5"],
        vec!["tokens", "remove", "--tokens-file", &file, "--node", "10.0.0.1"],
        vec!["tokens", "reweigh", "--tokens-file", &file, "--node", "10.0.0.1", "--weight", "0.5"],
    ];
    for args in &commands {
        let first = ok(args, input.as_bytes());
        assert!(!first.is_empty(), "{args:?}");
        assert_eq!(first, ok(args, input.as_bytes()), "{args:?}");
    }
}

#[test]
fn bad_input_is_one_line_naming_the_file_and_line() {
    let ring = tmp_file("good.txt", b"# NAME ZONE RACK TOKEN\na dc1 r1 -100\nb dc2 r1 100\n");
    let single = tmp_file("single.txt", b"a dc1 r1 5\n");
    let twice = tmp_file("twice.txt", b"a dc1 r1 7\n\nb dc1 r1 7\n");
    let big = tmp_file("big.txt", b"a dc1 r1 1\na dc1 r1 9223372036854775808\n");
    let text = tmp_file("text.txt", b"a dc1 r1 one\n");
    let zones = tmp_file("zones.txt", b"a dc1 r1 1\n# comment\na dc2 r1 2\n");
    let racks = tmp_file("racks.txt", b"a dc1 r1 1\na dc1 r2 2\n");
    let weights = tmp_file("weights.txt", b"a dc1 r1 1 2\na dc1 r1 2\na dc1 r1 3 4\n");
    let zero = tmp_file("zero.txt", b"a dc1 r1 1 0\n");
    let fields = tmp_file("fields.txt", b"a dc1 r1\n");
    let empty = tmp_file("empty.txt", b"# nothing\n");
    let latin1 = tmp_file("latin1.txt", b"caf\xe9 dc1 r1 1\n");
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-tokens.txt");
    let missing = missing.to_str().unwrap();
    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, i32, Vec<String>)> = vec![
        (vec!["route", "--tokens-file", &twice, "k"], 1, vec![format!("{twice}:3:"), "token 7 is given twice".into(), "line 1".into()]),
        (vec!["route", "--tokens-file", &big, "k"], 1, vec![format!("{big}:2:"), "not a signed 64-bit integer".into()]),
        (vec!["fingerprint", "--tokens-file", &text], 1, vec![format!("{text}:1:"), "\"one\"".into()]),
        (vec!["route", "--tokens-file", &zones, "k"], 1, vec![format!("{zones}:3:"), "zone \"dc2\"".into(), "line 1".into()]),
        (vec!["replicas", "--tokens-file", &racks, "-n", "1", "k"], 1, vec![format!("{racks}:2:"), "rack \"r2\"".into()]),
        (vec!["route", "--tokens-file", &weights, "k"], 1, vec![format!("{weights}:3:"), "weight 4".into(), "line 1".into()]),
        (vec!["route", "--tokens-file", &zero, "k"], 1, vec![format!("{zero}:1:"), "weight 0".into()]),
        (vec!["route", "--tokens-file", &fields, "k"], 1, vec![format!("{fields}:1:"), "NAME ZONE RACK TOKEN".into()]),
        (vec!["route", "--tokens-file", &empty, "k"], 1, vec![empty.clone(), "no tokens".into()]),
        (vec!["route", "--tokens-file", &latin1, "k"], 1, vec![latin1.clone(), "UTF-8".into()]),
        (vec!["route", "--tokens-file", missing, "k"], 1, vec![missing.to_owned()]),
        (vec!["tokens", "add", "--tokens-file", &twice, "--node", "c"], 1, vec![format!("{twice}:3:")]),
        (vec!["tokens", "remove", "--tokens-file", &ring, "--node", "zz"], 1, vec!["--node zz".into(), "unknown node \"zz\"".into(), ring.clone()]),
        (vec!["tokens", "reweigh", "--tokens-file", &ring, "--node", "zz", "--weight", "2"], 1, vec!["unknown node \"zz\"".into()]),
        (vec!["tokens", "remove", "--tokens-file", &single, "--node", "a"], 1, vec!["--node a".into(), "last node".into()]),
        (vec!["tokens", "add", "--tokens-file", &ring, "--node", "a"], 1, vec!["--node a".into(), "already in".into()]),
        (vec!["tokens", "add", "--node", "a", "--weight", "0"], 1, vec!["--weight 0".into(), "invalid weight 0".into()]),
        (vec!["tokens", "add", "--node", "a", "--weight", "-2"], 1, vec!["--weight -2".into()]),
        (vec!["tokens", "add", "--node", "a", "--weight", "inf"], 1, vec!["--weight inf".into()]),
        (vec!["tokens", "reweigh", "--tokens-file", &ring, "--node", "a", "--weight", "0"], 1, vec!["--weight 0".into()]),
        (vec!["tokens", "reweigh", "--tokens-file", &ring, "--node", "a", "--weight", "-1"], 1, vec!["--weight -1".into()]),
        (vec!["tokens", "add", "--node", "a b"], 1, vec!["--node \"a b\"".into(), "whitespace".into()]),
        (vec!["tokens", "add", "--node", "a", "--zone", "dc#1"], 1, vec!["--zone \"dc#1\"".into()]),
        (vec!["tokens", "add", "--node", "a", "--rack", ""], 1, vec!["--rack \"\"".into()]),
        (vec!["tokens", "add", "--node", "a", "--tokens-per-node", "0"], 1, vec!["--tokens-per-node 0".into()]),
        (vec!["tokens", "add", "--tokens-file", &ring, "--node", "c", "--tokens-per-node", "99999"], 1, vec!["--tokens-per-node 99999".into()]),
        (vec!["replicas", "--tokens-file", &ring, "--replication", "simple", "k"], 1, vec!["--replication".into(), "no strategy".into()]),
        (vec!["replicas", "--tokens-file", &ring, "--replication", "simple:three", "k"], 1, vec!["\"three\"".into()]),
        (vec!["replicas", "--tokens-file", &ring, "--replication", "nts:dc1", "k"], 1, vec!["not DC=RF".into()]),
        (vec!["replicas", "--tokens-file", &ring, "--replication", "nts:dc1=1,dc1=2", "k"], 1, vec!["given twice".into()]),
        (vec!["replicas", "--tokens-file", &ring, "--replication", "paxos:3", "k"], 1, vec!["unknown strategy".into()]),
        (vec!["replicas", "--tokens-file", &ring, "--replication", "nts:dc1=1,dc9=1", "k"], 1, vec!["datacenter \"dc9\"".into(), "dc1, dc2".into()]),
        (vec!["replicas", "--tokens-file", &ring, "--replication", "simple:0", "k"], 1, vec!["no key has a replica".into()]),
        (vec!["replicas", "--algo", "ring", "--nodes", "a,b", "--replication", "simple:1", "k"], 1, vec!["token rings".into()]),
        (vec!["route", "--algo", "token-ring", "--nodes", "a,b", "k"], 1, vec!["--tokens-per-node".into(), "--tokens-file".into()]),
        (vec!["route", "--algo", "ring", "--tokens-per-node", "4", "--nodes", "a,b", "k"], 1, vec!["token-ring only".into()]),
        (vec!["route", "--algo", "token-ring", "--tokens-per-node", "0", "--nodes", "a", "k"], 1, vec!["--tokens-per-node 0".into()]),
        (vec!["token", "--input", "u64", "1"], 1, vec!["u64".into()]),
        (vec!["token", "--input", "hex", "abc"], 1, vec!["key argument 1".into(), "odd number".into()]),
        // Usage errors: exit 2.
        (vec!["route", "--algo", "ring", "--tokens-file", &ring, "k"], 2, vec!["--algo".into(), "--tokens-file".into()]),
        (vec!["route", "--tokens-file", &ring, "--nodes", "a", "k"], 2, vec!["--nodes".into()]),
        (vec!["route", "--tokens-file", &ring, "--from-config", &ring, "k"], 2, vec!["--from-config".into()]),
        (vec!["route", "--tokens-file", &ring, "--tokens-per-node", "4", "k"], 2, vec!["--tokens-per-node".into()]),
        (vec!["route", "k"], 2, vec!["--algo".into(), "--tokens-file".into()]),
        (vec!["replicas", "--tokens-file", &ring, "k"], 2, vec!["-n".into(), "--replication".into()]),
        (vec!["replicas", "--tokens-file", &ring, "-n", "1", "--replication", "simple:1", "k"], 2, vec!["--replication".into()]),
        (vec!["tokens"], 2, vec!["missing tokens subcommand".into(), "add, remove, reweigh".into()]),
        (vec!["tokens", "add"], 2, vec!["--node".into()]),
        (vec!["tokens", "remove", "--node", "a"], 2, vec!["--tokens-file".into()]),
        (vec!["tokens", "reweigh", "--tokens-file", &ring, "--node", "a"], 2, vec!["--weight".into()]),
        (vec!["tokens", "add", "--node", "a", "--weight", "heavy"], 2, vec!["--weight".into()]),
        (vec!["tokens", "move", "--node", "a"], 2, vec!["move".into()]),
    ];
    for (args, code, needles) in &cases {
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        fails(args, *code, &needles);
    }
}

/// The token commands' help, with flag lists and the algorithm list from the kernel's table.
#[test]
fn help_lists_the_token_commands() {
    let top = ok(&["--help"], b"");
    for word in ["token", "tokens"] {
        assert!(top.lines().any(|l| l.trim_start().starts_with(word)), "--help lacks {word}");
    }
    let route = ok(&["route", "--help"], b"");
    for word in ["--tokens-file", "--tokens-per-node", "token-ring"] {
        assert!(route.contains(word), "route --help lacks {word}");
    }
    assert!(ok(&["replicas", "--help"], b"").contains("--replication"));
    let add = ok(&["tokens", "add", "--help"], b"");
    for flag in ["--tokens-file", "--node", "--weight", "--zone", "--rack", "--tokens-per-node", "dc1", "rack1"] {
        assert!(add.contains(flag), "tokens add --help lacks {flag}");
    }
    let max = hashroute::token_ring::TokenAllocator::MAX_TOKENS_PER_NODE.to_string();
    assert!(add.contains(&max), "the V range comes from the kernel");
    for args in [
        &["token", "--help"][..],
        &["tokens", "--help"],
        &["tokens", "remove", "--help"],
        &["tokens", "reweigh", "--help"],
    ] {
        assert!(!ok(args, b"").is_empty(), "{args:?}");
    }
    // A tokens file's nodes are the ones the help promises: NAME ZONE RACK TOKEN [WEIGHT].
    let names: BTreeSet<String> = token_owners(&ok(&["tokens", "add", "--node", "x"], b"")).into_values().collect();
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["x"]);
}

/// The README's token-ring example, run as written (`$ hashroute ...` lines, `> FILE`
/// redirections, the expected output below each), so it cannot rot.
#[test]
fn readme_token_ring_example_runs() {
    let readme = std::fs::read_to_string(common::workspace_root().join("README.md")).unwrap();
    let section = readme.split("### Token rings").nth(1).expect("the README's token-ring section");
    let block = section.split("```sh\n").nth(1).and_then(|b| b.split("```").next()).expect("its example");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-tokens-readme");
    std::fs::create_dir_all(&dir).unwrap();
    let mut steps: Vec<(Vec<String>, Option<String>, String)> = Vec::new();
    for line in block.lines() {
        if let Some(command) = line.strip_prefix("$ hashroute ") {
            let (args, target) = match command.split_once(" > ") {
                Some((args, file)) => (args, Some(file.trim().to_owned())),
                None => (command, None),
            };
            steps.push((args.split_whitespace().map(str::to_owned).collect(), target, String::new()));
        } else {
            let (_, _, expected) = steps.last_mut().expect("output after a command");
            expected.push_str(line);
            expected.push('\n');
        }
    }
    assert!(steps.len() >= 5, "{block}");
    for (args, target, expected) in steps {
        let out = Command::new(BIN).args(&args).current_dir(&dir).output().expect("spawn hashroute");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        match target {
            Some(file) => std::fs::write(dir.join(file), &out.stdout).unwrap(),
            None => assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{args:?}"),
        }
    }
}
