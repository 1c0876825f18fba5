"""Template of engine/crates/plx-format/src/schema.rs: Rust ids, the record structs, typed decoders and encoders, the extended-event decoder and the dump."""

from .model import ROOT, SIZE, CTYPE, RTYPE, SchemaError, header, snake, camel, item_min, counted  # noqa: F401

OUTPUT = ROOT / 'engine/crates/plx-format/src/schema.rs'
HEADER = header(__file__)


def rs_doc(f):
    """A field's doc comment: its `rust_doc`, else its doc, else its name."""
    return f.get("rust_doc") or f.get("doc") or f["name"]


def rs_get(f):
    t = f["type"]
    g = "r.%s()?" % t
    if "rust" in f:
        conv = "from_u32" if t == "u32" else "from_u8"
        if f.get("rust_checked"):
            return "known(%s, %s::%s)?" % (g, f["rust"], conv)
        return "%s::%s(%s)" % (f["rust"], conv, g)
    return g


def rs_put(f, v):
    t = f["type"]
    if "rust" in f:
        return "out.put_%s(%s.%s())" % (t, v, "to_u32" if t == "u32" else "to_u8")
    if t == "str":
        return "out.put_str(&%s)" % v
    return "out.put_%s(%s)" % (t, v)


def rs_dump(f, v):
    t = f["type"]
    if "rust" in f:
        return "dump_int(out, %s.%s() as i128)" % (v, "to_u32" if t == "u32" else "to_u8")
    if t == "str":
        return "dump_str(out, &%s)" % v
    if t == "f64":
        return "dump_f64(out, %s)" % v
    return "dump_int(out, %s as i128)" % v


def rs_record_enum(w, recs, enum, file):
    """The enum of the records of one file kind: a variant per record, decode, encode_payload, dump."""
    w("/// One decoded record of `%s.plx`.\n#[derive(Debug, Clone, PartialEq)]\npub enum %s {" % (file, enum))
    for r in recs:
        w("    /// Type %d." % r["id"])
        if r.get("rust") == "value":
            w("    %s(%s)," % (r["name"], RTYPE[r["fields"][0]["type"]]))
        else:
            w("    %s(%s)," % (r["name"], r["name"]))
    w("}\n")
    w("impl %s {" % enum)
    w("    /// The record type number.\n    pub fn record_type(&self) -> u16 {\n        match self {")
    for r in recs:
        w("            " + enum + "::%s(_) => types::%s," % (r["name"], snake(r["name"]).upper()))
    w("        }\n    }\n")
    w("    /// Decodes a payload of a known type; `Ok(None)` for a type this reader does not know.")
    w("    pub fn decode(record_type: u16, payload: &[u8]) -> Result<Option<%s>, DecodeProblem> {" % enum)
    w("        let mut r = FieldReader::new(payload);")
    w("        let rec = match record_type {")
    for r in recs:
        sn = snake(r["name"])
        w("            types::%s => {" % sn.upper())
        if r.get("rust") == "value":
            w("                " + enum + "::%s(%s)" % (r["name"], rs_get(r["fields"][0])))
            w("            }")
            continue
        cnt = counted(r)
        names = []
        for f in r["fields"]:
            if f["name"] in cnt:
                w("                let %s = r.u32()?;" % f["name"])
                rep = cnt[f["name"]]
                size = item_min(rep)
                bound = "r.remaining()" if size == 1 else "r.remaining() / %d" % size
                w("                if %s as usize > %s {" % (f["name"], bound))
                w("                    return Err(DecodeProblem::BadCount(%s as u64));\n                }" % f["name"])
                continue
            rn = f.get("rust_name", f["name"])
            names.append(rn)
            if "count" in f:
                if "items" in f:
                    if f["rust_item"] == "tuple":
                        item = "(%s)" % ", ".join(rs_get(i) for i in f["items"])
                    else:
                        item = "%s { %s }" % (f["rust_item"], ", ".join("%s: %s" % (i["name"], rs_get(i)) for i in f["items"]))
                else:
                    item = rs_get(f)
                w("                let mut %s = Vec::with_capacity(%s as usize);" % (rn, f["count"]))
                w("                for _ in 0..%s {\n                    %s.push(%s);\n                }" % (f["count"], rn, item))
            elif r["fields"].index(f) >= r["required"]:
                # appended in a later format version: absent from older files
                w("                let %s = if r.remaining() == 0 { Default::default() } else { %s };" % (rn, rs_get(f)))
            else:
                w("                let %s = %s;" % (rn, rs_get(f)))
        w("                " + enum + "::%s(%s { %s })" % (r["name"], r["name"], ", ".join(names)))
        w("            }")
    w("            _ => return Ok(None),\n        };\n        Ok(Some(rec))\n    }\n")
    w("    /// Appends the payload (without the record header).")
    w("    pub fn encode_payload(&self, out: &mut Vec<u8>) {\n        match self {")
    for r in recs:
        if r.get("rust") == "value":
            f = r["fields"][0]
            w("            " + enum + "::%s(v) => %s," % (r["name"], rs_put(f, "*v" if f["type"] != "str" else "v").replace("&v", "v")))
            continue
        w("            " + enum + "::%s(v) => {" % r["name"])
        cnt = counted(r)
        for f in r["fields"]:
            if f["name"] in cnt:
                rep = cnt[f["name"]]
                w("                out.put_u32(v.%s.len() as u32);" % rep.get("rust_name", rep["name"]))
                continue
            rn = "v.%s" % f.get("rust_name", f["name"])
            if "count" in f:
                if "items" in f:
                    w("                for x in &%s {" % rn)
                    for k, i in enumerate(f["items"]):
                        acc = "x.%d" % k if f["rust_item"] == "tuple" else "x.%s" % i["name"]
                        w("                    %s;" % rs_put(i, acc))
                    w("                }")
                else:
                    w("                for x in &%s {\n                    %s;\n                }" % (rn, rs_put(f, "*x" if f["type"] != "str" else "x").replace("&x", "x")))
            else:
                w("                %s;" % rs_put(f, rn))
        w("            }")
    w("        }\n    }\n")
    w("    /// One line: the record's name and every field as `name=value`, in the schema's order")
    w("    /// (counts included; strings quoted; f64 in shortest round-trip exponent form; repeated")
    w("    /// fields in brackets). runtime/tests/plx_check.c prints the same from the same schema.")
    w("    pub fn dump(&self, out: &mut String) {\n        match self {")
    for r in recs:
        if r.get("rust") == "value":
            f = r["fields"][0]
            w("            " + enum + "::%s(v) => {" % r["name"])
            w("                out.push_str(\"%s %s=\");" % (r["name"], f["name"]))
            w("                %s;" % rs_dump(f, "*v" if f["type"] != "str" else "v").replace("&v", "v"))
            w("            }")
            continue
        w("            " + enum + "::%s(v) => {" % r["name"])
        w("                out.push_str(\"%s\");" % r["name"])
        cnt = counted(r)
        for f in r["fields"]:
            w("                out.push_str(\" %s=\");" % f["name"])
            if f["name"] in cnt:
                rep = cnt[f["name"]]
                w("                dump_int(out, v.%s.len() as i128);" % rep.get("rust_name", rep["name"]))
                continue
            rn = "v.%s" % f.get("rust_name", f["name"])
            if "count" in f:
                w("                out.push('[');")
                w("                for (k, x) in %s.iter().enumerate() {" % rn)
                w("                    if k > 0 {\n                        out.push_str(\", \");\n                    }")
                if "items" in f:
                    w("                    out.push('{');")
                    for k, i in enumerate(f["items"]):
                        acc = "x.%d" % k if f["rust_item"] == "tuple" else "x.%s" % i["name"]
                        w("                    out.push_str(\"%s%s=\");" % (" " if k else "", i["name"]))
                        w("                    %s;" % rs_dump(i, acc))
                    w("                    out.push('}');")
                else:
                    w("                    %s;" % rs_dump(f, "*x" if f["type"] != "str" else "x").replace("&x", "x"))
                w("                }\n                out.push(']');")
            else:
                w("                %s;" % rs_dump(f, rn))
        w("            }")
    w("        }\n    }\n}\n")


def render(s):
    o = []
    w = o.append
    w("//! %s" % HEADER)
    w("//!\n//! Record and subtype ids, the typed decoders and encoders of every `process.plx` and")
    w("//! metric file record, the extended-event decoder, and the language-neutral dump the golden")
    w("//! tests compare.\n")
    w("use crate::bytes::{FieldReader, Put};")
    w("use crate::metrics::{MetricMode, TimeBase};")
    w("use crate::mpi::{Direction, OffsetWhen, ThreadLevel};")
    w("use crate::records::{ClockKind, DecodeProblem, EndReason, RegionKind};")
    w("use crate::sync::{NamedBy, SyncKind};\n")
    w("/// Format version written in every file header.")
    w("pub const FORMAT_VERSION: u16 = %d;\n" % s["format_version"])
    w("/// Record type numbers.\npub mod types {")
    for r in s["record"]:
        w("    /// %s (%s.plx)." % (r["name"], r["file"]))
        w("    pub const %s: u16 = %d;" % (snake(r["name"]).upper(), r["id"]))
    w("}\n")
    w("/// Extended event subtypes and their payload words.\npub mod subtypes {")
    for st in s["subtype"]:
        w("    /// %s: %s." % (st["name"], st["doc"]))
        w("    pub const SUBTYPE_%s: u8 = %d;" % (st["name"].upper(), st["id"]))
        w("    /// Payload words of [`SUBTYPE_%s`]." % st["name"].upper())
        w("    pub const SUBTYPE_%s_WORDS: u8 = %d;" % (st["name"].upper(), st["words"]))
    w("}\n")
    ev = s["event"]
    w("/// Every record type: (id, name).")
    w("pub const RECORD_NAMES: &[(u16, &str)] = &[")
    for r in s["record"]:
        w("    (%d, \"%s\")," % (r["id"], r["name"]))
    w("];\n")
    w("/// Every extended subtype: (id, name as in the dump).")
    w("pub const SUBTYPE_NAMES: &[(u8, &str)] = &[")
    for st in s["subtype"]:
        w("    (%d, \"%s\")," % (st["id"], st["name"]))
    w("];\n")
    w("/// Bits of the delta (ticks since the previous event) in an event word.")
    w("pub const DELTA_BITS: u32 = %d;" % (ev["delta"]["hi"] - ev["delta"]["lo"] + 1))
    w("/// Bits of the region id in an enter/exit word.")
    w("pub const REGION_BITS: u32 = %d;" % (ev["region"]["hi"] - ev["region"]["lo"] + 1))
    w("/// Shift of the region id in an enter/exit word.")
    w("pub const REGION_SHIFT: u32 = %d;" % ev["region"]["lo"])
    w("/// Shift of the subtype in an extended word.")
    w("pub const SUBTYPE_SHIFT: u32 = %d;" % ev["subtype"]["lo"])
    w("/// Shift of the payload word count in an extended word.")
    w("pub const WORDS_SHIFT: u32 = %d;" % ev["words"]["lo"])
    w("/// Shift of the kind in an event word.")
    w("pub const KIND_SHIFT: u32 = %d;\n" % ev["kind"]["lo"])
    w("/// Bytes of each record's payload before its first string or repeated field.")
    w("pub mod fixed_size {")
    for r in s["record"]:
        off = r["fixed_size"]
        w("    /// %s." % r["name"])
        w("    pub const %s: usize = %d;" % (snake(r["name"]).upper(), off))
    w("}\n")
    w("/// Size of a live file's header.")
    w("pub const LIVE_HEADER_SIZE: usize = %d;" % s["live_header"]["size"])
    w("/// Field offsets of a live file's header.")
    w("pub mod live_header {")
    for f in s["live_header"]["fields"]:
        w("    /// `%s` (%s)." % (f["name"], f["type"] if "size" not in f else "%d bytes" % f["size"]))
        w("    pub const %s: usize = %d;" % (f["name"].upper(), f["offset"]))
    w("}")
    for lv in s["live"]:
        w("/// Size of a `%s` live item." % lv["kind"])
        w("pub const LIVE_%s_ITEM_SIZE: usize = %d;" % (lv["kind"].upper(), lv["item_size"]))
        w("/// Field offsets of a `%s` live item." % lv["kind"])
        w("pub mod live_%s {" % lv["kind"])
        for f in lv["fields"]:
            w("    /// `%s` (%s)." % (f["name"], f["type"]))
            w("    pub const %s: usize = %d;" % (f["name"].upper(), f["offset"]))
        w("}")
    w("")
    recs = [r for r in s["record"] if r.get("rust") != "none"]
    w("/// The struct of every record (a repeated group's items as the record's `rust_item`, or")
    w("/// `<Record><Field>Item`), re-exported by [`crate::records`] and the module of its kind;")
    w("/// their behaviour is in `impl` blocks there.")
    w("pub mod structs {")
    w("    #[allow(unused_imports)]\n    use super::*;\n")
    for r in recs:
        if not r["rust_struct"]:
            continue
        cnt = counted(r)
        for f in r["fields"]:
            if "rust_item_derive" in f:
                w("    /// One of [`%s`]'s `%s`." % (r["name"], f["name"]))
                w("    #[derive(%s)]\n    pub struct %s {" % (", ".join(f["rust_item_derive"]), f["rust_item"]))
                for i in f["items"]:
                    w("        /// %s" % rs_doc(i))
                    w("        pub %s: %s," % (i["name"], i.get("rust", RTYPE[i["type"]])))
                w("    }\n")
        w("    /// Record %d: %s" % (r["id"], r.get("doc") or r["name"]))
        w("    #[derive(%s)]\n    pub struct %s {" % (", ".join(r["rust_derive"]), r["name"]))
        for f in r["fields"]:
            if f["name"] in cnt:
                continue
            if "count" in f:
                if f.get("rust_item") == "tuple":
                    item = "(%s)" % ", ".join(i.get("rust", RTYPE[i["type"]]) for i in f["items"])
                else:
                    item = f["rust_item"] if "items" in f else f.get("rust", RTYPE[f["type"]])
                t = "Vec<%s>" % item
            else:
                t = f.get("rust", RTYPE[f["type"]])
            w("        /// %s" % rs_doc(f))
            w("        pub %s: %s," % (f.get("rust_name", f["name"]), t))
        w("    }\n")
    w("}\n#[allow(unused_imports)]\npub use structs::*;\n")
    rs_record_enum(w, [r for r in recs if r["file"] == "process"], "Record", "process")
    rs_record_enum(w, [r for r in recs if r["file"] == "metrics"], "MetricRecord", "metrics")

    # fixed fields of records read apart (trace chunk headers)
    for r in s["record"]:
        if "rust_header" not in r:
            continue
        fixed = [f for f in r["fields"] if "count" not in f]
        size = sum(SIZE[f["type"]] for f in fixed)
        ty = "crate::trace::%s" % r["rust_header"]
        w("impl %s {" % ty)
        w("    /// Decodes the %d bytes of a %s's fixed fields." % (size, r["name"]))
        w("    pub fn decode(b: &[u8; %d]) -> Self {" % size)
        w("        let at = |o: usize, n: usize| {\n            let mut a = [0u8; 8];\n"
          "            a[..n].copy_from_slice(&b[o..o + n]);\n            u64::from_le_bytes(a)\n        };")
        flat, nested, off = [], {}, 0
        for f in fixed:
            v = "at(%d, %d)" % (off, SIZE[f["type"]]) + ("" if f["type"] == "u64" else " as %s" % f["type"])
            rn = f.get("rust_name", f["name"])
            if "." in rn:
                outer, inner = rn.split(".", 1)
                if outer not in nested:
                    nested[outer] = []
                    flat.append((outer, None))
                nested[outer].append((inner, v))
            else:
                flat.append((rn, v))
            f["_off"] = off
            off += SIZE[f["type"]]
        w("        %s {" % ty)
        for name, v in flat:
            if v is None:
                w("            %s: %s {" % (name, r["rust_nested"][name]))
                for inner, iv in nested[name]:
                    w("                %s: %s," % (inner, iv))
                w("            },")
            else:
                w("            %s: %s," % (name, v))
        w("        }\n    }\n")
        w("    /// Encodes the %d bytes of a %s's fixed fields." % (size, r["name"]))
        w("    pub fn encode(&self) -> [u8; %d] {" % size)
        w("        let mut b = [0u8; %d];" % size)
        for f in fixed:
            w("        b[%d..%d].copy_from_slice(&self.%s.to_le_bytes());"
              % (f["_off"], f["_off"] + SIZE[f["type"]], f.get("rust_name", f["name"])))
        w("        b\n    }\n}\n")

    # live-file items
    for lv in s["live"]:
        w("impl crate::live::%s {" % lv["rust"])
        w("    /// Decodes one `%s` item (at least %d bytes)." % (lv["kind"], lv["item_size"]))
        w("    pub fn decode(b: &[u8]) -> Self {")
        w("        let at = |o: usize, n: usize| {\n            let mut a = [0u8; 8];\n"
          "            a[..n].copy_from_slice(&b[o..o + n]);\n            u64::from_le_bytes(a)\n        };")
        w("        crate::live::%s {" % lv["rust"])
        for f in lv["fields"]:
            if f["type"] == "pad":
                continue
            v = "at(%d, %d) as %s" % (f["offset"], SIZE[f["type"]], f["type"])
            if f["type"] == "u64":
                v = "at(%d, 8)" % f["offset"]
            if "rust" in f:
                v = "%s::from_u8(%s)" % (f["rust"], v)
            w("            %s: %s," % (f["name"], v))
        w("        }\n    }\n")
        w("    /// Encodes one `%s` item (padding zero)." % lv["kind"])
        w("    pub fn encode(&self) -> [u8; %d] {" % lv["item_size"])
        w("        let mut b = [0u8; %d];" % lv["item_size"])
        for f in lv["fields"]:
            if f["type"] == "pad":
                continue
            v = "self.%s" % f["name"]
            if "rust" in f:
                v += ".to_u8()"
            w("        b[%d..%d].copy_from_slice(&%s.to_le_bytes());" % (f["offset"], f["offset"] + SIZE[f["type"]], v))
        w("        b\n    }\n}\n")

    # extended events
    w("/// One decoded event, with its absolute time in ticks.")
    w("#[derive(Debug, Clone, Copy, PartialEq)]\npub enum Event {")
    for kind in ("Enter", "Exit"):
        w("    /// A region was %s." % ("entered" if kind == "Enter" else "left"))
        w("    %s {\n        /// Region id.\n        region: u32,\n        /// Absolute ticks.\n        ticks: u64,\n    }," % kind)
    for st in s["subtype"]:
        w("    /// Subtype %d (%s): %s." % (st["id"], st["name"], st["doc"]))
        w("    %s {" % camel(st["name"]))
        for f in st["fields"]:
            if f["name"] == "ticks":
                continue
            w("        /// %s" % (f.get("doc") or f["name"]).replace("`0xFFFFFFFF`", "[`crate::NONE_U32`]"))
            w("        %s: %s," % (f["name"], f["type"]))
        w("        /// Absolute ticks%s." % (" (later deltas count from them)" if any(f["name"] == "ticks" for f in st["fields"]) else ""))
        w("        ticks: u64,\n    },")
    w("    /// An extended event this reader does not know (skipped by its payload count).")
    w("    Unknown {\n        /// Extended subtype, or 0xFF for word kind 3.\n        subtype: u8,\n        /// Absolute ticks.\n        ticks: u64,\n    },")
    w("}\n")
    w("/// Decodes an extended event of `subtype` whose payload is `n` words (`word(i)`); `None`")
    w("/// for a subtype this reader does not know or a payload shorter than the subtype's.")
    w("#[inline(always)]")
    w("pub(crate) fn decode_extended(\n    subtype: u8,\n    n: usize,\n    word: impl Fn(usize) -> u64,\n    ticks: u64,\n) -> Option<Event> {")
    w("    use subtypes::*;\n    match subtype {")
    for st in s["subtype"]:
        w("        SUBTYPE_%s if n >= SUBTYPE_%s_WORDS as usize => {" % (st["name"].upper(), st["name"].upper()))
        for word in range(st["words"]):
            if any(f["word"] == word for f in st["fields"]):
                w("            let w%d = word(%d);" % (word, word))
        fields = []
        for f in st["fields"]:
            x = "w%d" % f["word"]
            if f["lo"]:
                x = "(%s >> %d)" % (x, f["lo"])
            t = f["type"]
            bits = f["bits"]
            if t == "f64":
                x = "f64::from_bits(%s)" % x
            elif t == "i32":
                x = "%s as u32 as i32" % x
            elif t == "u64":
                if bits < 64:
                    x = "(%s & 0x%X)" % (x, (1 << bits) - 1)
            else:
                if bits < SIZE[t] * 8:
                    x = "(%s & 0x%X)" % (x, (1 << bits) - 1)
                x = "%s as %s" % (x, t)
            fields.append("%s: %s" % (f["name"], x))
        tick = [] if any(f["name"] == "ticks" for f in st["fields"]) else ["ticks"]
        w("            Some(Event::%s { %s })" % (camel(st["name"]), ", ".join(fields + tick)))
        w("        }")
    w("        _ => None,\n    }\n}\n")
    for st in s["subtype"]:
        args = ", ".join("%s: %s" % (f["name"], f["type"]) for f in st["fields"])
        w("/// The payload words of a `%s` event (subtype %d)." % (st["name"], st["id"]))
        w("pub fn pack_%s(%s) -> [u64; %d] {" % (st["name"], args, st["words"]))
        words = []
        for fields in st["word_fields"]:
            parts = []
            for f in fields:
                bits = f["bits"]
                t = f["type"]
                v = {"f64": "%s.to_bits()", "i32": "(%s as u32 as u64)"}.get(t, "(%s as u64)" if t != "u64" else "%s") % f["name"]
                if bits < SIZE.get(t, 8) * 8:
                    v = "(%s & 0x%X)" % (v, (1 << bits) - 1)
                parts.append("(%s << %d)" % (v, f["lo"]) if f["lo"] else v)
            words.append(" | ".join(parts) if parts else "0")
        w("    [%s]" % ", ".join(words))
        w("}\n")
    w("impl Event {")
    w("    /// The event's absolute time in ticks.\n    #[inline]\n    pub fn ticks(&self) -> u64 {\n        match *self {")
    names = ["Enter", "Exit"] + [camel(st["name"]) for st in s["subtype"]] + ["Unknown"]
    w("            %s => ticks," % "\n            | ".join("Event::%s { ticks, .. }" % n for n in names))
    w("        }\n    }\n")
    w("    /// One line as in the golden dumps: the event's name, its fields as `name=value`, then")
    w("    /// `ticks`.")
    w("    pub fn dump(&self, out: &mut String) {\n        match *self {")
    w("            Event::Enter { region, ticks } | Event::Exit { region, ticks } => {")
    w("                out.push_str(if matches!(self, Event::Enter { .. }) { \"enter\" } else { \"exit\" });")
    w("                out.push_str(\" region=\");\n                dump_int(out, region as i128);")
    w("                out.push_str(\" ticks=\");\n                dump_int(out, ticks as i128);\n            }")
    for st in s["subtype"]:
        names = [f["name"] for f in st["fields"] if f["name"] != "ticks"]
        w("            Event::%s { %sticks } => {" % (camel(st["name"]), "".join(n + ", " for n in names)))
        w("                out.push_str(\"%s\");" % st["name"])
        for f in st["fields"]:
            if f["name"] == "ticks":
                continue
            w("                out.push_str(\" %s=\");" % f["name"])
            w("                %s;" % (("dump_f64(out, %s)" if f["type"] == "f64" else "dump_int(out, %s as i128)") % f["name"]))
        w("                out.push_str(\" ticks=\");\n                dump_int(out, ticks as i128);\n            }")
    w("            Event::Unknown { subtype, ticks } => {")
    w("                out.push_str(\"unknown subtype=\");\n                dump_int(out, subtype as i128);")
    w("                out.push_str(\" ticks=\");\n                dump_int(out, ticks as i128);\n            }")
    w("        }\n    }\n}\n")
    w("""/// A field's value through its enum's checked conversion (`rust_checked`): a value this reader
/// does not know makes the record bad.
#[allow(dead_code)]
fn known<V: Into<u64> + Copy, T>(v: V, from: fn(V) -> Option<T>) -> Result<T, DecodeProblem> {
    from(v).ok_or(DecodeProblem::BadValue(v.into()))
}

fn dump_int(out: &mut String, v: i128) {
    use std::fmt::Write as _;
    let _ = write!(out, "{v}");
}

fn dump_f64(out: &mut String, v: f64) {
    use std::fmt::Write as _;
    if v.is_nan() {
        out.push_str("nan");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "inf" } else { "-inf" });
    } else {
        let _ = write!(out, "{v:e}");
    }
}

/// Printable ASCII as is, `"` and `\\\\` escaped, every other byte as `\\xNN` (UTF-8 bytes too).
fn dump_str(out: &mut String, s: &str) {
    use std::fmt::Write as _;
    out.push('"');
    for &b in s.as_bytes() {
        match b {
            b'"' | b'\\\\' => {
                out.push('\\\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\\\x{b:02x}");
            }
        }
    }
    out.push('"');
}""")
    return "\n".join(o) + "\n"
