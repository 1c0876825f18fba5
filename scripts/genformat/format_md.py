"""Template of spec/format.md: the generated sections of the format's spec (between <!-- gen:NAME --> and <!-- /gen:NAME --> markers)."""

import re

from .model import ROOT, SIZE, CTYPE, RTYPE, SchemaError, header, snake, camel, item_min, counted  # noqa: F401

OUTPUT = ROOT / 'spec/format.md'
HEADER = header(__file__)


def md_type(f):
    if "count" in f:
        if "items" in f:
            inner = "item"
        else:
            inner = f["type"]
        return "%s × %s" % (inner, f["count"])
    return f["type"]


def md_row(*cells):
    return "| " + " | ".join(cells).rstrip() + " |" if cells[-1] else "| %s | %s | |" % cells[:2]


def md_sections(s):
    out = {}
    for r in s["record"]:
        head = "### %d %s" % (r["id"], r["name"]) + (" — " + r["when"] if r.get("when") else "")
        lines = [head, "| field | type | meaning |", "|---|---|---|"]
        for f in r["fields"]:
            doc = f.get("doc", "")
            if f.get("since", r["since"]) > r["since"]:
                doc += " (appended in format version %d: absent from older files, read as empty/zero)" % f["since"]
            lines.append(md_row(f["name"], md_type(f), doc.strip()))
        for f in r["fields"]:
            if "items" in f:
                size = sum(SIZE[i["type"]] for i in f["items"])
                lines.append("")
                if any(i["type"] == "str" for i in f["items"]):
                    lines.append("Each of `%s` (%d bytes plus the bytes of its strings):" % (f["name"], size))
                else:
                    lines.append("Each of `%s` (%d bytes):" % (f["name"], size))
                lines.append("")
                lines.append("| field | type | meaning |")
                lines.append("|---|---|---|")
                for i in f["items"]:
                    lines.append(md_row(i["name"], i["type"], i.get("doc", "")))
        out["record-%d" % r["id"]] = "\n".join(lines)
    groups = {}
    for st in s["subtype"]:
        groups.setdefault(st["group"], []).append(st)
    for g, sts in groups.items():
        lines = ["| subtype | name | payload words |", "|---|---|---|"]
        for st in sts:
            words = []
            for word in range(st["words"]):
                fs = [f for f in st["fields"] if f["word"] == word]
                words.append("word %d: " % word + ", ".join(
                    "`%s` (%s%s%s)" % (f["name"], f["type"],
                                       "" if (f["lo"], f["hi"]) == (0, 63) else ", bits %d–%d" % (f["lo"], f["hi"]),
                                       ": " + f["doc"] if f.get("doc") else "") for f in fs))
            lines.append("| %d | *%s*: %s | %s |" % (st["id"], st["name"].replace("_", " "), st["doc"], "; ".join(words)))
        out["subtypes-%s" % g] = "\n".join(lines)
    ev = s["event"]
    rng = lambda b: "%d–%d" % (b["hi"], b["lo"])
    out["event-word"] = "\n".join([
        "| bits | enter (kind %d) / exit (kind %d) | extended (kind %d) |" % tuple(k["value"] for k in ev["kinds"]),
        "|---|---|---|",
        "| %s | kind | kind |" % rng(ev["kind"]),
        "| %s | region id (%d bits) | %s subtype, %s number of payload words that follow |"
        % (rng(ev["region"]), ev["region"]["hi"] - ev["region"]["lo"] + 1, rng(ev["subtype"]), rng(ev["words"])),
        "| %s | %s | same |" % (rng(ev["delta"]), ev["delta"]["doc"]),
    ])
    for lv in s["live"]:
        parts = []
        for f in lv["fields"]:
            parts.append("%s %s" % (f["name"], f["type"] if f["type"] != "pad" else "%d bytes padding" % f["size"]))
        out["live-%s" % lv["kind"]] = "`%s` items (%d bytes): `%s`." % (lv["kind"], lv["item_size"], ", ".join(parts))
    lh = s["live_header"]
    lines = ["| offset | size | field |", "|---|---|---|"]
    for f in lh["fields"]:
        size = f.get("size", SIZE.get(f["type"], 0))
        lines.append("| %d | %d | %s%s |" % (f["offset"], size, f["name"], (" " + f["doc"]) if f.get("doc") else ""))
    out["live-header"] = "\n".join(lines)
    return out


def render(s):
    text = OUTPUT.read_text()
    sections = md_sections(s)
    found = set()

    def repl(m):
        name = m.group(1)
        if name not in sections:
            raise SchemaError("spec/format.md: unknown generated section %s" % name)
        found.add(name)
        return "<!-- gen:%s -->\n%s\n<!-- /gen:%s -->" % (name, sections[name], name)

    text = re.sub(r"<!-- gen:([\w-]+) -->\n.*?<!-- /gen:\1 -->", repl, text, flags=re.S)
    missing = sorted(set(sections) - found)
    if missing:
        raise SchemaError("spec/format.md lacks the generated sections %s" % ", ".join(missing))
    return text
