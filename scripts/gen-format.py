#!/usr/bin/env python3
"""Generates the experiment format's code and tables from spec/records.toml (Python 3.11 stdlib).

    python3 scripts/gen-format.py            rewrite every generated file
    python3 scripts/gen-format.py --check    exit 1 naming each generated file that differs

The model (scripts/genformat/model.py) loads and validates the schema; one template per output
renders it, and each output's first line names its template:
    scripts/genformat/records_h.py      runtime/src/core/records.h (C ids, subtypes, payload packers,
                                        record encoders, live-file offsets, the reader table)
    scripts/genformat/schema_rs.py      engine/crates/plx-format/src/schema.rs (Rust ids, record
                                        structs, typed decoders and encoders, the dump)
    scripts/genformat/plx_schema_py.py  tests/support/plx_schema.py (the Python table)
    scripts/genformat/format_md.py      the generated sections of spec/format.md (between
                                        <!-- gen:NAME --> and <!-- /gen:NAME --> markers)
"""

import argparse
import sys
import tomllib
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

from genformat import format_md, plx_schema_py, records_h, schema_rs  # noqa: E402
from genformat.model import ROOT, SCHEMA, SchemaError, load  # noqa: E402

TEMPLATES = (records_h, schema_rs, plx_schema_py, format_md)


def outputs(s):
    return {t.OUTPUT: t.render(s) for t in TEMPLATES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if a generated file differs")
    a = ap.parse_args()
    try:
        s = load()
        outs = outputs(s)
    except (SchemaError, KeyError, tomllib.TOMLDecodeError) as e:
        print("gen-format: %s: %s" % (SCHEMA.relative_to(ROOT), e), file=sys.stderr)
        return 2
    stale = []
    for path, text in outs.items():
        old = path.read_text() if path.exists() else None
        if old == text:
            continue
        if a.check:
            stale.append(path)
        else:
            path.write_text(text)
            print("gen-format: wrote %s" % path.relative_to(ROOT))
    for p in stale:
        print("gen-format: %s is out of date with spec/records.toml (run python3 scripts/gen-format.py)"
              % p.relative_to(ROOT), file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
