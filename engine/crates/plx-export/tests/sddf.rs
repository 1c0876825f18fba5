//! The `sddf` export read back by a small Pablo SDDF ASCII reader: the syntax (header, stream
//! attributes, record descriptors with attributes, data records with arrays), every record
//! against its descriptor's types, and event counts equal to the `text` export's.

mod fixtures;

use std::collections::BTreeMap;
use std::path::Path;

use plx_export::{export, ExportOptions};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Num(String),
    Word(String),
    Punct(&'static str),
}

fn tokens(s: &str) -> Vec<Tok> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if s[i..].starts_with("/*") {
            out.push(Tok::Punct("/*"));
            i += 2;
        } else if s[i..].starts_with("*/") {
            out.push(Tok::Punct("*/"));
            i += 2;
        } else if s[i..].starts_with("//") {
            out.push(Tok::Punct("//"));
            i += 2;
        } else if s[i..].starts_with(";;") {
            out.push(Tok::Punct(";;"));
            i += 2;
        } else if c == b'"' {
            let end = s[i + 1..].find('"').expect("closed string") + i + 1;
            out.push(Tok::Str(s[i + 1..end].to_string()));
            i = end + 1;
        } else if c.is_ascii_digit() || c == b'-' || c == b'.' {
            let start = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b"+-.".contains(&b[i])) {
                i += 1;
            }
            out.push(Tok::Num(s[start..i].to_string()));
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            out.push(Tok::Word(s[start..i].to_string()));
        } else {
            let p = match c {
                b'#' => "#",
                b':' => ":",
                b'{' => "{",
                b'}' => "}",
                b'[' => "[",
                b']' => "]",
                b',' => ",",
                b';' => ";",
                b'*' => "*",
                _ => panic!("unexpected character {:?} at {i}", c as char),
            };
            out.push(Tok::Punct(p));
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone)]
struct Field {
    ty: String,
    name: String,
    dims: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(i64),
    Double(f64),
    Str(String),
    Ints(Vec<i64>),
}

/// A parsed SDDF ASCII stream: stream attributes, descriptors by name, records in order.
struct Sddf {
    attributes: Vec<(String, String)>,
    descriptors: BTreeMap<String, (u32, Vec<Field>)>,
    records: Vec<(String, Vec<Value>)>,
}

struct Parser {
    t: Vec<Tok>,
    i: usize,
}

impl Parser {
    fn next(&mut self) -> Tok {
        let t = self.t[self.i].clone();
        self.i += 1;
        t
    }
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn expect(&mut self, p: &'static str) {
        let t = self.next();
        assert_eq!(t, Tok::Punct(p), "at token {}", self.i - 1);
    }
    fn string(&mut self) -> String {
        match self.next() {
            Tok::Str(s) => s,
            t => panic!("expected a string, got {t:?} at {}", self.i - 1),
        }
    }
    /// `// "key" "value"` attributes.
    fn attributes(&mut self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        while self.peek() == Some(&Tok::Punct("//")) {
            self.next();
            let k = self.string();
            let val = self.string();
            v.push((k, val));
        }
        v
    }
    fn number(&mut self) -> String {
        match self.next() {
            Tok::Num(n) => n,
            t => panic!("expected a number, got {t:?}"),
        }
    }
}

fn parse(text: &str) -> Sddf {
    let mut p = Parser {
        t: tokens(text),
        i: 0,
    };
    assert_eq!(p.next(), Tok::Word("SDDFA".into()), "the ASCII magic");
    let mut out = Sddf {
        attributes: Vec::new(),
        descriptors: BTreeMap::new(),
        records: Vec::new(),
    };
    // stream attributes: /* "key" "value" ... */ ;;
    if p.peek() == Some(&Tok::Punct("/*")) {
        p.next();
        loop {
            match p.next() {
                Tok::Punct("*/") => break,
                Tok::Punct("*") => {}
                Tok::Str(k) => {
                    let v = p.string();
                    out.attributes.push((k, v));
                }
                t => panic!("in the stream attributes: {t:?}"),
            }
        }
        p.expect(";;");
    }
    while p.peek().is_some() {
        match p.next() {
            Tok::Punct("#") => {
                let tag: u32 = p.number().parse().unwrap();
                p.expect(":");
                let attrs = p.attributes();
                assert!(attrs.iter().any(|(k, _)| k == "description"));
                let name = p.string();
                p.expect("{");
                let mut fields = Vec::new();
                loop {
                    p.attributes();
                    match p.next() {
                        Tok::Punct("}") => break,
                        Tok::Word(ty) => {
                            assert!(["int", "double", "char", "float"].contains(&ty.as_str()));
                            let fname = p.string();
                            let mut dims = 0;
                            while p.peek() == Some(&Tok::Punct("[")) {
                                p.next();
                                p.expect("]");
                                dims += 1;
                            }
                            p.expect(";");
                            fields.push(Field {
                                ty,
                                name: fname,
                                dims,
                            });
                        }
                        t => panic!("in descriptor {name}: {t:?}"),
                    }
                }
                p.expect(";;");
                assert!(
                    out.descriptors.values().all(|(t, _)| *t != tag),
                    "tag {tag} twice"
                );
                out.descriptors.insert(name, (tag, fields));
            }
            Tok::Str(name) => {
                let (_, fields) = out
                    .descriptors
                    .get(&name)
                    .unwrap_or_else(|| panic!("record {name} before its descriptor"))
                    .clone();
                p.expect("{");
                let mut values = Vec::new();
                for (k, f) in fields.iter().enumerate() {
                    if k > 0 {
                        p.expect(",");
                    }
                    values.push(value(&mut p, f));
                }
                p.expect("}");
                p.expect(";;");
                out.records.push((name, values));
            }
            t => panic!("expected a descriptor or a record, got {t:?}"),
        }
    }
    out
}

/// One field's value, checked against its type.
fn value(p: &mut Parser, f: &Field) -> Value {
    if f.dims == 0 {
        let n = p.number();
        return match f.ty.as_str() {
            "int" => Value::Int(n.parse().unwrap_or_else(|_| panic!("{}: int {n}", f.name))),
            _ => Value::Double(
                n.parse()
                    .unwrap_or_else(|_| panic!("{}: double {n}", f.name)),
            ),
        };
    }
    assert_eq!(f.dims, 1);
    p.expect("[");
    let n: usize = p.number().parse().unwrap();
    p.expect("]");
    p.expect("{");
    let v = if f.ty == "char" {
        let s = p.string();
        assert_eq!(n, s.len() + 1, "{}: char array dimension", f.name);
        Value::Str(s)
    } else {
        let mut xs = Vec::new();
        for k in 0..n {
            if k > 0 {
                p.expect(",");
            }
            xs.push(p.number().parse().unwrap());
        }
        Value::Ints(xs)
    };
    p.expect("}");
    v
}

fn export_both(d: &Path) -> (Sddf, String) {
    let s = d.join("out.sddf");
    export("sddf", d, &s, ExportOptions::default()).unwrap();
    let t = d.join("out.txt");
    export("text", d, &t, ExportOptions::default()).unwrap();
    (
        parse(&std::fs::read_to_string(s).unwrap()),
        std::fs::read_to_string(t).unwrap(),
    )
}

/// Records per SDDF event name, and the text export's lines per event kind, under one naming.
fn counts(s: &Sddf, text: &str) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
    let mut a = BTreeMap::new();
    for (name, _) in &s.records {
        let k = match name.as_str() {
            "Enter" => "enter",
            "Exit" => "exit",
            "Send" => "send",
            "Receive" => "recv",
            "Collective" => "collective",
            "User Event" => "user",
            _ => continue,
        };
        *a.entry(k.to_string()).or_default() += 1;
    }
    let mut b = BTreeMap::new();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let kind = l.split_whitespace().nth(2).unwrap();
        *b.entry(kind.to_string()).or_default() += 1;
    }
    (a, b)
}

/// The timestamps of the event records are in order, but the last `trailing` (the Exits of the
/// calls still open at the end, written after the stream, each at its location's end).
fn timestamps_ordered(s: &Sddf, trailing: usize) {
    let timed: Vec<_> = s
        .records
        .iter()
        .filter(|(name, _)| {
            s.descriptors[name]
                .1
                .get(2)
                .is_some_and(|f| f.name == "Timestamp")
        })
        .collect();
    let mut last = f64::MIN;
    for (name, v) in &timed[..timed.len() - trailing] {
        let Value::Double(t) = v[2] else {
            panic!("timestamp")
        };
        assert!(t >= last, "{name} at {t} after {last}");
        last = t;
    }
}

#[test]
fn threads_sddf_parses_and_has_the_text_exports_events() {
    let d = fixtures::tmp("sddf-threads");
    fixtures::threads(&d);
    let (s, text) = export_both(&d);
    let (a, mut b) = counts(&s, &text);
    // the worker's second io and the worker, still open when its trace ends, get their Exits
    // at the worker's last event (the text export says so in a comment); not killed, so not
    // marked Truncated
    assert!(
        text.contains("2 calls still open (io < worker), ended at 1900, its last event"),
        "{text}"
    );
    *b.get_mut("exit").unwrap() += 2;
    assert_eq!(a, b);
    assert_eq!(b["enter"], 10);
    let last = s.records.iter().rfind(|(n, _)| n == "Exit").unwrap();
    assert_eq!(last.1[2], Value::Double(1900e-9));
    assert!(!s.records.iter().any(|(n, _)| n == "Truncated"));
    timestamps_ordered(&s, 2);
    assert!(s.attributes.iter().any(|(k, _)| k == "generator"));
    let names: Vec<&str> = s.descriptors.keys().map(String::as_str).collect();
    for n in [
        "Enter",
        "Exit",
        "Send",
        "Receive",
        "Collective",
        "User Event",
        "Region",
    ] {
        assert!(names.contains(&n), "{n}");
    }
    // every region an event names is defined before, with its name
    let mut regions = BTreeMap::new();
    for (name, v) in &s.records {
        match (name.as_str(), &v[..]) {
            ("Region", [Value::Int(i), Value::Str(_), Value::Str(n)]) => {
                regions.insert(*i, n.clone());
            }
            ("Enter" | "Exit", [_, _, _, Value::Int(r)]) => {
                assert!(regions.contains_key(r), "region {r} used before defined")
            }
            _ => {}
        }
    }
    assert!(regions.values().any(|n| n == "fib"));
    let user: Vec<f64> = s
        .records
        .iter()
        .filter(|(n, _)| n == "User Event")
        .map(|(_, v)| match v[4] {
            Value::Double(x) => x,
            _ => panic!(),
        })
        .collect();
    assert_eq!(user, vec![100.0, 4096.0, 8192.0, 50.0]);
}

#[test]
fn mpi_sddf_links_sends_and_receives_with_threads() {
    let d = fixtures::tmp("sddf-mpi");
    fixtures::mpi(&d);
    let (s, text) = export_both(&d);
    let (a, b) = counts(&s, &text);
    assert_eq!(a, b);
    timestamps_ordered(&s, 0);
    let field = |rec: &str, f: &str| {
        s.descriptors[rec]
            .1
            .iter()
            .position(|x| x.name == f)
            .unwrap()
    };
    let mut sends = BTreeMap::new();
    for (name, v) in s.records.iter().filter(|(n, _)| n == "Send") {
        let Value::Int(m) = v[field(name, "Message")] else {
            panic!()
        };
        sends.insert(m, (v[0].clone(), v[1].clone()));
    }
    let mut linked = 0;
    for (name, v) in s.records.iter().filter(|(n, _)| n == "Receive") {
        let Value::Int(m) = v[field(name, "Message")] else {
            panic!()
        };
        let (node, thread) = sends[&m].clone();
        assert_eq!(v[field(name, "Source Node")], node);
        assert_eq!(v[field(name, "Source Thread")], thread);
        linked += 1;
    }
    assert_eq!(linked, 4);
    // the worker thread of rank 0 sent the 1 KB message
    assert!(s.records.iter().any(|(n, v)| n == "Receive"
        && v[field(n, "Source Thread")] == Value::Int(1)
        && v[field(n, "Bytes")] == Value::Double(1024.0)));
    let (_, cc) = s
        .records
        .iter()
        .find(|(n, _)| n == "Clock Condition")
        .unwrap();
    assert_eq!(cc[0], Value::Int(4));
    assert_eq!(cc[1], Value::Int(1));
    assert_eq!(cc[5], Value::Int(0));
    assert!(s
        .records
        .iter()
        .any(|(n, v)| n == "Communicator" && v[2] == Value::Ints(vec![0, 1, 2])));
}

/// One thread: 3,000 calls of the defined `main`'s callee `f`, then `g` (region 9, without a
/// definition: the merge names it when it meets it), called once.
fn undefined_region(d: &Path) {
    let mut p = plx_format::synth::SynthProcess::new("node1", 300, &["./app"]);
    p.functions(&[(1, "main"), (2, "f")])
        .thread(0, 300, "main", 0);
    let mut e = plx_format::EventEncoder::new(0);
    e.enter(1, 0);
    for i in 0..3000u64 {
        e.enter(2, 10 + 10 * i).exit(2, 15 + 10 * i);
    }
    e.enter(9, 40_000).exit(9, 40_010).exit(1, 40_020);
    p.chunk(0, &e);
    p.end(40_100, 0);
    p.write(d).unwrap();
}

#[test]
fn sddf_names_a_region_met_on_the_way_right_before_its_first_record_at_any_jobs() {
    let d = fixtures::tmp("sddf-undefined");
    undefined_region(&d);
    let mut outs = Vec::new();
    for threads in [1, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let s = d.join(format!("j{threads}.sddf"));
        pool.install(|| export("sddf", &d, &s, ExportOptions::default()).unwrap());
        outs.push(std::fs::read_to_string(s).unwrap());
    }
    assert!(
        outs[0] == outs[1],
        "the sddf export differs between 1 and 4 threads"
    );
    let lines: Vec<&str> = outs[0].lines().collect();
    // plx_flush (the runtime's, always defined), main, f before the first event; region 9 (the
    // global region 3) right before its Enter
    let regions: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("\"Region\" {") && lines[i].ends_with(";;"))
        .collect();
    assert_eq!(regions.len(), 4, "{lines:?}");
    let def = regions[3];
    assert_eq!(
        lines[def],
        "\"Region\" { 3, [9] { \"function\" }, [9] { \"region 9\" } };;"
    );
    assert_eq!(lines[def + 1], "\"Enter\" { 0, 0, 0.000040000, 3 };;");
    assert!(lines[regions[2] + 1].starts_with("\"Enter\""));
    let enters = lines
        .iter()
        .filter(|l| l.starts_with("\"Enter\"") && l.ends_with(";;"))
        .count();
    assert_eq!(enters, 3002);
}
