//! The CRUSH map text form (`crushtool -d`) to a [`CrushMap`], compiled as `crushtool -c`
//! compiles it: legacy tunables unless a `tunable` line says otherwise, item weights parsed as
//! single-precision floats and truncated to 16.16 fixed point, bucket ids assigned where
//! missing, device-class shadow trees built before the first rule. Every error is one line
//! naming the line of the text it is about.

use std::collections::{BTreeSet, HashMap};

use super::map::{Bucket, BucketAlg, CrushMap, Rule, Step, Tunables};
use crate::error::{Error, Result};

/// Largest device id accepted (Ceph's own limit is far above any cluster; this one bounds the
/// memory a hostile map can ask for).
const MAX_DEVICE_ID: i32 = 1 << 20;
/// Most negative bucket id accepted, for the same reason.
const MIN_BUCKET_ID: i32 = -(1 << 20);
/// Buckets, shadow copies of device classes included.
const MAX_BUCKETS: usize = 1 << 20;
/// Rule ids are a byte in Ceph's encoding.
const MAX_RULE_ID: i32 = 255;
/// Items per bucket.
const MAX_ITEMS: usize = 1 << 16;
/// `CRUSH_MAX_DEVICE_WEIGHT`: a device item may weigh at most 100.
const MAX_DEVICE_WEIGHT: u64 = 100 * 0x10000;
/// `CRUSH_MAX_BUCKET_WEIGHT`.
const MAX_BUCKET_WEIGHT: u64 = 65535 * 0x10000;
/// Retry counts (tunables and `set_*_tries` steps) above this are refused: a mapping retries up
/// to this many times per replica, and a hostile map must not make one mapping take hours.
/// Deployed maps use 50 to a few hundred.
const MAX_TRIES: i32 = 10_000;
/// `choose ... N` with `|N|` above this is refused, for the same reason (a replica count).
const MAX_NUMREP: i32 = 1000;

fn err(line: usize, what: impl std::fmt::Display) -> Error {
    Error::Malformed(format!("line {line}: {what}"))
}

/// A word of the text and the line it is on.
#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    text: &'a str,
    line: usize,
}

fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let code = raw.split('#').next().unwrap_or("");
        let mut start = None;
        for (i, c) in code.char_indices() {
            let single = matches!(c, '{' | '}' | '[' | ']');
            if c.is_whitespace() || single {
                if let Some(s) = start.take() {
                    out.push(Token { text: &code[s..i], line });
                }
                if single {
                    out.push(Token { text: &code[i..i + 1], line });
                }
            } else if start.is_none() {
                start = Some(i);
            }
        }
        if let Some(s) = start {
            out.push(Token { text: &code[s..], line });
        }
    }
    out
}

/// A cursor over the tokens.
struct Cursor<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
    last_line: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<Token<'a>> {
        self.tokens.get(self.pos).copied()
    }

    fn next(&mut self, what: &str) -> Result<Token<'a>> {
        let t = self
            .tokens
            .get(self.pos)
            .copied()
            .ok_or_else(|| err(self.last_line, format!("expected {what}, found the end of the map")))?;
        self.pos += 1;
        Ok(t)
    }

    fn expect(&mut self, word: &str) -> Result<Token<'a>> {
        let t = self.next(&format!("`{word}`"))?;
        if t.text != word {
            return Err(err(t.line, format!("expected `{word}`, found `{}`", t.text)));
        }
        Ok(t)
    }

    fn int(&mut self, what: &str) -> Result<(i32, usize)> {
        let t = self.next(what)?;
        let digits = t.text.strip_prefix('-').unwrap_or(t.text);
        let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let value = t.text.parse::<i32>().ok().filter(|_| ok);
        value.map(|v| (v, t.line)).ok_or_else(|| err(t.line, format!("{what}: `{}` is not a 32-bit integer", t.text)))
    }

    fn name(&mut self, what: &str) -> Result<Token<'a>> {
        let t = self.next(what)?;
        let ok = t.text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'));
        if !ok || matches!(t.text, "{" | "}") {
            return Err(err(t.line, format!("{what}: `{}` is not a name", t.text)));
        }
        Ok(t)
    }
}

/// A bucket as written, before its items are resolved.
struct RawBucket<'a> {
    name: &'a str,
    line: usize,
    type_id: i32,
    id: Option<i32>,
    class_ids: Vec<(u32, i32, usize)>,
    alg: BucketAlg,
    items: Vec<RawItem<'a>>,
}

struct RawItem<'a> {
    name: &'a str,
    line: usize,
    weight: Option<u32>,
    pos: Option<(i32, usize)>,
}

/// Everything the text declares, in the order `crushtool -c` needs it.
#[derive(Default)]
struct Builder<'a> {
    tunables: Option<Tunables>,
    devices: Vec<Option<String>>,
    device_class: Vec<Option<u32>>,
    types: HashMap<i32, String>,
    type_ids: HashMap<&'a str, i32>,
    classes: Vec<String>,
    names: HashMap<&'a str, (i32, usize)>,
    buckets: Vec<RawBucket<'a>>,
    rules: Vec<(Token<'a>, Cursor<'a>)>,
}

impl CrushMap {
    /// Parses and compiles the text form of a CRUSH map (`crushtool -d` output).
    ///
    /// # Errors
    /// [`Error::Malformed`] with `line N: what`: a token the grammar does not allow, a name
    /// used before or without its definition, a duplicate, an out-of-range id or weight, a loop
    /// in the hierarchy, a `straw` (v1) bucket or `choose_args` weight sets (not modelled), a
    /// rule naming a missing bucket, type or class. Never panics.
    pub fn parse(text: &str) -> Result<CrushMap> {
        let tokens = tokenize(text);
        let last_line = text.lines().count().max(1);
        let mut cur = Cursor { tokens, pos: 0, last_line };
        let mut b = Builder::default();
        while let Some(t) = cur.peek() {
            match t.text {
                "tunable" => b.tunable(&mut cur)?,
                "device" => b.device(&mut cur)?,
                "type" => b.type_line(&mut cur)?,
                "rule" => b.rule_block(&mut cur)?,
                "choose_args" => {
                    return Err(err(t.line, "choose_args (balancer weight sets) are not modelled; remove the section to map with the buckets' own weights"))
                }
                word if b.type_ids.contains_key(word) => {
                    if !b.rules.is_empty() {
                        return Err(err(t.line, "buckets must be defined before rules"));
                    }
                    b.bucket(&mut cur)?
                }
                other => return Err(err(t.line, format!("unexpected `{other}` (not a tunable, device, type, bucket of a defined type or rule)"))),
            }
        }
        b.compile()
    }
}

impl<'a> Builder<'a> {
    fn tunable(&mut self, cur: &mut Cursor<'a>) -> Result<()> {
        cur.next("tunable")?;
        let name = cur.name("tunable name")?;
        let (value, line) = cur.int("tunable value")?;
        let value = u32::try_from(value)
            .map_err(|_| err(line, format!("tunable {} {value}: must not be negative", name.text)))?;
        if name.text.ends_with("_tries") && value > MAX_TRIES as u32 {
            return Err(err(
                line,
                format!(
                    "tunable {} {value} exceeds {MAX_TRIES} (hashroute bounds the retries of one mapping)",
                    name.text
                ),
            ));
        }
        let t = self.tunables.get_or_insert(Tunables::LEGACY);
        if !t.set(name.text, value) {
            return Err(err(name.line, format!("tunable `{}` is not recognized", name.text)));
        }
        Ok(())
    }

    fn class_id(&mut self, name: &str) -> u32 {
        match self.classes.iter().position(|c| c == name) {
            Some(i) => i as u32,
            None => {
                self.classes.push(name.to_owned());
                (self.classes.len() - 1) as u32
            }
        }
    }

    fn device(&mut self, cur: &mut Cursor<'a>) -> Result<()> {
        cur.next("device")?;
        let (id, line) = cur.int("device id")?;
        if !(0..MAX_DEVICE_ID).contains(&id) {
            return Err(err(line, format!("device id {id} is out of range (0 to {MAX_DEVICE_ID})")));
        }
        let name = cur.name("device name")?;
        let mut class = None;
        if cur.peek().is_some_and(|t| t.text == "class") {
            cur.next("class")?;
            let c = cur.name("device class")?;
            class = Some(self.class_id(c.text));
        }
        self.define(name, id)?;
        let i = id as usize;
        if self.devices.len() <= i {
            self.devices.resize(i + 1, None);
            self.device_class.resize(i + 1, None);
        }
        if self.devices[i].is_some() {
            return Err(err(line, format!("device id {id} is already defined")));
        }
        self.devices[i] = Some(name.text.to_owned());
        self.device_class[i] = class;
        Ok(())
    }

    fn define(&mut self, name: Token<'a>, id: i32) -> Result<()> {
        if let Some((_, line)) = self.names.insert(name.text, (id, name.line)) {
            return Err(err(name.line, format!("`{}` is already defined (line {line})", name.text)));
        }
        Ok(())
    }

    fn type_line(&mut self, cur: &mut Cursor<'a>) -> Result<()> {
        cur.next("type")?;
        let (id, line) = cur.int("type id")?;
        let name = cur.name("type name")?;
        if self.types.contains_key(&id) {
            return Err(err(line, format!("type id {id} is already defined")));
        }
        if self.type_ids.insert(name.text, id).is_some() {
            return Err(err(name.line, format!("type `{}` is already defined", name.text)));
        }
        self.types.insert(id, name.text.to_owned());
        Ok(())
    }

    fn bucket(&mut self, cur: &mut Cursor<'a>) -> Result<()> {
        let type_tok = cur.next("bucket type")?;
        let type_id = self.type_ids[type_tok.text];
        let name = cur.name("bucket name")?;
        cur.expect("{")?;
        let mut raw = RawBucket {
            name: name.text,
            line: name.line,
            type_id,
            id: None,
            class_ids: Vec::new(),
            alg: BucketAlg::Straw2,
            items: Vec::new(),
        };
        let mut alg_seen = false;
        loop {
            let t = cur.next("`}` closing the bucket")?;
            match t.text {
                "}" => break,
                "id" => {
                    let (id, line) = cur.int("bucket id")?;
                    if !(MIN_BUCKET_ID..0).contains(&id) {
                        return Err(err(line, format!("bucket id {id} must be negative (down to {MIN_BUCKET_ID})")));
                    }
                    if cur.peek().is_some_and(|t| t.text == "class") {
                        cur.next("class")?;
                        let c = cur.name("device class")?;
                        let cid = self.class_id(c.text);
                        if raw.class_ids.iter().any(|&(k, _, _)| k == cid) {
                            return Err(err(
                                c.line,
                                format!("duplicate device class {} for bucket {}", c.text, raw.name),
                            ));
                        }
                        raw.class_ids.push((cid, id, line));
                    } else {
                        raw.id = Some(id);
                    }
                }
                "alg" => {
                    let a = cur.name("bucket algorithm")?;
                    raw.alg = match a.text {
                        "straw2" => BucketAlg::Straw2,
                        "uniform" => BucketAlg::Uniform,
                        "list" => BucketAlg::List,
                        "tree" => BucketAlg::Tree,
                        "straw" => {
                            return Err(err(a.line, format!("bucket {}: alg straw (v1) is not supported; convert it with `ceph osd crush set-all-straw-buckets-to-straw2`", raw.name)))
                        }
                        other => return Err(err(a.line, format!("bucket {}: unknown bucket alg `{other}`", raw.name))),
                    };
                    alg_seen = true;
                }
                "hash" => {
                    let h = cur.name("bucket hash")?;
                    if !matches!(h.text, "0" | "rjenkins1") {
                        return Err(err(
                            h.line,
                            format!("bucket {}: hash {} is not supported (only 0, rjenkins1)", raw.name, h.text),
                        ));
                    }
                }
                "item" => raw.items.push(Self::item(cur)?),
                other => {
                    return Err(err(
                        t.line,
                        format!("bucket {}: unexpected `{other}` (expected id, alg, hash, item or `}}`)", raw.name),
                    ))
                }
            }
        }
        if !alg_seen {
            return Err(err(raw.line, format!("bucket {}: no `alg` line", raw.name)));
        }
        if raw.items.len() > MAX_ITEMS {
            return Err(err(raw.line, format!("bucket {}: more than {MAX_ITEMS} items", raw.name)));
        }
        // The id is not known yet (it may be assigned); names are reserved now.
        self.define(name, 0)?;
        self.buckets.push(raw);
        Ok(())
    }

    fn item(cur: &mut Cursor<'a>) -> Result<RawItem<'a>> {
        let name = cur.name("item name")?;
        let mut item = RawItem { name: name.text, line: name.line, weight: None, pos: None };
        while let Some(t) = cur.peek() {
            match t.text {
                "weight" => {
                    cur.next("weight")?;
                    let w = cur.next("item weight")?;
                    item.weight = Some(parse_weight(w.text, w.line)?);
                }
                "pos" => {
                    cur.next("pos")?;
                    item.pos = Some(cur.int("item pos")?);
                }
                _ => break,
            }
        }
        Ok(item)
    }

    fn rule_block(&mut self, cur: &mut Cursor<'a>) -> Result<()> {
        let start = cur.next("rule")?;
        // The body is parsed after the buckets are compiled (a rule names buckets and classes).
        let begin = cur.pos;
        let mut depth = 0;
        loop {
            let t = cur.next("`}` closing the rule")?;
            match t.text {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        let body = Cursor { tokens: cur.tokens[begin..cur.pos].to_vec(), pos: 0, last_line: cur.last_line };
        self.rules.push((start, body));
        Ok(())
    }
}

/// An item weight as `crushtool -c` reads it: a single-precision float times 0x10000, truncated.
fn parse_weight(text: &str, line: usize) -> Result<u32> {
    let numeric =
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    let value: f32 =
        text.parse().ok().filter(|_| numeric).ok_or_else(|| err(line, format!("weight `{text}` is not a number")))?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(err(line, format!("weight {text} must be a finite number >= 0")));
    }
    let fixed = value * 65536.0f32;
    if fixed >= 4_294_967_296.0 {
        return Err(err(line, format!("weight {text} overflows 16.16 fixed point")));
    }
    Ok(fixed as u32)
}

impl<'a> Builder<'a> {
    fn compile(mut self) -> Result<CrushMap> {
        let buckets = self.resolve_buckets()?;
        let mut map = CrushMap {
            tunables: self.tunables.unwrap_or(Tunables::LEGACY),
            devices: std::mem::take(&mut self.devices),
            device_class: std::mem::take(&mut self.device_class),
            types: std::mem::take(&mut self.types),
            buckets: Vec::new(),
            bucket_names: HashMap::new(),
            rules: Vec::new(),
            classes: std::mem::take(&mut self.classes),
        };
        let mut class_bucket: HashMap<(i32, u32), i32> = HashMap::new();
        let mut used_shadow = BTreeSet::new();
        for (bucket, name, shadow_ids) in buckets {
            for &(cid, sid, line) in &shadow_ids {
                if !used_shadow.insert(sid) {
                    return Err(err(line, format!("shadow bucket id {sid} is used twice")));
                }
                class_bucket.insert((bucket.id, cid), sid);
            }
            map.bucket_names.insert(bucket.id, name);
            insert_bucket(&mut map.buckets, bucket);
        }
        for &sid in &used_shadow {
            if map.bucket(sid).is_some() {
                let line = self.buckets.iter().flat_map(|b| &b.class_ids).find(|c| c.1 == sid).map_or(1, |c| c.2);
                return Err(err(line, format!("shadow bucket id {sid} is also a bucket's id")));
            }
        }
        let rules = std::mem::take(&mut self.rules);
        let copies = self.buckets.len().saturating_mul(map.classes.len() + 1);
        if !rules.is_empty() && copies > MAX_BUCKETS {
            return Err(err(rules[0].0.line, format!(
                "{} buckets with {} device classes need {copies} buckets with their shadow copies, more than {MAX_BUCKETS}",
                self.buckets.len(),
                map.classes.len()
            )));
        }
        if !rules.is_empty() {
            let shadows = super::classes::populate(&mut map, &class_bucket, &used_shadow);
            for (start, body) in rules {
                let rule = self.rule(&map, &shadows, start, body)?;
                let id = rule.id as usize;
                if map.rules.len() <= id {
                    map.rules.resize(id + 1, None);
                }
                if map.rules[id].is_some() {
                    return Err(err(start.line, format!("rule {id} already exists")));
                }
                map.rules[id] = Some(rule);
            }
        }
        Ok(map)
    }
}

fn insert_bucket(buckets: &mut Vec<Option<Bucket>>, bucket: Bucket) {
    let index = (-1 - bucket.id) as usize;
    if buckets.len() <= index {
        buckets.resize(index + 1, None);
    }
    buckets[index] = Some(bucket);
}

pub(super) fn add_bucket(map: &mut CrushMap, bucket: Bucket) {
    insert_bucket(&mut map.buckets, bucket);
}

type Resolved = (Bucket, String, Vec<(u32, i32, usize)>);

impl<'a> Builder<'a> {
    /// Assigns ids, resolves items to ids and weights (a bucket item weighs what its bucket
    /// holds unless the line says otherwise), in dependency order, refusing loops.
    fn resolve_buckets(&mut self) -> Result<Vec<Resolved>> {
        let mut used: BTreeSet<i32> = BTreeSet::new();
        for b in &self.buckets {
            if let Some(id) = b.id {
                if !used.insert(id) {
                    return Err(err(b.line, format!("bucket {}: duplicate bucket id {id}", b.name)));
                }
            }
        }
        let mut ids = Vec::with_capacity(self.buckets.len());
        // Ids are only taken, never freed: the search for the first free one resumes.
        let mut free = -1;
        for b in &self.buckets {
            let id = match b.id {
                Some(id) => id,
                None => {
                    while used.contains(&free) {
                        free -= 1;
                    }
                    used.insert(free);
                    free
                }
            };
            ids.push(id);
        }
        let index: HashMap<&str, usize> = self.buckets.iter().enumerate().map(|(i, b)| (b.name, i)).collect();
        let mut done: Vec<Option<Bucket>> = vec![None; self.buckets.len()];
        // 0 = not visited, 1 = on the stack, 2 = done.
        let mut state = vec![0u8; self.buckets.len()];
        for start in 0..self.buckets.len() {
            self.visit(start, &index, &ids, &mut state, &mut done)?;
        }
        let mut out = Vec::with_capacity(done.len());
        for (i, b) in done.into_iter().enumerate() {
            let raw = &self.buckets[i];
            // visit() fills every slot.
            let Some(b) = b else { return Err(err(raw.line, "internal: bucket not resolved")) };
            out.push((b, raw.name.to_owned(), raw.class_ids.clone()));
        }
        Ok(out)
    }

    fn visit(
        &self,
        i: usize,
        index: &HashMap<&str, usize>,
        ids: &[i32],
        state: &mut [u8],
        done: &mut [Option<Bucket>],
    ) -> Result<()> {
        // An explicit stack: a hostile map may nest buckets deeper than the thread's stack.
        let mut stack: Vec<(usize, usize)> = vec![(i, 0)];
        if state[i] == 2 {
            return Ok(());
        }
        state[i] = 1;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            let raw = &self.buckets[b];
            if let Some(item) = raw.items.get(*next) {
                *next += 1;
                if let Some(&child) = index.get(item.name) {
                    match state[child] {
                        1 => {
                            return Err(err(
                                item.line,
                                format!(
                                    "loop in the hierarchy: bucket {} contains {}, which contains it",
                                    raw.name, item.name
                                ),
                            ))
                        }
                        0 => {
                            state[child] = 1;
                            stack.push((child, 0));
                        }
                        _ => {}
                    }
                }
                continue;
            }
            done[b] = Some(self.build_bucket(b, index, ids, done)?);
            state[b] = 2;
            stack.pop();
        }
        Ok(())
    }

    fn build_bucket(
        &self,
        b: usize,
        index: &HashMap<&str, usize>,
        ids: &[i32],
        done: &[Option<Bucket>],
    ) -> Result<Bucket> {
        let raw = &self.buckets[b];
        let mut size = raw.items.len();
        let mut used_pos = BTreeSet::new();
        for item in &raw.items {
            if let Some((pos, line)) = item.pos {
                if pos < 0 || !used_pos.insert(pos) {
                    return Err(err(
                        line,
                        format!(
                            "item {} in bucket {} has pos {pos}, which is occupied or negative",
                            item.name, raw.name
                        ),
                    ));
                }
            }
        }
        if let Some(&max) = used_pos.last() {
            size = size.max(max as usize);
        }
        if size > MAX_ITEMS {
            return Err(err(raw.line, format!("bucket {}: more than {MAX_ITEMS} item positions", raw.name)));
        }
        let mut items = vec![0i32; size];
        let mut weights = vec![0u32; size];
        let mut filled = vec![false; size];
        let mut members = std::collections::HashSet::with_capacity(size);
        let mut curpos = 0usize;
        let mut total: u64 = 0;
        for item in &raw.items {
            let (id, default_weight) = if let Some(&child) = index.get(item.name) {
                let w = done[child].as_ref().map_or(0, |c| c.weight);
                (ids[child], w)
            } else if let Some(&(id, _)) = self.names.get(item.name) {
                (id, 0x10000)
            } else {
                return Err(err(item.line, format!("item {} in bucket {} is not defined", item.name, raw.name)));
            };
            let weight = item.weight.unwrap_or(default_weight);
            let cap = if id >= 0 { MAX_DEVICE_WEIGHT } else { MAX_BUCKET_WEIGHT };
            if u64::from(weight) > cap {
                return Err(err(
                    item.line,
                    format!("item {} weighs more than the limit of {}", item.name, cap / 0x10000),
                ));
            }
            let pos = match item.pos {
                Some((p, line)) => {
                    let p = p as usize;
                    if p >= size {
                        return Err(err(
                            line,
                            format!("item {} in bucket {} has pos {p} >= size {size}", item.name, raw.name),
                        ));
                    }
                    p
                }
                None => {
                    while used_pos.contains(&(curpos as i32)) {
                        curpos += 1;
                    }
                    curpos += 1;
                    curpos - 1
                }
            };
            if raw.alg == BucketAlg::Uniform
                && raw.items.first().and_then(|f| f.weight) != item.weight
                && item.weight.is_some()
            {
                return Err(err(
                    item.line,
                    format!(
                        "item {} in uniform bucket {} has a different weight than the previous items",
                        item.name, raw.name
                    ),
                ));
            }
            if !members.insert(id) {
                return Err(err(item.line, format!("item {} appears twice in bucket {}", item.name, raw.name)));
            }
            items[pos] = id;
            weights[pos] = weight;
            filled[pos] = true;
            total += u64::from(weight);
            if total > u64::from(u32::MAX) {
                return Err(err(item.line, format!("bucket {}: the item weights overflow", raw.name)));
            }
        }
        if filled.iter().any(|f| !f) {
            return Err(err(raw.line, format!("bucket {}: item positions have gaps", raw.name)));
        }
        Ok(super::algs::make_bucket(ids[b], raw.type_id, raw.alg, items, weights))
    }
}

impl<'a> Builder<'a> {
    /// Parses one rule's body against the compiled buckets.
    fn rule(
        &self,
        map: &CrushMap,
        shadows: &HashMap<(i32, u32), i32>,
        start: Token<'a>,
        mut cur: Cursor<'a>,
    ) -> Result<Rule> {
        let mut name = String::new();
        if cur.peek().is_some_and(|t| t.text != "{") {
            name = cur.name("rule name")?.text.to_owned();
        }
        cur.expect("{")?;
        let mut id = None;
        let mut erasure = false;
        let mut steps = Vec::new();
        loop {
            let t = cur.next("`}` closing the rule")?;
            match t.text {
                "}" => break,
                "id" | "ruleset" => {
                    let (v, line) = cur.int("rule id")?;
                    if !(0..=MAX_RULE_ID).contains(&v) {
                        return Err(err(line, format!("rule id {v} is out of range (0 to {MAX_RULE_ID})")));
                    }
                    id = Some(v as u32);
                }
                "type" => {
                    let k = cur.name("rule type")?;
                    erasure = match k.text {
                        "replicated" => false,
                        "erasure" => true,
                        other => {
                            return Err(err(
                                k.line,
                                format!("rule type `{other}` is not supported (replicated or erasure)"),
                            ))
                        }
                    };
                }
                "min_size" | "max_size" => {
                    cur.int(t.text)?;
                }
                "step" => steps.push(self.step(map, shadows, &mut cur)?),
                other => {
                    return Err(err(
                        t.line,
                        format!("unexpected `{other}` in rule (expected id, type, min_size, max_size, step or `}}`)"),
                    ))
                }
            }
        }
        let id = id.ok_or_else(|| err(start.line, "rule without an id"))?;
        if self.rule_names_clash(map, &name) {
            return Err(err(start.line, format!("rule name `{name}` is already defined")));
        }
        Ok(Rule { id, name, erasure, steps })
    }

    fn rule_names_clash(&self, map: &CrushMap, name: &str) -> bool {
        !name.is_empty() && map.rules.iter().flatten().any(|r| r.name == name)
    }

    fn step(&self, map: &CrushMap, shadows: &HashMap<(i32, u32), i32>, cur: &mut Cursor<'a>) -> Result<Step> {
        let op = cur.name("step")?;
        let int_arg = |cur: &mut Cursor<'a>| {
            let (v, line) = cur.int(op.text)?;
            if op.text.ends_with("_tries") && v > MAX_TRIES {
                return Err(err(
                    line,
                    format!("{} {v} exceeds {MAX_TRIES} (hashroute bounds the retries of one mapping)", op.text),
                ));
            }
            Ok(v)
        };
        Ok(match op.text {
            "take" => {
                let item = cur.name("take item")?;
                let mut id = self.item_id(map, item)?;
                if cur.peek().is_some_and(|t| t.text == "class") {
                    cur.next("class")?;
                    let c = cur.name("device class")?;
                    let cid = map
                        .classes
                        .iter()
                        .position(|n| n == c.text)
                        .ok_or_else(|| err(c.line, format!("device class `{}` is not defined", c.text)))?;
                    id = *shadows.get(&(id, cid as u32)).ok_or_else(|| {
                        err(c.line, format!("step take {} has no bucket for class {}", item.text, c.text))
                    })?;
                }
                Step::Take(id)
            }
            "choose" | "chooseleaf" => {
                let mode = cur.name("firstn or indep")?;
                let firstn = match mode.text {
                    "firstn" => true,
                    "indep" => false,
                    other => return Err(err(mode.line, format!("expected firstn or indep, found `{other}`"))),
                };
                let (num, line) = cur.int("replica count")?;
                if !(-MAX_NUMREP..=MAX_NUMREP).contains(&num) {
                    return Err(err(
                        line,
                        format!("replica count {num} is out of range (-{MAX_NUMREP} to {MAX_NUMREP})"),
                    ));
                }
                cur.expect("type")?;
                let ty = cur.name("type name")?;
                let type_id = *self
                    .type_ids
                    .get(ty.text)
                    .ok_or_else(|| err(ty.line, format!("type `{}` is not defined", ty.text)))?;
                Step::Choose { leaf: op.text == "chooseleaf", firstn, num, type_id }
            }
            "emit" => Step::Emit,
            "set_choose_tries" => Step::SetChooseTries(int_arg(cur)?),
            "set_chooseleaf_tries" => Step::SetChooseleafTries(int_arg(cur)?),
            "set_choose_local_tries" => Step::SetChooseLocalTries(int_arg(cur)?),
            "set_choose_local_fallback_tries" => Step::SetChooseLocalFallbackTries(int_arg(cur)?),
            "set_chooseleaf_vary_r" => Step::SetChooseleafVaryR(int_arg(cur)?),
            "set_chooseleaf_stable" => Step::SetChooseleafStable(int_arg(cur)?),
            other => return Err(err(op.line, format!("unknown step `{other}`"))),
        })
    }

    fn item_id(&self, map: &CrushMap, item: Token<'a>) -> Result<i32> {
        if let Some((&id, _)) = map.bucket_names.iter().find(|(_, n)| n.as_str() == item.text) {
            return Ok(id);
        }
        match self.names.get(item.text) {
            Some(&(id, _)) => Ok(id),
            None => Err(err(item.line, format!("item `{}` is not defined", item.text))),
        }
    }
}
