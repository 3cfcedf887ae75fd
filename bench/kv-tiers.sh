#!/usr/bin/env bash
# The KV tiers benchmark (docs/benchmarks.md "KV tiers"): one seeded multi-turn session workload
# whose reuse distance exceeds the device KV of all four workers, run three times — tiers off, host memory
# only, host memory + disk — each on a fresh local cluster; bench reports per run the cache hit rate per
# tier, the unlimited-cache oracle and an LRU of the same total capacity, TTFT and throughput.
#
#   flock /tmp/flotilla-cluster.lock bench/kv-tiers.sh OUT [MODE...]   MODE: off host hostdisk (default all)
#
# Starts and stops the cluster (hence the lock), deletes .flotilla/kvbm between runs, and leaves per run
# OUT/MODE (bench's report), OUT/MODE-workerN-kvbm.prom (each worker's flotilla_worker_kvbm_* series) and
# OUT/MODE-router.{json,prom} (/actuator/router, decisions by prefix tier). Settings can be overridden from
# the environment (KVT_...=... bench/kv-tiers.sh OUT).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT=${1:?usage: bench/kv-tiers.sh OUT [off|host|hostdisk ...]}
shift
MODES=("$@")
[ ${#MODES[@]} -gt 0 ] || MODES=(off host hostdisk)
mkdir -p "$OUT"

# 4 workers of 2,048 device blocks (16 tokens, 16 KiB each): 8,192 blocks in all. 32 sessions of an
# 8,192-token context growing by 72 tokens a turn hold about 18,000 blocks, so a conversation's KV is
# evicted from the device before its next turn comes 4 s later.
KV_BLOCKS=${KVT_KV_BLOCKS:-2048}
HOST=${KVT_HOST:-64MiB}
DISK=${KVT_DISK:-192MiB}
WORKLOAD=(--sessions "${KVT_SESSIONS:-32}" --turns "${KVT_TURNS:-12}" --think-time-ms "${KVT_THINK_MS:-4000}"
  --prefix-len "${KVT_CONTEXT:-8192}" --suffix-len 64 --output-len 8 --rate "${KVT_RATE:-2}" --seed "${KVT_SEED:-7}"
  --warmup 8 --quiet)

collect() {
  local name=$1
  for w in 0 1 2 3; do
    curl -s "localhost:810$w/actuator/prometheus" | grep -E "^flotilla_worker_kvbm_" > "$OUT/$name-worker$w-kvbm.prom" || true
  done
  curl -s localhost:8082/actuator/router > "$OUT/$name-router.json"
  curl -s localhost:8082/actuator/prometheus \
    | grep -E "^flotilla_router_(decisions_by_prefix_tier|onboard_blocks_(count|sum))" > "$OUT/$name-router.prom" || true
}

run() {
  local name=$1
  shift
  bin/flotilla down > /dev/null 2>&1 || true
  rm -rf .flotilla/kvbm
  echo "== $name: up --workers 4 --kv-blocks $KV_BLOCKS $*"
  if ! bin/flotilla up -d --workers 4 --kv-blocks "$KV_BLOCKS" "$@" > "$OUT/$name-up.log" 2>&1; then
    echo "up failed:"; tail -20 "$OUT/$name-up.log"; bin/flotilla down || true; return 1
  fi
  echo "load before: $(uptime)"
  bin/flotilla bench "${WORKLOAD[@]}" --out "$OUT/$name" 2>&1 | tail -2
  echo "load after: $(uptime)"
  collect "$name"
  bin/flotilla down > /dev/null 2>&1
}

for mode in "${MODES[@]}"; do
  case $mode in
    off) run off ;;
    host) run host --kvbm-host "$HOST" ;;
    hostdisk) run hostdisk --kvbm-host "$HOST" --kvbm-disk "$DISK" ;;
    *) echo "unknown mode $mode (off, host, hostdisk)" >&2; exit 2 ;;
  esac
done
rm -rf .flotilla/kvbm
