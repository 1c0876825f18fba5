"""A tour of the parallax package on experiments of examples/mpi (see docs/python.md).

    python3 python/examples/tour.py PINGPONG_EXP LIFE_EXP
"""
import sys

import parallax

pingpong, life = sys.argv[1], sys.argv[2]

exp = parallax.open(pingpong)
prof = exp.profiles
print("profiles:", len(prof), "rows")
print(prof[prof["function"].str.startswith("MPI_")]
      .groupby(["node", "function"])[["calls", "inclusive_s"]].sum().round(6))

msg = exp.messages
print("\nmessages per pair and size:")
print(msg.groupby(["sender_rank", "receiver_rank", "bytes"]).size().rename("count"))
msg["latency_us"] = (msg["recv_ns"] - msg["send_ns"]) / 1e3
print("\nmedian one-way time (us) by size:")
print(msg.groupby("bytes")["latency_us"].median().round(1))

events = exp.table("events", backend="polars")
print("\nevents by kind (Polars):")
print(events.group_by("kind").len().sort("kind"))

gf = parallax.open(life).to_hatchet(total=True)
print(gf.tree(metric_column="time (inc)", precision=4))

tk = parallax.thicket([pingpong, life])
print("thicket:", len(tk.profile), "profiles,", len(tk.graph), "call tree nodes")
