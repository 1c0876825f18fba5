"""Template of tests/support/plx_schema.py: the record layouts, event word and subtypes as Python data for the e2e tests' decoder."""

from .model import ROOT, SIZE, CTYPE, RTYPE, SchemaError, header, snake, camel, item_min, counted  # noqa: F401

OUTPUT = ROOT / 'tests/support/plx_schema.py'
HEADER = header(__file__)


def render(s):
    o = ['"""%s\n\nRecord layouts, trace event word and subtypes as data, for the e2e tests\' decoder."""' % HEADER, ""]
    o.append("FORMAT_VERSION = %d" % s["format_version"])
    o.append("")
    o.append("# id -> (name, [(field, type, count field or None, items or None, bulk)])")
    o.append("RECORDS = {")
    for r in s["record"]:
        fs = []
        for f in r["fields"]:
            items = [(i["name"], i["type"]) for i in f["items"]] if "items" in f else None
            fs.append((f["name"], f.get("type", "group"), f.get("count"), items, bool(f.get("bulk"))))
        o.append("    %d: (%r, %r)," % (r["id"], r["name"], fs))
    o.append("}")
    o.append("RECORD_IDS = {name: rid for rid, (name, _) in RECORDS.items()}")
    o.append("# id -> fields every version writes (later ones were appended: absent in older files)")
    o.append("REQUIRED = {%s}" % ", ".join("%d: %d" % (r["id"], r["required"]) for r in s["record"] if r["required"] < len(r["fields"])))
    o.append("")
    ev = s["event"]
    o.append("EVENT = %r" % {k: (ev[k]["lo"], ev[k]["hi"]) for k in ("kind", "region", "delta", "subtype", "words")})
    o.append("EVENT_KINDS = %r" % {k["name"]: k["value"] for k in ev["kinds"]})
    o.append("")
    o.append("# id -> (name, payload words, [(field, type, word, lo, hi)])")
    o.append("SUBTYPES = {")
    for st in s["subtype"]:
        o.append("    %d: (%r, %d, %r)," % (st["id"], st["name"], st["words"],
                                            [(f["name"], f["type"], f["word"], f["lo"], f["hi"]) for f in st["fields"]]))
    o.append("}")
    o.append("SUBTYPE_IDS = {name: sid for sid, (name, _, _) in SUBTYPES.items()}")
    return "\n".join(o) + "\n"
