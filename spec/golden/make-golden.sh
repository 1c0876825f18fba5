#!/usr/bin/env bash
# Makes golden experiments from real runs of the C runtime (run from anywhere after `make`):
#   spec/golden/make-golden.sh NAME...     NAME: profile trace all-profile all-trace mpi
# then their expected dumps: touch spec/golden/NAME.expected for a new one, and
#   cd engine && PLX_BLESS=1 cargo test -p plx-format --test golden
# Golden files are kept as they are once checked in: old formats must keep decoding, so only
# name an experiment here to make a new one. spec/golden/unknown is synthetic: make-unknown.py;
# spec/golden/jit (JitCode, JitUnload, SampleSignal, SampleStamps) too: make-jit.py.
#   profile, trace   main runs fib(5) in the phase `compute`, a worker thread fib(4)
#   profile-v2       the same profile run written at format version 2 (Module.build_id)
#   all-profile      src/all.c (every record but MPI's) with filter "throttle 100 1000",
#                    "cputime spin" and --cpu-sample 2
#   all-trace        the same with --trace (every event subtype but MPI's and the time reset)
#   mpi              src/mpi.c under mpirun with 2 ranks, --trace (MPI records and subtypes)
#   intercomm        src/intercomm.c under mpirun with 2 ranks, --trace (InterCommDef)
#   mpi-nonblocking  src/mpi-nonblocking.c under mpirun with 2 ranks, --trace (send_done)
#   mpi-irecv        src/mpi-irecv.c under mpirun with 2 ranks, --trace (recv_posted)
#   mpi-icoll        src/mpi-icoll.c under mpirun with 2 ranks, --trace (coll_done)
#   mpi-partial      src/mpi.c under mpirun with 2 ranks, only rank 0 under plx run
#                    (ClockSyncSkipped)
#   java             src/Golden.java under the agent (JavaClass, Java method regions)
#   java-threads     the same run made with the JVM's thread list (JavaThread)
#   probe            src/probe.c built with plain cc -O2, --probe 'twice,tiny' (ProbeSite, ProbeChange)
#   sample           src/sample.c built with plain cc -O2 -g, --sample=1000 (SampleTree)
#   omp              src/omp.c (gcc -fopenmp, libgomp) with --trace (OmpTeams, the omp_task subtype)
#   omp-paths        the same, made after workers' paths began with their starter's (the
#                    omp_context subtype)
#   write-failures   fib(12) traced in 4 KiB buffers under a 4 KiB file size limit: the trace's
#                    writes fail (WriteFailures; plx run exits 3)
#   open-at-end      tests/e2e/programs/blocked_exit.c with --trace: a thread blocked two frames down while main
#                    calls exit() (OpenAtEnd, exit events at the process's end)
#   metrics          the trace run with --monitor cpu,mem,net,disk --monitor-period 5, then
#                    plx import of src/power.csv (MetricSource, MetricDef, MetricSample)
#   counters         src/counters.c, --trace --counters task-clock,page-faults and the filter rule
#                    "counters step task-clock | page-faults every 2", reloaded once (CounterSet, CounterEpoch,
#                    ThreadCounters, NodeCounters, subtypes counted_call and counter_epoch)
#   counter-paths    src/counters.c with --counters task-clock,page-faults and the filter rule
#                    "counters step page-faults" (CounterReadPaths: read() and the group's time)
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
plx=$root/build/bin/plx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || { sed -n '2,/^set -euo/p' "$self" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

# Copies experiment $1 to ./$2 with its directories named golden.1000, golden.1001, ... in the
# order of their MPI rank (or their name) and its monitor's file named metrics.monitor.golden.plx:
# the host and pid of the run that made it are kept out of the names. Metric files (plx import's)
# keep their names.
keep() {
  rm -rf "$2"
  mkdir -p "$2"
  python3 - "$1" "$2" <<'PY'
import shutil, sys
from pathlib import Path
sys.path.insert(0, str(Path.cwd().parents[1] / "tests/support"))
from plx_codec import decode, read_file
from plx_schema import RECORD_IDS
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
def rank(d):
    for rtype, p in read_file(d / "process.plx")[1]:
        if rtype == RECORD_IDS["MpiInit"]:
            return decode(rtype, p)["rank"]
    return 0
dirs = sorted((d for d in src.iterdir() if d.is_dir() and not d.name.startswith(".")),
              key=lambda d: (rank(d), d.name))
for i, d in enumerate(dirs):
    shutil.copytree(d, dst / ("golden.%d" % (1000 + i)))
for f in sorted(src.glob("metrics.*.plx")):
    name = "metrics.monitor.golden.plx" if f.name.startswith("metrics.monitor.") else f.name
    shutil.copyfile(f, dst / name)
PY
}

fib() {
  cat > "$tmp/golden.c" <<'C'
#include <pthread.h>
#include <plx.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
void *worker(void *a) { fib(4); return a; }
int main(void)
{
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    plx_phase_begin("compute");
    plx_event("size", 5);
    fib(5);
    plx_phase_end("compute");
    pthread_join(t, 0);
    return 0;
}
C
  "$root/build/bin/plx-cc" -O0 "$tmp/golden.c" -o "$tmp/golden" -pthread
}

all() {
  "$root/build/bin/plx-cc" -O0 src/all.c -o "$tmp/all" -pthread
  printf 'throttle 100 1000\ncputime spin\n' > "$tmp/all.filter"
}

for name in "$@"; do
  case $name in
  profile|profile-v2) fib; "$plx" run -o "$tmp/out-$name" -- "$tmp/golden" ;;
  probe)
    cc -O2 src/probe.c -o "$tmp/probe"
    "$plx" run -o "$tmp/out-$name" --probe 'twice,tiny' -- "$tmp/probe" ;;
  sample)
    cc -O2 -g src/sample.c -o "$tmp/sample"
    "$plx" run -o "$tmp/out-$name" --sample=1000 -- "$tmp/sample" ;;
  counters)
    "$root/build/bin/plx-cc" -O0 src/counters.c -o "$tmp/counters"
    echo 'counters step task-clock | page-faults every 2' > "$tmp/counters.filter"
    "$plx" run -o "$tmp/out-$name" --trace --filter "$tmp/counters.filter" \
      --counters task-clock,page-faults -- "$tmp/counters" ;;
  counter-paths)
    "$root/build/bin/plx-cc" -O0 src/counters.c -o "$tmp/counters"
    echo 'counters step page-faults' > "$tmp/counters.filter"
    "$plx" run -o "$tmp/out-$name" --filter "$tmp/counters.filter" \
      --counters task-clock,page-faults -- "$tmp/counters" ;;
  java|java-threads)
    javac -d "$tmp" src/Golden.java
    "$plx" run -o "$tmp/out-$name" -- java -Xint -XX:+UseSerialGC -cp "$tmp" Golden ;;
  trace) fib; "$plx" run -o "$tmp/out-$name" --trace -- "$tmp/golden" ;;
  metrics)
    fib
    "$plx" run -o "$tmp/out-$name" --trace --monitor cpu,mem,net,disk --monitor-period 5 -- "$tmp/golden"
    "$plx" import "$tmp/out-$name" --csv src/power.csv --time-column t --time-unit ms ;;
  all-profile) all; "$plx" run -o "$tmp/out-$name" --filter "$tmp/all.filter" --cpu-sample 2 -- "$tmp/all" ;;
  all-trace) all; "$plx" run -o "$tmp/out-$name" --filter "$tmp/all.filter" --cpu-sample 2 --trace -- "$tmp/all" ;;
  mpi|intercomm|mpi-nonblocking|mpi-irecv|mpi-icoll)
    mpicc -g -O0 -finstrument-functions "src/$name.c" -o "$tmp/$name"
    root_flag=""
    [ "$(id -u)" = 0 ] && root_flag=--allow-run-as-root
    mpirun --oversubscribe $root_flag -np 2 "$plx" run -o "$tmp/out-$name" --trace -- "$tmp/$name" ;;
  mpi-partial)
    mpicc -g -O0 -finstrument-functions src/mpi.c -o "$tmp/mpi"
    root_flag=""
    [ "$(id -u)" = 0 ] && root_flag=--allow-run-as-root
    mpirun --oversubscribe $root_flag -np 2 sh -c \
      'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec "$0" run -o "$1" -- "$2"; else exec "$2"; fi' \
      "$plx" "$tmp/out-$name" "$tmp/mpi" ;;
  omp|omp-paths)
    PLX_CC=gcc "$root/build/bin/plx-cc" -O0 -fopenmp src/omp.c -o "$tmp/omp"
    "$plx" run -o "$tmp/out-$name" --trace -- "$tmp/omp" ;;
  open-at-end)
    "$root/build/bin/plx-cc" -O0 -pthread "$root/tests/e2e/programs/blocked_exit.c" -o "$tmp/open_at_end"
    "$plx" run -o "$tmp/out-$name" --trace -- "$tmp/open_at_end" ;;
  write-failures)
    printf 'int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\nint main(void) { return fib(12) == 144 ? 0 : 1; }\n' > "$tmp/full.c"
    "$root/build/bin/plx-cc" -O0 "$tmp/full.c" -o "$tmp/full"
    st=0
    (trap '' XFSZ; ulimit -f 4; "$plx" run -o "$tmp/out-$name" --trace --buffer 4K -- "$tmp/full") || st=$?
    [ "$st" = 3 ] || { echo "make-golden.sh: plx run exited $st, expected 3" >&2; exit 1; } ;;
  *) echo "make-golden.sh: no golden experiment $name" >&2; exit 2 ;;
  esac
  keep "$tmp/out-$name" "$name"
  echo "made spec/golden/$name"
done
