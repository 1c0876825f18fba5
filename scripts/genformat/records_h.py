"""Template of runtime/src/core/records.h: record and subtype ids, the trace event word, payload packers, record encoders, live-file offsets and the reader table, for C."""

from .model import ROOT, SIZE, CTYPE, RTYPE, SchemaError, header, snake, camel, item_min, counted  # noqa: F401

OUTPUT = ROOT / 'runtime/src/core/records.h'
HEADER = header(__file__)


def render(s):
    o = []
    w = o.append
    w("/* %s\n *\n * The experiment format for C: record and subtype ids, the trace event word, payload\n"
      " * packers, record encoders (struct plx_rec: fields appended in order, length patched, a\n"
      " * record whose repeated items do not match its count is dropped), live-file offsets and\n"
      " * (with PLX_RECORDS_TABLE) the table readers walk. */" % HEADER)
    w("#ifndef PLX_RECORDS_H\n#define PLX_RECORDS_H\n")
    w("#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n")
    w("_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, \"the format is little-endian\");\n")
    w("#define PLX_FORMAT_VERSION %du" % s["format_version"])
    w("#define PLX_FILE_HEADER_SIZE 16u\n#define PLX_RECORD_HEADER_SIZE 8u\n")
    w("enum plx_record_type {")
    for r in s["record"]:
        w("    PLX_REC_%s = %d, /* %s, %s.plx */" % (snake(r["name"]).upper(), r["id"], r["name"], r["file"]))
    w("};\n")
    ev = s["event"]
    w("/* Trace event word: kind, then region and delta (enter/exit) or subtype, payload words and\n * delta (extended). */")
    w("#define PLX_EV_KIND_SHIFT %du" % ev["kind"]["lo"])
    for k in ev["kinds"]:
        w("#define PLX_EV_%s %dull" % ({"extended": "EXT"}.get(k["name"], k["name"].upper()), k["value"]))
    for key in ("region", "subtype", "words", "delta"):
        b = ev[key]
        w("#define PLX_EV_%s_SHIFT %du" % (key.upper(), b["lo"]))
        w("#define PLX_EV_%s_BITS %du" % (key.upper(), b["hi"] - b["lo"] + 1))
    w("#define PLX_EV_DELTA_MAX ((1ull << PLX_EV_DELTA_BITS) - 1)\n")
    w("enum plx_ext_subtype {")
    for st in s["subtype"]:
        w("    PLX_EXT_%s = %d, /* payload: plx_ext_pack_%s() */" % (st["name"].upper(), st["id"], st["name"]))
    w("};")
    for st in s["subtype"]:
        w("#define PLX_EXT_%s_WORDS %du" % (st["name"].upper(), st["words"]))
    w("")
    for st in s["subtype"]:
        args = ", ".join("%s %s" % (CTYPE[f["type"]], f["name"]) for f in st["fields"])
        w("/* %s (%d): %s */" % (st["name"], st["id"], st["doc"]))
        w("static inline void plx_ext_pack_%s(uint64_t w[PLX_EXT_%s_WORDS], %s)\n{"
          % (st["name"], st["name"].upper(), args))
        for word, fields in enumerate(st["word_fields"]):
            parts = []
            for f in fields:
                bits = f["bits"]
                if f["type"] == "f64":
                    w("    uint64_t %s_bits;\n    memcpy(&%s_bits, &%s, 8);" % (f["name"], f["name"], f["name"]))
                    v = "%s_bits" % f["name"]
                elif f["type"] == "i32":
                    v = "(uint64_t)(uint32_t)%s" % f["name"]
                else:
                    v = "(uint64_t)%s" % f["name"]
                if bits < 64 and f["type"] not in ("i32",) and bits != SIZE[f["type"]] * 8:
                    v = "(%s & 0x%Xull)" % (v, (1 << bits) - 1)
                parts.append("(%s << %d)" % (v, f["lo"]) if f["lo"] else v)
            w("    w[%d] = %s;" % (word, " | ".join(parts) if parts else "0"))
        w("}\n")

    w("""/* A buffer of framed records being built. plx_rec_begin (called by each plx_enc_*) ends the
 * record before it; the writer ends the last. `grow` NULL: a fixed buffer, a record that does
 * not fit is dropped (counted in `dropped`). */
struct plx_rec {
    unsigned char *p;
    uint32_t len, cap;
    uint32_t start;          /* offset of the open record's header */
    uint32_t items, expect;  /* repeated items appended / announced by the record's count */
    uint64_t bulk;           /* payload bytes the writer appends from elsewhere (trace events) */
    uint8_t open, failed;
    uint32_t dropped;
    int (*grow)(struct plx_rec *r, size_t need); /* 0 when cap >= len + need afterwards */
    unsigned char small[512];
};

static inline void plx_rec_put(struct plx_rec *r, const void *v, size_t n)
{
    if (r->failed)
        return;
    if ((size_t)r->len + n > r->cap && !(r->grow && r->grow(r, n) == 0)) {
        r->failed = 1;
        return;
    }
    if (n)
        memcpy(r->p + r->len, v, n);
    r->len += (uint32_t)n;
}

static inline void plx_rec_end(struct plx_rec *r)
{
    if (!r->open)
        return;
    r->open = 0;
    uint64_t n = (uint64_t)(r->len - r->start - PLX_RECORD_HEADER_SIZE) + r->bulk;
    if (r->failed || r->items != r->expect || n > UINT32_MAX) {
        r->len = r->start;
        r->failed = 0;
        r->bulk = 0;
        r->dropped++;
        return;
    }
    uint32_t n32 = (uint32_t)n;
    memcpy(r->p + r->start + 4, &n32, 4);
}

static inline void plx_rec_begin(struct plx_rec *r, uint16_t type)
{
    plx_rec_end(r);
    unsigned char h[PLX_RECORD_HEADER_SIZE] = {(unsigned char)type, (unsigned char)(type >> 8)};
    r->start = r->len;
    r->items = r->expect = 0;
    r->bulk = 0;
    r->open = 1;
    plx_rec_put(r, h, sizeof h);
}

/* A fixed buffer of `cap` bytes already holding `len` bytes of framed records. */
static inline void plx_rec_over(struct plx_rec *r, void *buf, uint32_t len, uint32_t cap)
{
    memset(r, 0, offsetof(struct plx_rec, small));
    r->p = (unsigned char *)buf;
    r->len = len;
    r->cap = cap;
}

static inline void plx_rec_put_u8(struct plx_rec *r, uint8_t v) { plx_rec_put(r, &v, 1); }
static inline void plx_rec_put_u16(struct plx_rec *r, uint16_t v) { plx_rec_put(r, &v, 2); }
static inline void plx_rec_put_u32(struct plx_rec *r, uint32_t v) { plx_rec_put(r, &v, 4); }
static inline void plx_rec_put_u64(struct plx_rec *r, uint64_t v) { plx_rec_put(r, &v, 8); }
static inline void plx_rec_put_i32(struct plx_rec *r, int32_t v) { plx_rec_put(r, &v, 4); }
static inline void plx_rec_put_i64(struct plx_rec *r, int64_t v) { plx_rec_put(r, &v, 8); }
static inline void plx_rec_put_f64(struct plx_rec *r, double v) { plx_rec_put(r, &v, 8); }
static inline void plx_rec_put_str(struct plx_rec *r, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : 0;
    plx_rec_put_u32(r, n);
    plx_rec_put(r, s, n);
}
""")
    for r in s["record"]:
        sn = snake(r["name"])
        cnt = counted(r)
        args, body, follow = [], [], []
        for f in r["fields"]:
            if "count" in f:
                if f.get("bulk"):
                    body.append("    r->bulk = (uint64_t)%s * %d;" % (f["count"], SIZE[f["type"]]))
                elif "items" not in f and f["type"] != "str":
                    args.append("const %s *%s" % (CTYPE[f["type"]], f["name"]))
                    body.append("    plx_rec_put(r, %s, (size_t)%s * %d);" % (f["name"], f["count"], SIZE[f["type"]]))
                    body.append("    r->items = r->expect;")
                else:
                    follow.append(f)
                continue
            args.append("%s%s" % (CTYPE[f["type"]], f["name"]) if f["type"] == "str"
                        else "%s %s" % (CTYPE[f["type"]], f["name"]))
            body.append("    plx_rec_put_%s(r, %s);" % (f["type"], f["name"]))
            if f["name"] in cnt and not cnt[f["name"]].get("bulk"):
                body.append("    r->expect = %s;" % f["name"])
        note = ""
        if follow:
            note = "; then %s × plx_enc_%s_%s()" % (follow[0]["count"], sn, follow[0]["name"])
        w("/* %s (%d)%s */" % (r["name"], r["id"], note))
        w("static inline void plx_enc_%s(struct plx_rec *r, %s)\n{" % (sn, ", ".join(args)))
        w("    plx_rec_begin(r, PLX_REC_%s);" % sn.upper())
        o.extend(body)
        w("}\n")
        for f in follow:
            items = f.get("items") or [{"name": f["name"], "type": f["type"]}]
            a = ", ".join(("%s%s" if i["type"] == "str" else "%s %s") % (CTYPE[i["type"]], i["name"]) for i in items)
            w("static inline void plx_enc_%s_%s(struct plx_rec *r, %s)\n{" % (sn, f["name"], a))
            for i in items:
                w("    plx_rec_put_%s(r, %s);" % (i["type"], i["name"]))
            w("    r->items++;\n}\n")
    for r in s["record"]:
        off = r["fixed_size"]
        w("#define PLX_%s_FIXED_SIZE %du /* bytes before the first string or repeated field */"
          % (snake(r["name"]).upper(), off))
        for f in r["fields"]:
            if "count" in f and all(i["type"] != "str" for i in f.get("items", [f])):
                w("#define PLX_%s_%s_ITEM_SIZE %du" % (snake(r["name"]).upper(), f["name"].upper(), item_min(f)))
    w("")
    lh = s["live_header"]
    w("/* Live files: a %d-byte header, then items. Offsets of each field. */" % lh["size"])
    w("#define PLX_LIVE_HEADER_SIZE %du" % lh["size"])
    for f in lh["fields"]:
        w("#define PLX_LIVE_HEADER_OFF_%s %du" % (f["name"].upper(), f["offset"]))
    for lv in s["live"]:
        k = lv["kind"].upper()
        w("#define PLX_LIVE_%s_ITEM_SIZE %du" % (k, lv["item_size"]))
        for f in lv["fields"]:
            w("#define PLX_LIVE_%s_OFF_%s %du" % (k, f["name"].upper(), f["offset"]))
    w("")
    w("/* The layouts as data, for readers that walk any record (runtime/tests/plx_walk.c): the\n"
      " * tables themselves are defined where PLX_RECORDS_TABLE is. */")
    w("enum plx_field_type { PLX_T_U8, PLX_T_U16, PLX_T_U32, PLX_T_U64, PLX_T_I32, PLX_T_I64, PLX_T_F64, PLX_T_STR, PLX_T_GROUP };")
    w("struct plx_field_def {\n    const char *name;\n    uint8_t type;\n    int8_t count;    /* index of the count field, -1: not repeated */\n"
      "    uint8_t bulk;\n    uint8_t nitems; /* PLX_T_GROUP */\n    const struct plx_field_def *items;\n};")
    w("struct plx_record_def {\n    uint16_t id;\n    const char *name;\n    uint8_t nfields;\n"
      "    uint8_t nrequired; /* fields every version writes; later ones were appended (absent: zero) */\n"
      "    const struct plx_field_def *fields;\n};")
    w("struct plx_subfield_def {\n    const char *name;\n    uint8_t type, word, lo, hi;\n};")
    w("struct plx_subtype_def {\n    uint8_t id;\n    const char *name;\n    uint8_t words, nfields;\n    const struct plx_subfield_def *fields;\n};")
    T = lambda t: "PLX_T_" + t.upper()
    w("/* Field indices: PLX_F_<RECORD>_<FIELD> in plx_record_defs[].fields, PLX_F_<RECORD>_<FIELD>_<ITEM>\n"
      " * in a group's items, PLX_SF_<SUBTYPE>_<FIELD> in plx_subtype_defs[].fields. */")
    w("enum {")
    for r in s["record"]:
        R = snake(r["name"]).upper()
        for k, f in enumerate(r["fields"]):
            w("    PLX_F_%s_%s = %d," % (R, f["name"].upper(), k))
            for j, i in enumerate(f.get("items", [])):
                w("    PLX_F_%s_%s_%s = %d," % (R, f["name"].upper(), i["name"].upper(), j))
    for st in s["subtype"]:
        for k, f in enumerate(st["fields"]):
            w("    PLX_SF_%s_%s = %d," % (st["name"].upper(), f["name"].upper(), k))
    w("};")
    w("#ifdef PLX_RECORDS_TABLE")
    for r in s["record"]:
        sn = snake(r["name"])
        names = [f["name"] for f in r["fields"]]
        for f in r["fields"]:
            if "items" in f:
                w("static const struct plx_field_def plx_fields_%s_%s[] = {" % (sn, f["name"]))
                for i in f["items"]:
                    w("    {\"%s\", %s, -1, 0, 0, NULL}," % (i["name"], T(i["type"])))
                w("};")
        w("static const struct plx_field_def plx_fields_%s[] = {" % sn)
        for f in r["fields"]:
            cidx = names.index(f["count"]) if "count" in f else -1
            if "items" in f:
                w("    {\"%s\", PLX_T_GROUP, %d, 0, %d, plx_fields_%s_%s}," % (f["name"], cidx, len(f["items"]), sn, f["name"]))
            else:
                w("    {\"%s\", %s, %d, %d, 0, NULL}," % (f["name"], T(f["type"]), cidx, 1 if f.get("bulk") else 0))
        w("};")
    w("static const struct plx_record_def plx_record_defs[] = {")
    for r in s["record"]:
        w("    {%d, \"%s\", %d, %d, plx_fields_%s}," % (r["id"], r["name"], len(r["fields"]), r["required"], snake(r["name"])))
    w("};")
    w("#define PLX_RECORD_DEFS %d" % len(s["record"]))
    for st in s["subtype"]:
        w("static const struct plx_subfield_def plx_subfields_%s[] = {" % st["name"])
        for f in st["fields"]:
            w("    {\"%s\", %s, %d, %d, %d}," % (f["name"], T(f["type"]), f["word"], f["lo"], f["hi"]))
        w("};")
    w("static const struct plx_subtype_def plx_subtype_defs[] = {")
    for st in s["subtype"]:
        w("    {%d, \"%s\", %d, %d, plx_subfields_%s}," % (st["id"], st["name"], st["words"], len(st["fields"]), st["name"]))
    w("};")
    w("#define PLX_SUBTYPE_DEFS %d" % len(s["subtype"]))
    w("#endif /* PLX_RECORDS_TABLE */\n")
    w("#endif /* PLX_RECORDS_H */")
    return "\n".join(o) + "\n"
