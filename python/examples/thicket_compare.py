"""Two runs of one program compared in Thicket (see docs/python.md).

    python3 python/examples/thicket_compare.py RUN_A RUN_B

Prints the runs' metadata (the parameters Thicket groups them by), the inclusive time and the
calls of each function of the united call tree in each run, and the ratio of the second run's
time to the first's.
"""
import os
import sys

import parallax

runs = sys.argv[1:3]
tk = parallax.thicket(runs)

meta = tk.metadata[["executable", "arguments", "ranks", "threads", "parallax_version"]]
print(meta.sort_values("arguments").to_string(index=False))

# one sub-thicket per distinct argument list
groups = tk.groupby("arguments")
print("\ngroups:", ", ".join(f"{k!r}: {len(g.profile)} run" for k, g in groups.items()))

# rows: (node, profile); one column per run, named by its arguments
df = tk.dataframe.reset_index()
df["run"] = df["profile"].map(tk.metadata["arguments"])
df["where"] = [n.frame["name"] if n.frame["type"] == "thread"
               else f"{n.frame['name']} ({n.frame['file'].rsplit('/', 1)[-1]}:{n.frame['line']})"
               for n in df["node"]]
table = df.pivot_table(index="where", columns="run", values=["time (inc)", "calls"],
                       aggfunc="sum")
by_path = {path: tk.metadata.loc[p, "arguments"] for p, path in tk.profile_mapping.items()}
a, b = (by_path[os.path.abspath(r)] for r in runs)
table[("ratio", "")] = table[("time (inc)", b)] / table[("time (inc)", a)]
print()
print(table.round(6).to_string())
