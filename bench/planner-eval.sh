#!/usr/bin/env bash
# The SLA planner's evaluation (issue 9): one seeded bursty trace replayed on the local cluster three
# times — a static pool sized for the peak, one sized for the mean, and one pool scaled by the planner's
# local connector — then SLO attainment and worker-seconds side by side (docs/benchmarks.md, "Planner").
#
#   bench/planner-eval.sh all OUT        trace, the three configurations and two more planner runs (each
#                                        run under the cluster lock, ~6 min), report
#   bench/planner-eval.sh trace OUT      only the trace (OUT/trace.jsonl)
#   bench/planner-eval.sh run CONFIG OUT one run (peak-static | mean-static | planner) into OUT/CONFIG (or
#                                        OUT/$EVAL_LABEL); starts and stops a local cluster, so run it
#                                        under: flock /tmp/flotilla-cluster.lock
#   bench/planner-eval.sh report OUT     the table from the runs in OUT (OUT/report.md)
#
# Needs the built jars (./mvnw -DskipTests package, or per module) and uses them as they are: it never
# rebuilds. Every setting below can be overridden from the environment (EVAL_...=... bench/planner-eval.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOCK=${EVAL_LOCK:-/tmp/flotilla-cluster.lock}

# Engines 4× slower than the timing model, so that four busy workers fit the traffic one 2-core machine
# can drive; the SLO targets are the planner's defaults (1 s, 50 ms) scaled by the same 4×.
SIM_SPEEDUP=${EVAL_SIM_SPEEDUP:-0.25}
TTFT_MS=${EVAL_TTFT_MS:-4000}
ITL_MS=${EVAL_ITL_MS:-200}
# Quiet, a 90 s ramp (three cold starts of a worker here) to a 20× burst, the burst, a sudden drop, quiet
# again: 280 s in all.
PHASES=${EVAL_PHASES:-40s@0.5,90s@0.5-10,40s@10,10s@10-0.5,100s@0.5}
ISL=${EVAL_ISL:-2000}
OSL=${EVAL_OSL:-64}
SEED=${EVAL_SEED:-9}
# Static pools from the planner's model (ReplicaPlanner, headroom 0.1, no forecast or correction): 3.34 replicas
# at the peak (10 req/s) and 1.21 at the trace's mean (3.64 req/s).
PEAK_WORKERS=${EVAL_PEAK_WORKERS:-4}
MEAN_WORKERS=${EVAL_MEAN_WORKERS:-2}
# Planner timescales compressed for a 270 s trace (defaults: 30s interval, 120s ready time, 30s/120s
# cooldowns, 180s stable time). The ready time is only the prior: the planner measures the cold start of
# its own scale-ups (learn-ready-time) and sizes ahead by that once the first one has completed.
PLANNER_OPTS=(--planner-interval "${EVAL_INTERVAL:-5s}"
  --planner-opt "ttft-target=${TTFT_MS}ms" --planner-opt "itl-target=${ITL_MS}ms"
  --planner-opt "ready-time=${EVAL_READY_TIME:-30s}" --planner-opt "aggregated.max=${PEAK_WORKERS}"
  --planner-opt "scaling.up-cooldown=${EVAL_UP_COOLDOWN:-5s}" --planner-opt "scaling.down-cooldown=${EVAL_DOWN_COOLDOWN:-10s}"
  --planner-opt "scaling.min-stable=${EVAL_MIN_STABLE:-15s}" --planner-opt history=500)

launcher() {
  java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dflotilla.home="$ROOT" \
    -cp "local-cluster/target/local-cluster.jar:local-cluster/target/lib/*" io.flotilla.cluster.launcher.FlotillaCli "$@"
}
benchjava() {
  java -Xmx1g -cp "bench/target/bench.jar:bench/target/lib/*" "$@"
}

trace() {
  local out=$1
  mkdir -p "$out"
  benchjava io.flotilla.bench.planner.PlannerEvalCli trace --phases "$PHASES" --isl "$ISL" --osl "$OSL" \
    --seed "$SEED" --out "$out/trace.jsonl"
}

run() {
  local config=$1 out=$2
  local dir="$out/${EVAL_LABEL:-$config}"
  [ -f "$out/trace.jsonl" ] || trace "$out"
  rm -rf "$dir" && mkdir -p "$dir"
  local workers planner
  case "$config" in
    peak-static) workers=$PEAK_WORKERS; planner=shadow ;;
    mean-static) workers=$MEAN_WORKERS; planner=shadow ;;
    planner) workers=1; planner=local ;;
    *) echo "unknown configuration $config (peak-static, mean-static, planner)" >&2; exit 2 ;;
  esac
  trap 'launcher down --grace 15 > "'"$dir"'/down.log" 2>&1 || true' EXIT
  ls -l --time-style=+%FT%T ./*/target/*-exec.jar local-cluster/target/local-cluster.jar bench/target/bench.jar \
    | awk '{print $6, $5, $7}' > "$dir/jars.txt"
  echo "[$config] up: $workers workers, planner $planner, sim-speedup $SIM_SPEEDUP ($(date +%T), load $(cut -d" " -f1-3 /proc/loadavg))"
  launcher up -d --workers "$workers" --sim-speedup "$SIM_SPEEDUP" --planner "$planner" "${PLANNER_OPTS[@]}" > "$dir/up.log" 2>&1 \
    || { tail -20 "$dir/up.log"; exit 1; }
  # Warm the cold JVMs up with a few requests, then let the planner see a quiet spell before the trace,
  # so its first forecasts do not start from the warm-up spike (0 → 2 req/s reads as a steep trend).
  benchjava io.flotilla.bench.BenchCli --url http://127.0.0.1:8000 --trace "$out/trace.jsonl" --trace-block-size 512 \
    --warmup 8 --max-requests 1 --seed "$SEED" --quiet --out "$dir/warmup" > "$dir/warmup.log"
  sleep "${EVAL_SETTLE_S:-30}"
  echo "[$config] replaying $(wc -l < "$out/trace.jsonl") requests ($(date +%T))"
  benchjava io.flotilla.bench.BenchCli --url http://127.0.0.1:8000 --trace "$out/trace.jsonl" --trace-block-size 512 \
    --slo-ttft-ms "$TTFT_MS" --slo-itl-ms "$ITL_MS" --request-timeout 120s --seed "$SEED" --quiet \
    --out "$dir/bench" | tee "$dir/bench.log"
  cp .flotilla/cluster.properties "$dir/cluster.properties"
  benchjava io.flotilla.bench.planner.PlannerEvalCli workers --run "$dir/bench" --launcher-state "$dir/cluster.properties"
  curl -sf 'http://127.0.0.1:8084/planner/decisions?limit=500' > "$dir/decisions.json" || echo "no planner decisions" >&2
  grep -E "LocalConnector|planning interval failed" .flotilla/logs/planner.log > "$dir/planner-actions.log" || true
  launcher status > "$dir/status.txt" 2>&1 || true
  echo "[$config] done ($(date +%T), load $(cut -d" " -f1-3 /proc/loadavg))"
}

report() {
  local out=$1
  local runs=(--run "peak-static=$out/peak-static/bench" --run "mean-static=$out/mean-static/bench")
  for d in "$out"/planner "$out"/planner-*; do
    [ -d "$d" ] && runs+=(--run "$(basename "$d")=$d/bench")
  done
  benchjava io.flotilla.bench.planner.PlannerEvalCli report --baseline peak-static "${runs[@]}" \
    --slo-ttft-ms "$TTFT_MS" --slo-itl-ms "$ITL_MS" --phases "$PHASES" --trace "$out/trace.jsonl" --out "$out/report.md"
  cat "$out/report.md"
}

cmd=${1:-}
case "$cmd" in
  trace) trace "${2:?OUT}" ;;
  run) run "${2:?CONFIG}" "${3:?OUT}" ;;
  report) report "${2:?OUT}" ;;
  all)
    out=${2:?OUT}
    trace "$out"
    for config in planner peak-static mean-static; do
      flock "$LOCK" "$0" run "$config" "$out"
    done
    # The planner's runs differ more than the static pools' (its decisions follow what it observes): repeat it.
    for i in $(seq 2 "${EVAL_PLANNER_RUNS:-3}"); do
      EVAL_LABEL="planner-$i" flock "$LOCK" "$0" run planner "$out"
    done
    report "$out"
    ;;
  *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
