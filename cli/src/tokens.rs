//! `hashroute tokens add|remove|reweigh`: one membership change to a tokens file, made by the
//! kernel's token allocator (keys move only to, off or from the changed node), printed as the
//! whole new tokens file.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use hashroute::{Error, Node, NodeSet, Router, TokenRing};

use crate::failure::Failure;
use crate::tokens_file::read_tokens_file;

/// Add, remove or reweigh one node of a tokens file with the fewest keys moved: prints the whole
/// new tokens file
///
/// An addition keeps every existing token where it is and moves keys only to the new node. A
/// removal moves only the removed node's keys, a weight change only keys between that node and
/// the others; to save token room, either may also move a neighbouring node's token over the
/// changed node's range or merge two adjacent tokens of one node (no other key moves). The same
/// command on the same file prints the same bytes on every machine.
#[derive(Args, Debug)]
pub(crate) struct TokensArgs {
    #[command(subcommand)]
    op: TokensOp,
}

#[derive(Subcommand, Debug)]
enum TokensOp {
    Add(AddArgs),
    Remove(RemoveArgs),
    Reweigh(ReweighArgs),
}

/// The allocator's nominal token count, shared by the three changes.
#[derive(Args, Debug)]
struct AllocArgs {
    #[arg(long, value_name = "V", help = tokens_per_node_help())]
    tokens_per_node: Option<u32>,
}

fn tokens_per_node_help() -> String {
    format!(
        "Tokens the allocator gives a new node, and the nominal count V that keeps every node within 2V tokens \
         (1 to {}) [default: {}, Cassandra's num_tokens]",
        hashroute::token_ring::TokenAllocator::MAX_TOKENS_PER_NODE,
        TokenRing::DEFAULT_TOKENS_PER_NODE
    )
}

/// Add a node: it gets V tokens taking its weighted share from the most loaded nodes
#[derive(Args, Debug)]
struct AddArgs {
    /// The ring to add to (`NAME ZONE RACK TOKEN [WEIGHT]` per line); without it the ring
    /// starts empty
    #[arg(long, value_name = "FILE")]
    tokens_file: Option<PathBuf>,
    /// The new node's name
    #[arg(long, value_name = "NAME")]
    node: String,
    /// Its weight: its share of the keys is weight / total weight [default: 1]
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    weight: Option<f64>,
    /// Its zone (Cassandra's datacenter)
    #[arg(long, value_name = "Z", default_value = "dc1")]
    zone: String,
    /// Its rack
    #[arg(long, value_name = "R", default_value = "rack1")]
    rack: String,
    #[command(flatten)]
    alloc: AllocArgs,
}

/// Remove a node: its ranges go to the least loaded nodes
#[derive(Args, Debug)]
struct RemoveArgs {
    /// The ring (`NAME ZONE RACK TOKEN [WEIGHT]` per line)
    #[arg(long, value_name = "FILE")]
    tokens_file: PathBuf,
    /// The node to remove
    #[arg(long, value_name = "NAME")]
    node: String,
    #[command(flatten)]
    alloc: AllocArgs,
}

/// Change a node's weight: ranges move only between it and the others
#[derive(Args, Debug)]
struct ReweighArgs {
    /// The ring (`NAME ZONE RACK TOKEN [WEIGHT]` per line)
    #[arg(long, value_name = "FILE")]
    tokens_file: PathBuf,
    /// The node to reweigh
    #[arg(long, value_name = "NAME")]
    node: String,
    /// Its new weight
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    weight: f64,
    #[command(flatten)]
    alloc: AllocArgs,
}

pub(crate) fn run(args: TokensArgs) -> Result<(), Failure> {
    let ring = match args.op {
        TokensOp::Add(a) => add(&a)?,
        TokensOp::Remove(a) => {
            let ring = existing(&a.tokens_file, &a.alloc)?;
            require_node(&ring, &a.node, &a.tokens_file)?;
            if ring.nodes().len() == 1 {
                return Err(Failure::msg(format!(
                    "--node {}: cannot remove the last node of tokens file {}",
                    a.node,
                    a.tokens_file.display()
                )));
            }
            ring.without_node(&a.node)?
        }
        TokensOp::Reweigh(a) => {
            let ring = existing(&a.tokens_file, &a.alloc)?;
            require_node(&ring, &a.node, &a.tokens_file)?;
            check_weight(&a.node, a.weight)?;
            ring.with_weight(&a.node, a.weight)?
        }
    };
    let text = ring.to_tokens_file()?;
    let mut out = BufWriter::new(io::stdout().lock());
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `tokens add`: the node, checked flag by flag, then added to the file's ring or to an empty
/// one.
fn add(a: &AddArgs) -> Result<TokenRing, Failure> {
    for (flag, value) in [("--node", &a.node), ("--zone", &a.zone), ("--rack", &a.rack)] {
        writable(flag, value)?;
    }
    let weight = a.weight.unwrap_or(1.0);
    check_weight(&a.node, weight)?;
    let node = Node::new(a.node.as_str()).with_weight(weight).with_label("zone", &a.zone).with_label("rack", &a.rack);
    let Some(path) = &a.tokens_file else {
        let v = tokens_per_node(&a.alloc);
        let ring = TokenRing::builder().tokens_per_node(v).node(node).build();
        return ring.map_err(|e| Failure::context(format!("--tokens-per-node {v}"), e));
    };
    let ring = existing(path, &a.alloc)?;
    if ring.nodes().id_of(&a.node).is_some() {
        return Err(Failure::msg(format!("--node {}: already in tokens file {}", a.node, path.display())));
    }
    Ok(ring.with_node(node)?)
}

fn tokens_per_node(alloc: &AllocArgs) -> u32 {
    alloc.tokens_per_node.unwrap_or(TokenRing::DEFAULT_TOKENS_PER_NODE)
}

/// The ring of `path`, allocating later changes with `--tokens-per-node` (the file does not
/// record it).
fn existing(path: &Path, alloc: &AllocArgs) -> Result<TokenRing, Failure> {
    let ring = read_tokens_file(path)?;
    let v = tokens_per_node(alloc);
    ring.with_tokens_per_node(v).map_err(|e| Failure::context(format!("--tokens-per-node {v}"), e))
}

fn require_node(ring: &TokenRing, name: &str, path: &Path) -> Result<(), Failure> {
    match ring.nodes().id_of(name) {
        Some(_) => Ok(()),
        None => {
            Err(Failure::msg(format!("--node {name}: unknown node {name:?} (not in tokens file {})", path.display())))
        }
    }
}

/// The kernel's weight rule (finite, > 0), reported against `--weight`.
fn check_weight(node: &str, weight: f64) -> Result<(), Failure> {
    match NodeSet::new([Node::new(node).with_weight(weight)]) {
        Err(err @ Error::InvalidWeight { .. }) => Err(Failure::context(format!("--weight {weight}"), err)),
        // A bad name is reported by the step that reads it (`--node`, or the file's check).
        _ => Ok(()),
    }
}

/// A value a tokens file can carry as one field: non-empty, no whitespace, no `#` (the
/// format's separators and comment mark).
fn writable(flag: &str, value: &str) -> Result<(), Failure> {
    if value.is_empty() || value.contains(|c: char| c.is_whitespace() || c == '#') {
        return Err(Failure::msg(format!(
            "{flag} {value:?}: a tokens file field cannot be empty or hold whitespace or '#'"
        )));
    }
    Ok(())
}
