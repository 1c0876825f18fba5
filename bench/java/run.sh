#!/usr/bin/env bash
# Java agent overhead (make bench, called by bench/run.sh): ns per measured Java method call
# (entry + exit, JIT warmed) in profile and trace mode, and for an excluded class, against the
# same JVM without the agent, all in this run. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=$PWD/build/lib
out=$PWD/build/bench/java
calls=${PLX_BENCH_JAVA_CALLS:-20000000}
reps=${PLX_BENCH_REPS:-3}
command -v javac >/dev/null && [ -f "$lib/plx-agent.jar" ] || { echo "java bench: no JDK or agent jar; skipped"; exit 0; }
mkdir -p "$out"
javac -d "$out" bench/java/JavaBench.java
echo "exclude class JavaBench" > "$out/exclude.filter"
agent="-agentpath:$lib/libplx.so -javaagent:$lib/plx-agent.jar"

best() { # the least disturbed of $reps runs
  local b=""
  for _ in $(seq "$reps"); do
    v=$("$@" 2>/dev/null | awk '/ns\/call/ {print $1}')
    b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c < a) print c; else print a }')
  done
  echo "$b"
}
measured() { # MODE [VAR=VALUE...]: java measured into exp-MODE
  local mode=$1; shift
  rm -rf "$out/exp-$mode"
  env PLX_OUTPUT="$out/exp-$mode" LD_PRELOAD="$lib/libplx.so" JAVA_TOOL_OPTIONS="$agent" "$@" \
    java -cp "$out" JavaBench "$calls"
}

plain=$(best java -cp "$out" JavaBench "$calls")
profile=$(best measured profile)
trace=$(best measured trace PLX_TRACE=1)
excluded=$(best measured excluded PLX_FILTER="$out/exclude.filter")
# the agent's natives as the JVM's critical natives (no JNI transition from compiled code), where
# the JVM still has them (JDK 17 and earlier)
critical=""
critical_trace=""
if java -XX:+CriticalJNINatives -version >/dev/null 2>&1 && \
   ! java -XX:+CriticalJNINatives -version 2>&1 | grep -q "support was removed"; then
  critical=$(best measured critical JAVA_TOOL_OPTIONS="$agent -XX:+CriticalJNINatives")
  critical_trace=$(best measured critical-trace PLX_TRACE=1 JAVA_TOOL_OPTIONS="$agent -XX:+CriticalJNINatives")
fi
# JVMTI MethodEntry/MethodExit for every method: fewer calls (it is two orders slower)
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
jvmti=""
jvmti_calls=$((calls / 100))
if cc -O2 -shared -fPIC -I"$jdk/include" -I"$jdk/include/linux" bench/java/jvmti_methods.c \
     -o "$out/libjvmti_methods.so" 2>/dev/null; then
  jvmti=$(best java -agentpath:"$out/libjvmti_methods.so" -cp "$out" JavaBench "$jvmti_calls")
fi
row() { awk -v n="$1" -v v="$2" -v p="$plain" -v t="$3" 'BEGIN { printf "| %s | %.2f | %.2f | %s |\n", n, v, v - p, t }'; }
echo "| Java method call ($calls calls, JIT warmed) | ns per call | added by the agent | target |"
echo "|---|---|---|---|"
row "no agent (the same JVM)" "$plain" ""
row "agent, profile mode" "$profile" "≤ 40"
row "agent, trace mode" "$trace" "≤ 50"
row "agent, class excluded by the filter (not rewritten)" "$excluded" "≈ 0"
if [ -n "$critical" ]; then
  row "agent, profile mode, -XX:+CriticalJNINatives" "$critical" "≤ 40"
  row "agent, trace mode, -XX:+CriticalJNINatives" "$critical_trace" "≤ 50"
fi
if [ -n "$jvmti" ]; then
  row "JVMTI MethodEntry/MethodExit agent, no agent of ours ($jvmti_calls calls)" "$jvmti" "comparison"
fi
