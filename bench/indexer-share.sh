#!/usr/bin/env bash
# Usage: bench/indexer-share.sh SPEEDUP OUTDIR [HOST_TIER]  -- the share of KV decisions priced from the indexer's
# answer (`kv`) rather than the router's approximate index (`kv_approx`) on 4 simulated workers under a trace, with
# KV tiers when HOST_TIER (e.g. 64MiB) is given: `up`, the trace at SPEEDUP, the router's decision counts, each
# worker's KV tier counters, the indexer's apply lag, then down. TRACE overrides the trace (default: the shared
# Mooncake sample). Run from the repository root under: flock /tmp/flotilla-cluster.lock
# (docs/benchmarks.md "The indexer call under load").
S=$1; OUT=$2; TIER=$3; mkdir -p "$OUT"
TRACE=${TRACE:-../shared/workloads/mooncake-synthetic-300.jsonl}
export FLOTILLA_WORKER_SIM_TOTAL_BLOCKS=65536
if [ -n "$TIER" ]; then
  export FLOTILLA_WORKER_SIM_KV_BYTES_PER_BLOCK=512   # tiers move payloads; 65,536 default-size blocks do not fit
  bin/flotilla up -d --workers 4 --kvbm-host "$TIER" 2>&1 | tail -1
else
  export FLOTILLA_WORKER_SIM_KV_BYTES_PER_BLOCK=0
  bin/flotilla up -d --workers 4 2>&1 | tail -1
fi
sleep 5
bin/flotilla bench --trace "$TRACE" --speedup "$S" --out "$OUT/b" 2>&1 | grep "bench run" | tail -1
curl -s localhost:8082/actuator/router > "$OUT/router.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); k=d['decisions']; print('kv', k['kv'], 'kv_approx', k['kv_approx'], 'with the indexer answer %.1f %%' % (100.0*k['kv']/max(1,k['kv']+k['kv_approx'])))" "$OUT/router.json"
for w in 0 1 2 3; do curl -s localhost:$((8100+w))/actuator/prometheus | grep -E '^flotilla_worker_kvbm_(offloaded|onboarded)_blocks_total'; done > "$OUT/kvbm.txt"
awk '{split($1,a,"worker=\""); split(a[2],b,"\""); split($1,c,"{"); print b[1], c[1], $2}' "$OUT/kvbm.txt"
curl -s localhost:8083/actuator/prometheus > "$OUT/ix.prom"
python3 bench/fleet/p99.py /dev/null "$OUT/ix.prom" flotilla_indexer_apply_lag_seconds
bin/flotilla down | tail -1
