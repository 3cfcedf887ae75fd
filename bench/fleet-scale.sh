#!/usr/bin/env bash
# Usage: bench/fleet-scale.sh N OUTDIR  -- `bin/flotilla up --fleet N`, RSS and threads of its JVMs, membership traffic
# on Kafka (end offsets and partition sizes 30 s apart), a short bench with Route and decision percentiles from the
# Prometheus buckets (and the indexer's apply lag), the SIGKILL of the last fleet JVM (N > 128) timed until
# its workers are out of routing (health watch) and out of membership (lease), then down.
# Run from the repository root under: flock /tmp/flotilla-cluster.lock  (docs/benchmarks.md "Scale: a fleet on one machine")
N=$1; OUT=$2; mkdir -p $OUT
CP="local-cluster/target/lib/*"
offsets() { java -cp "$CP" bench/fleet/Offsets.java 2>/dev/null; }
echo "== up --fleet $N"; date -u
/usr/bin/time -f "up wall %e s" bin/flotilla up --fleet $N --sim-speedup 50 -d --timeout 900 2>&1 | grep -v "^\s*$" | tail -4
sleep 20
echo "== threads and RSS"
for p in $(pgrep -f 'flotilla.worker.instances'); do echo "fleet pid $p rss_kib $(ps -o rss= -p $p) threads $(ls /proc/$p/task | wc -l) $(tr '\0' ' ' < /proc/$p/cmdline | grep -o 'instances=[0-9]*')"; done
for m in router-service gateway-service kv-indexer-service planner-service; do p=$(pgrep -f "$m-exec.jar" | head -1); echo "$m pid $p rss_kib $(ps -o rss= -p $p)"; done
for u in 8082 8081 8083; do echo "heap used :$u $(curl -s "localhost:$u/actuator/metrics/jvm.memory.used?tag=area:heap" | grep -o '"value":[0-9.E]*')"; done
echo "== idle CPU over 10 s (% of one core)"
top -b -n 2 -d 10 | awk '/^top/{n++} n==2 && $12=="java" {print $1, $9}' > $OUT/top-idle.txt
cpu() { awk -v p="$1" '$1==p {print $2}' $OUT/top-idle.txt; }
fleet=0; for p in $(pgrep -f 'flotilla.worker.instances'); do fleet=$(echo "$fleet + 0$(cpu $p)" | bc); done
echo "fleet JVMs $fleet, broker $(cpu $(pgrep -f kafka.Kafka | head -1)), router $(cpu $(pgrep -f router-service-exec.jar | head -1)), indexer $(cpu $(pgrep -f kv-indexer-service-exec.jar | head -1)), planner $(cpu $(pgrep -f planner-service-exec.jar | head -1)), gateway $(cpu $(pgrep -f gateway-service-exec.jar | head -1))"
echo "== Kafka membership traffic over 30 s"
offsets > $OUT/off0; d0=$(du -sb $(find .flotilla/kafka -type d \( -name 'flotilla.workers-*' -o -name 'flotilla.worker-load-*' \)) | awk '{s+=$1} END {print s}'); t0=$(date +%s.%N)
sleep 30
offsets > $OUT/off1; d1=$(du -sb $(find .flotilla/kafka -type d \( -name 'flotilla.workers-*' -o -name 'flotilla.worker-load-*' \)) | awk '{s+=$1} END {print s}'); t1=$(date +%s.%N)
paste $OUT/off0 $OUT/off1 | awk -v dt=$(echo "$t1 - $t0" | bc) -v n=$N '{r=($4-$2)/dt; printf "%s %.0f records/s, %.2f per worker\n", $1, r, r/n}'
echo "membership+load log bytes/s $(echo "($d1 - $d0) / ($t1 - $t0)" | bc)"
echo "== bench"
curl -s localhost:8081/actuator/prometheus > $OUT/gw0.prom; curl -s localhost:8082/actuator/prometheus > $OUT/rt0.prom
curl -s localhost:8083/actuator/prometheus > $OUT/ix0.prom
bin/flotilla bench --groups 16 --prompts-per-group 8 --prefix-len 512 --suffix-len 64 --output-len 16 --rate 5 --quiet --out $OUT/bench 2>&1 | tail -15
curl -s localhost:8081/actuator/prometheus > $OUT/gw1.prom; curl -s localhost:8082/actuator/prometheus > $OUT/rt1.prom
curl -s localhost:8083/actuator/prometheus > $OUT/ix1.prom
python3 bench/fleet/p99.py $OUT/gw0.prom $OUT/gw1.prom flotilla_gateway_route_seconds 'outcome="answered"'
python3 bench/fleet/p99.py $OUT/rt0.prom $OUT/rt1.prom flotilla_router_decision_seconds
python3 bench/fleet/p99.py $OUT/ix0.prom $OUT/ix1.prom flotilla_indexer_apply_lag_seconds
if [ "$N" -gt 128 ]; then
  echo "== SIGKILL the last fleet JVM"
  victim=$(pgrep -f 'flotilla.worker.instances' | tail -1)
  gauge() { curl -s localhost:8082/actuator/metrics/$1 | grep -o '"value":[0-9.E]*' | cut -d: -f2; }
  before=$(gauge flotilla.router.workers); routable=$(gauge flotilla.router.workers.routable)
  k=$(tr '\0' ' ' < /proc/$victim/cmdline | grep -o 'instances=[0-9]*' | cut -d= -f2)
  t0=$(date +%s%N); kill -9 $victim; out=""
  while true; do
    if [ -z "$out" ] && [ "$(echo "$(gauge flotilla.router.workers.routable) <= $routable - $k" | bc)" = 1 ]; then
      out=$(( ($(date +%s%N) - t0) / 1000000 ))
    fi
    v=$(gauge flotilla.router.workers)
    if [ "$(echo "$v <= $before - $k" | bc)" = 1 ]; then break; fi
    sleep 0.05
  done
  echo "routable $routable: $k workers out of routing $out ms after SIGKILL (health watch $(gauge flotilla.router.watch.lost) lost)"
  echo "workers $before -> $v: $k workers out of the router's membership $(( ($(date +%s%N) - t0) / 1000000 )) ms after SIGKILL (lease)"
fi
bin/flotilla down 2>&1 | tail -1
