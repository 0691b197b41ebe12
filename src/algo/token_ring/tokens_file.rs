//! The tokens file: a token ring as text, one token per line, the shape of `nodetool ring`.
//!
//! ```text
//! # NAME ZONE RACK TOKEN [WEIGHT]
//! 10.0.0.1 dc1 rack1 -9223372036854775807
//! 10.0.0.1 dc1 rack1 -3074457345618258603 2
//! 10.0.0.2 dc1 rack2 3074457345618258602
//! ```
//!
//! Fields are separated by whitespace; `#` starts a comment; blank lines are ignored. ZONE is
//! Cassandra's datacenter (the node's `zone` label), RACK its rack (`rack` label), TOKEN a
//! signed 64-bit integer. A node's tokens are on several lines, all with the same zone and
//! rack; its weight (default 1) may be on any of them, never two different ones. The order of
//! the lines does not matter: nodes are numbered by name.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::TokenRing;
use crate::circle::Layout;
use crate::error::{Error, Result};
use crate::node::{Node, NodeSet};

/// One parsed line.
struct Line<'a> {
    name: &'a str,
    zone: &'a str,
    rack: &'a str,
    token: i64,
    weight: Option<f64>,
}

/// A node being gathered from its lines: what it was given, and where.
struct Gathered<'a> {
    name: &'a str,
    zone: &'a str,
    rack: &'a str,
    /// The line that gave the zone and rack (the node's first).
    first_line: usize,
    /// The weight and the line that gave it.
    weight: Option<(f64, usize)>,
    tokens: Vec<i64>,
}

fn malformed(line: usize, what: String) -> Error {
    Error::Malformed(format!("line {line}: {what}"))
}

/// Splits and checks one line; `None` for a blank or comment line.
fn parse_line(raw: &str, line: usize) -> Result<Option<Line<'_>>> {
    let text = raw.split('#').next().unwrap_or("");
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.is_empty() {
        return Ok(None);
    }
    if !(4..=5).contains(&fields.len()) {
        let n = fields.len();
        return Err(malformed(line, format!("expected NAME ZONE RACK TOKEN [WEIGHT], got {n} field{}", plural(n))));
    }
    if fields[0].contains(crate::node::BOM) {
        return Err(malformed(line, format!("a byte-order mark (U+FEFF) inside the name {:?}", fields[0])));
    }
    let token = fields[3]
        .parse::<i64>()
        .map_err(|_| malformed(line, format!("token {:?} is not a signed 64-bit integer", fields[3])))?;
    let weight = match fields.get(4) {
        None => None,
        Some(w) => {
            let value: f64 = w.parse().map_err(|_| malformed(line, format!("weight {w:?} is not a number")))?;
            if !(value.is_finite() && value > 0.0) {
                return Err(malformed(
                    line,
                    format!("weight {w} of node {:?} must be finite and greater than 0", fields[0]),
                ));
            }
            Some(value)
        }
    };
    Ok(Some(Line { name: fields[0], zone: fields[1], rack: fields[2], token, weight }))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl<'a> Gathered<'a> {
    /// Adds one more line of this node, checking it agrees with the earlier ones.
    fn add(&mut self, l: &Line<'a>, line: usize) -> Result<()> {
        let first = self.first_line;
        let name = self.name;
        if l.zone != self.zone {
            return Err(malformed(
                line,
                format!("node {name:?} has zone {:?}, but line {first} gave it zone {:?}", l.zone, self.zone),
            ));
        }
        if l.rack != self.rack {
            return Err(malformed(
                line,
                format!("node {name:?} has rack {:?}, but line {first} gave it rack {:?}", l.rack, self.rack),
            ));
        }
        match (l.weight, self.weight) {
            (Some(w), Some((before, at))) if w != before => {
                return Err(malformed(
                    line,
                    format!("node {name:?} has weight {w}, but line {at} gave it weight {before}"),
                ));
            }
            (Some(w), None) => self.weight = Some((w, line)),
            _ => {}
        }
        self.tokens.push(l.token);
        Ok(())
    }

    fn into_node(self) -> Node {
        let node = Node::new(self.name).with_label("zone", self.zone).with_label("rack", self.rack);
        let node = node.with_tokens(self.tokens);
        match self.weight {
            Some((w, _)) => node.with_weight(w),
            None => node,
        }
    }
}

/// The nodes of a tokens file, sorted by name, every line checked (see the module docs).
fn parse_nodes(text: &str) -> Result<Vec<Node>> {
    let mut gathered: Vec<Gathered<'_>> = Vec::new();
    // Lookups only (never iterated), so the hasher's per-process seed cannot reach a result.
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    let mut token_lines: HashMap<i64, (usize, &str)> = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let Some(l) = parse_line(raw, line)? else { continue };
        if let Some((first, owner)) = token_lines.insert(l.token, (line, l.name)) {
            return Err(malformed(
                line,
                format!(
                    "token {} is given twice: on line {first} (node {owner:?}) and on line {line} (node {:?})",
                    l.token, l.name
                ),
            ));
        }
        match by_name.get(l.name) {
            Some(&g) => gathered[g].add(&l, line)?,
            None => {
                by_name.insert(l.name, gathered.len());
                let weight = l.weight.map(|w| (w, line));
                let g = Gathered {
                    name: l.name,
                    zone: l.zone,
                    rack: l.rack,
                    first_line: line,
                    weight,
                    tokens: vec![l.token],
                };
                gathered.push(g);
            }
        }
    }
    gathered.sort_unstable_by(|a, b| a.name.cmp(b.name));
    Ok(gathered.into_iter().map(Gathered::into_node).collect())
}

/// A field the file format can carry: non-empty, no whitespace, no `#`.
fn writable(what: &str, node: &str, value: Option<&str>) -> Result<()> {
    match value {
        Some(v) if !v.is_empty() && !v.contains(|c: char| c.is_whitespace() || c == '#') => Ok(()),
        Some(v) => Err(Error::InvalidParameter {
            name: "tokens file",
            reason: format!("node {node:?}: {what} {v:?} cannot be written (empty, or has whitespace or '#')"),
        }),
        None => Err(Error::InvalidParameter {
            name: "tokens file",
            reason: format!("node {node:?} has no {what} label, which every line of a tokens file needs"),
        }),
    }
}

/// A weight as text that parses back to the same `f64`: the shortest decimal, or scientific
/// notation when that is shorter to read (very large or small weights).
fn weight_text(w: f64) -> String {
    let plain = format!("{w}");
    if plain.len() > 24 {
        format!("{w:e}")
    } else {
        plain
    }
}

impl TokenRing {
    /// Reads a tokens file: one token per line, `NAME ZONE RACK TOKEN [WEIGHT]`, fields
    /// separated by whitespace, `#` starting a comment, blank lines ignored (the shape of
    /// `nodetool ring`). ZONE is the node's datacenter (its `zone` label), RACK its `rack`
    /// label, TOKEN a signed 64-bit integer. A node's tokens are on several lines, all with the
    /// same zone and rack; its weight (default 1) may be on any of them, never two different
    /// ones. Nodes are numbered by name, so the order of the lines changes nothing. O(L) for L
    /// lines plus the build's O(P) sort.
    ///
    /// ```
    /// let ring = hashroute::TokenRing::parse(
    ///     "# NAME ZONE RACK TOKEN [WEIGHT]\n\
    ///      10.0.0.1 dc1 rack1 -4611686018427387904\n\
    ///      10.0.0.2 dc1 rack2 0 2\n\
    ///      10.0.0.1 dc1 rack1 4611686018427387904\n",
    /// )?;
    /// assert_eq!(ring.token_count(), 3);
    /// assert_eq!(ring.to_tokens_file()?.lines().count(), 4); // a header and one line per token
    /// # Ok::<(), hashroute::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Malformed`], one line starting `line N:`: a line with fewer than 4 or more than
    /// 5 fields, a token that is not a signed 64-bit integer, a token given twice (both lines
    /// named), a weight that is not a number or not finite and greater than 0, a node given two
    /// zones, racks or weights (both lines named). [`Error::NoNodes`] for a file without
    /// tokens; [`Error::TooManyPoints`] past [`TokenRing::MAX_TOKENS`]. A leading byte-order
    /// mark is skipped.
    pub fn parse(text: &str) -> Result<TokenRing> {
        let text = crate::node::strip_bom(text);
        TokenRing::from_parts(NodeSet::new(parse_nodes(text)?)?, Layout::Auto, TokenRing::DEFAULT_TOKENS_PER_NODE)
    }

    /// The ring as a tokens file, one line per token sorted by token, after a header comment:
    /// [`TokenRing::parse`] reads it back to an equal ring (same names, labels `zone` and
    /// `rack`, weights, tokens; other labels are not written). A weight other than 1 is written
    /// on every line of its node. O(P).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] `tokens file` when a node lacks a `zone` or `rack` label, or
    /// its name, zone or rack is empty or holds whitespace or `#` (the format could not carry
    /// it).
    pub fn to_tokens_file(&self) -> Result<String> {
        // Per node: "NAME ZONE RACK" and " WEIGHT" (empty for weight 1), formatted once.
        let mut parts: Vec<(String, String)> = Vec::with_capacity(self.nodes.len());
        for (_, node) in self.nodes.iter() {
            let name = node.name();
            writable("name", name, Some(name))?;
            writable("zone", name, node.label("zone"))?;
            writable("rack", name, node.label("rack"))?;
            let head = format!("{name} {} {}", node.label("zone").unwrap_or(""), node.label("rack").unwrap_or(""));
            let weight = if node.weight() == 1.0 { String::new() } else { format!(" {}", weight_text(node.weight())) };
            parts.push((head, weight));
        }
        let mut out = String::with_capacity(32 + self.token_count() * 48);
        out.push_str("# NAME ZONE RACK TOKEN [WEIGHT]\n");
        for (token, id) in self.tokens() {
            let (head, weight) = &parts[id.index()];
            writeln!(out, "{head} {token}{weight}").expect("writing to a String");
        }
        Ok(out)
    }
}
