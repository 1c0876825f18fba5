"""Reads and writes experiment files by the schema's table (plx_schema.py, generated from
spec/records.toml): framed records, payload fields, trace event words."""

import struct

from plx_schema import EVENT, EVENT_KINDS, FORMAT_VERSION, RECORD_IDS, RECORDS, REQUIRED, SUBTYPE_IDS, SUBTYPES

FMT = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i32": "i", "i64": "q", "f64": "d"}
FILE_KINDS = {"process": 1, "trace": 2}


class Malformed(Exception):
    pass


def file_header(kind):
    return b"PLX1" + struct.pack("<HH8x", FORMAT_VERSION, FILE_KINDS[kind])


def read_file(path):
    """(file kind, [(record type, payload)]); a truncated or foreign file raises Malformed."""
    data = path.read_bytes()
    if data[:4] != b"PLX1" or len(data) < 16:
        raise Malformed("%s: not an experiment file" % path)
    version, kind = struct.unpack_from("<HH", data, 4)
    if not 1 <= version <= FORMAT_VERSION:
        raise Malformed("%s: format version %d" % (path, version))
    off, out = 16, []
    while off + 8 <= len(data):
        rtype, _flags, length = struct.unpack_from("<HHI", data, off)
        if off + 8 + length > len(data):
            raise Malformed("%s: record %d at %d runs %d bytes past the end"
                            % (path, rtype, off, off + 8 + length - len(data)))
        out.append((rtype, data[off + 8: off + 8 + length]))
        off += 8 + length
    if off != len(data):
        raise Malformed("%s: %d trailing bytes" % (path, len(data) - off))
    return kind, out


def _take(ftype, p, off):
    if ftype == "str":
        (n,) = struct.unpack_from("<I", p, off)
        if off + 4 + n > len(p):
            raise Malformed("string past the payload")
        return p[off + 4: off + 4 + n].decode("utf-8", "replace"), off + 4 + n
    return struct.unpack_from("<" + FMT[ftype], p, off)[0], off + struct.calcsize(FMT[ftype])


def decode(rtype, payload):
    """{field: value} of a known record (repeated fields as lists, groups as lists of dicts; a
    bulk field as the offset of its first byte), None for an unknown type."""
    if rtype not in RECORDS:
        return None
    _name, fields = RECORDS[rtype]
    out, off = {}, 0
    try:
        required = REQUIRED.get(rtype, len(fields))
        for k, (name, ftype, count, items, bulk) in enumerate(fields):
            if k >= required and off == len(payload):  # appended later; absent from older files
                out[name] = "" if ftype == "str" else 0
            elif count is None:
                out[name], off = _take(ftype, payload, off)
            elif bulk:  # the caller reads it (trace events)
                out[name] = off
            else:
                vals = []
                for _ in range(out[count]):
                    if items:
                        item = {}
                        for iname, itype in items:
                            item[iname], off = _take(itype, payload, off)
                        vals.append(item)
                    else:
                        v, off = _take(ftype, payload, off)
                        vals.append(v)
                out[name] = vals
    except struct.error as e:
        raise Malformed("record %d: %s" % (rtype, e)) from e
    return out


def encode(record, **values):
    """A framed record; count fields come from the length of the list they count."""
    rtype = RECORD_IDS[record]
    _name, fields = RECORDS[rtype]
    counts = {count: name for name, _t, count, _i, _b in fields if count}
    p = b""

    def put(ftype, v):
        if ftype == "str":
            b = v.encode()
            return struct.pack("<I", len(b)) + b
        return struct.pack("<" + FMT[ftype], v)

    for fname, ftype, count, items, bulk in fields:
        if fname in counts:
            p += put(ftype, len(values[counts[fname]]))
        elif count is None:
            p += put(ftype, values[fname])
        else:
            for v in values[fname]:
                if items:
                    for iname, itype in items:
                        p += put(itype, v[iname])
                else:
                    p += put(ftype, v)
    return struct.pack("<HHI", rtype, 0, len(p)) + p


def raw_record(rtype, payload):
    return struct.pack("<HHI", rtype, 0, len(payload)) + payload


def _bits(word, lo, hi):
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def event_word(kind, delta, region=0, subtype=0, words=0):
    w = EVENT_KINDS[kind] << EVENT["kind"][0] | delta
    if kind == "extended":
        return w | subtype << EVENT["subtype"][0] | words << EVENT["words"][0]
    return w | region << EVENT["region"][0]


def pack(subtype, **values):
    """The payload words of an extended subtype (by name)."""
    sid = SUBTYPE_IDS[subtype]
    _name, nwords, fields = SUBTYPES[sid]
    words = [0] * nwords
    for fname, ftype, word, lo, hi in fields:
        v = values[fname]
        if ftype == "f64":
            v = struct.unpack("<Q", struct.pack("<d", v))[0]
        words[word] |= (v & ((1 << (hi - lo + 1)) - 1)) << lo
    return words


def events(words, base):
    """Decoded events of one chunk: (name, ticks, {field: value}); name is enter, exit, a subtype's
    name, or "unknown" (skipped by its payload count)."""
    out, t, i = [], base, 0
    while i < len(words):
        w = words[i]
        t += _bits(w, *EVENT["delta"])
        kind = _bits(w, *EVENT["kind"])
        if kind in (EVENT_KINDS["enter"], EVENT_KINDS["exit"]):
            out.append(("enter" if kind == EVENT_KINDS["enter"] else "exit", t,
                        {"region": _bits(w, *EVENT["region"])}))
            i += 1
            continue
        if kind != EVENT_KINDS["extended"]:
            out.append(("unknown", t, {}))
            i += 1
            continue
        sub, n = _bits(w, *EVENT["subtype"]), _bits(w, *EVENT["words"])
        payload = words[i + 1: i + 1 + n]
        if len(payload) < n:
            raise Malformed("payload of an extended event past the chunk")
        i += 1 + n
        if sub not in SUBTYPES or n < SUBTYPES[sub][1]:
            out.append(("unknown", t, {"subtype": sub}))
            continue
        name, _nwords, fields = SUBTYPES[sub]
        vals = {}
        for fname, ftype, word, lo, hi in fields:
            v = _bits(payload[word], lo, hi)
            if ftype == "i32" and v >= 1 << 31:
                v -= 1 << 32
            elif ftype == "f64":
                v = struct.unpack("<d", struct.pack("<Q", v))[0]
            vals[fname] = v
        if "ticks" in vals:
            t = vals["ticks"]
        out.append((name, t, vals))
    return out


# ---- the golden dump (the text of spec/golden/*.expected) -----------------------------------

def _f64(v):
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    for prec in range(18):
        s = "%.*e" % (prec, v)
        if float(s) == v:
            break
    mant, exp = s.split("e")
    return "%se%d" % (mant, int(exp))


def _str(b):
    out = []
    for c in b:
        if c in (0x22, 0x5C):
            out.append("\\" + chr(c))
        elif 0x20 <= c <= 0x7E:
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return '"%s"' % "".join(out)


def _dump_value(ftype, p, off):
    if ftype == "str":
        (n,) = struct.unpack_from("<I", p, off)
        if off + 4 + n > len(p):
            raise Malformed("string past the payload")
        return _str(p[off + 4: off + 4 + n]), off + 4 + n
    v, off = _take(ftype, p, off)
    return (_f64(v) if ftype == "f64" else str(v)), off


def dump_record(rtype, p):
    if rtype not in RECORDS:
        return "unknown record %d (%d bytes)" % (rtype, len(p))
    name, fields = RECORDS[rtype]
    parts, vals, off = [name if name != "TraceChunk" else "chunk"], {}, 0
    required = REQUIRED.get(rtype, len(fields))
    try:
        for k, (fname, ftype, count, items, bulk) in enumerate(fields):
            if k >= required and off == len(p):  # appended later; absent from older files
                parts.append("%s=%s" % (fname, '""' if ftype == "str" else "0"))
            elif count is None:
                text, off2 = _dump_value(ftype, p, off)
                vals[fname] = _take(ftype, p, off)[0] if ftype != "str" else None
                off = off2
                parts.append("%s=%s" % (fname, text))
            elif bulk:
                continue
            else:
                elems = []
                for _ in range(vals[count]):
                    if items:
                        sub = []
                        for iname, itype in items:
                            text, off = _dump_value(itype, p, off)
                            sub.append("%s=%s" % (iname, text))
                        elems.append("{%s}" % " ".join(sub))
                    else:
                        text, off = _dump_value(ftype, p, off)
                        elems.append(text)
                parts.append("%s=[%s]" % (fname, ", ".join(elems)))
    except (struct.error, Malformed):
        return "bad record %d" % rtype
    return " ".join(parts)


def dump(experiment):
    """The dump both other readers print for an experiment directory."""
    lines = []
    for d in sorted(p for p in experiment.iterdir() if not p.name.startswith(".")):
        if d.name.startswith("metrics.") and d.name.endswith(".plx") and len(d.name) >= 12:
            lines.append("metrics %s" % d.name)
            lines.extend(dump_record(rtype, p) for rtype, p in read_file(d)[1])
            continue
        lines.append("process %s" % d.name)
        _kind, records = read_file(d / "process.plx")
        for rtype, p in records:
            lines.append(dump_record(rtype, p) if rtype != RECORD_IDS["TraceChunk"]
                         else "unknown record %d (%d bytes)" % (rtype, len(p)))
        if not (d / "trace.plx").exists():
            continue
        for rtype, p in read_file(d / "trace.plx")[1]:
            if rtype != RECORD_IDS["TraceChunk"]:
                lines.append("unknown record %d (%d bytes)" % (rtype, len(p)))
                continue
            lines.append(dump_record(rtype, p))
            h = decode(rtype, p)
            n = min(h["event_count"], (len(p) - h["events"]) // 8)
            words = struct.unpack_from("<%dQ" % n, p, h["events"])
            for name, ticks, vals in events(words, h["base_ticks"]):
                if name == "unknown":
                    lines.append("  unknown subtype=%d ticks=%d" % (vals.get("subtype", 255), ticks))
                    continue
                fields = "".join(" %s=%s" % (k, _f64(v) if isinstance(v, float) else v)
                                 for k, v in vals.items() if k != "ticks")
                lines.append("  %s%s ticks=%d" % (name, fields, ticks))
    return "\n".join(lines) + "\n"
