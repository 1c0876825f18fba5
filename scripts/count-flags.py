#!/usr/bin/env python3
"""Counts the engine's flag declarations: each `#[arg(...)]` attribute in plx-cli's sources,
named by its long name (`long = "x"`, else the field's name), and lists the names declared
more than once. Usage: scripts/count-flags.py [SRC_DIR]"""
import collections
import pathlib
import re
import sys

src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                   pathlib.Path(__file__).resolve().parent.parent / "engine/crates/plx-cli/src")
ATTR = re.compile(r"#\[arg\((.*?)\)\]\s*(?:///[^\n]*\s*|#\[[^\n]*\]\s*)*(?:pub\s+)?(\w+)\s*:",
                  re.S)
where = collections.defaultdict(list)
for path in sorted(src.rglob("*.rs")):
    text = path.read_text()
    for m in ATTR.finditer(text):
        long = re.search(r'\blong\s*=\s*"([^"]+)"', m.group(1))
        name = long.group(1) if long else m.group(2).replace("_", "-")
        line = text.count("\n", 0, m.start()) + 1
        where[name].append(f"{path.relative_to(src)}:{line}")
total = sum(len(v) for v in where.values())
print(f"{total} declarations, {len(where)} distinct")
for name, places in sorted(where.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    if len(places) > 1:
        print(f"  {name} x{len(places)}: {' '.join(places)}")
