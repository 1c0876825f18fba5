#!/usr/bin/env bash
# plx waits against Scalasca's own analysis of the same run: tests/e2e/programs/waits_mpi.c (4
# ranks, Open MPI, injected delays of D s) traced by plx, exported as OTF2, analysed by
# Scalasca's scout.mpi and by `plx waits [--causes]`; prints each pattern's total seconds from
# both and their difference. Scalasca is not packaged by Debian: build it from its public source
# (docs/waits.md, "Checked against Scalasca") and point SCALASCA_ROOT at the installation.
#   SCALASCA_ROOT=/opt/scalasca bash bench/scalasca.sh [openmpi|mpich] [D]
# (the run under Open MPI or MPICH; scout runs under the MPI it was built with, Open MPI here)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${SCALASCA_ROOT:-}
if [ -z "$root" ] || [ ! -x "$root/bin/scout.mpi" ]; then
  echo "bench/scalasca.sh: no scout.mpi under SCALASCA_ROOT='$root' (see docs/waits.md, \"Checked against Scalasca\")" >&2
  exit 2
fi
mpi=${1:-openmpi}
d=${2:-0.2}
case $mpi in
  openmpi) mpicc=mpicc.openmpi; launch=(mpirun.openmpi --oversubscribe -np 4) ;;
  mpich) mpicc=mpicc.mpich; launch=(mpirun.mpich -np 4) ;;
  *) echo "bench/scalasca.sh: MPI is openmpi or mpich, not $mpi" >&2; exit 2 ;;
esac
plx=$PWD/build/bin/plx
out=$PWD/build/bench/scalasca
rm -rf "$out" && mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$mpicc" -g -O1 -finstrument-functions tests/e2e/programs/waits_mpi.c -o "$out/waits_mpi" 2>/dev/null
"${launch[@]}" "$plx" run --trace -o "$out/exp" -- "$out/waits_mpi" "$d" >"$out/run.log" 2>&1
"$plx" export "$out/exp" --format otf2 -o "$out/otf2" 2>/dev/null
(cd "$out" && mpirun.openmpi --oversubscribe -np 4 "$root/bin/scout.mpi" otf2/traces.otf2 >scout.log 2>&1) ||
  { cat "$out/scout.log" >&2; exit 1; }
if grep -q "clock condition violations" "$out/scout.log"; then
  grep -A3 "clock condition violations" "$out/scout.log" >&2
fi
python3 bench/cube_totals.py "$out/otf2/scout.cubex" >"$out/scalasca.tsv"
"$plx" waits "$out/exp" --format csv >"$out/waits.csv"
"$plx" waits "$out/exp" --causes --format csv >"$out/causes.csv"
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
sc = dict(l.rstrip("\n").split("\t") for l in open(f"{out}/scalasca.tsv"))
sc = {k: float(v) for k, v in sc.items()}
waits, causes = {}, {}
for r in csv.DictReader(open(f"{out}/waits.csv")):
    waits[r["pattern"]] = waits.get(r["pattern"], 0.0) + float(r["wait_s"])
for r in csv.DictReader(open(f"{out}/causes.csv")):
    k = (r["pattern"], r["kind"])
    causes[k] = causes.get(k, 0.0) + float(r["delay_s"])
w = lambda *ps: sum(waits.get(p, 0.0) for p in ps)
c = lambda kind, *ps: sum(causes.get((p, kind), 0.0) for p in ps)
rows = [
    # Scalasca's Late Sender holds its wrong-order part; it has no wrong-order Late Receiver
    ("late_sender + late_sender_wrong_order", w("late_sender", "late_sender_wrong_order"), "mpi_latesender"),
    ("late_sender_wrong_order", w("late_sender_wrong_order"), "mpi_latesender_wo"),
    ("late_receiver + late_receiver_wrong_order", w("late_receiver", "late_receiver_wrong_order"), "mpi_latereceiver"),
    ("wait_at_barrier", w("wait_at_barrier"), "mpi_barrier_wait"),
    ("wait_at_nxn", w("wait_at_nxn"), "mpi_wait_nxn"),
    ("late_broadcast", w("late_broadcast"), "mpi_latebroadcast"),
    ("early_reduce", w("early_reduce"), "mpi_earlyreduce"),
    ("causes: late sender, all", c("direct", "late_sender", "late_sender_wrong_order")
        + c("propagated", "late_sender", "late_sender_wrong_order"),
        ("delay_latesender", "delay_latesender_longterm")),
    ("causes: late sender, propagated", c("propagated", "late_sender", "late_sender_wrong_order"),
        "delay_latesender_longterm"),
    ("causes: late receiver, all", c("direct", "late_receiver", "late_receiver_wrong_order")
        + c("propagated", "late_receiver", "late_receiver_wrong_order"),
        ("delay_latereceiver", "delay_latereceiver_longterm")),
    ("causes: barrier, all", c("direct", "wait_at_barrier") + c("propagated", "wait_at_barrier"),
        ("delay_barrier", "delay_barrier_longterm")),
    ("causes: barrier, propagated", c("propagated", "wait_at_barrier"), "delay_barrier_longterm"),
    ("causes: N x N", c("direct", "wait_at_nxn") + c("propagated", "wait_at_nxn"),
        ("delay_n2n", "delay_n2n_longterm")),
    ("causes: 1 to N", c("direct", "late_broadcast") + c("propagated", "late_broadcast"),
        ("delay_12n", "delay_12n_longterm")),
    ("causes: N to 1", c("direct", "early_reduce") + c("propagated", "early_reduce"),
        ("delay_n21", "delay_n21_longterm")),
]
print("| plx waits | s | Scalasca 2.6 (scout) | s | difference |")
print("|---|---|---|---|---|")
for name, mine, theirs in rows:
    theirs = (theirs,) if isinstance(theirs, str) else theirs
    s = sum(sc.get(t, 0.0) for t in theirs)
    print(f"| {name} | {mine:.6f} | {' + '.join(theirs)} | {s:.6f} | {mine - s:+.6f} |")
PY
