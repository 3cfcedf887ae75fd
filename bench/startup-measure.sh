#!/usr/bin/env bash
# Usage: bench/startup-measure.sh <worktree> <label> [up args...]  -- one `bin/flotilla up -d`, its time, RSS/PSS/CPU of the cluster's JVMs
# (pids from .flotilla/cluster.properties), then down. Run under: flock /tmp/flotilla-cluster.lock
set -u
WT="$1"; LABEL="$2"; shift 2
cd "$WT"
echo "[$LABEL] $(date +%T) before: $(uptime | sed 's/.*load/load/')"
out=$(bin/flotilla up -d "$@" 2>&1)
echo "$out" | grep -E "Flotilla is up|flotilla:|did not|exited|archive" | sed "s/^/[$LABEL] /"
sleep 2
rss=0; pss=0; cpu=0; lines=""; TCK=$(getconf CLK_TCK)
while IFS='=' read -r k pid; do
  name=${k%.pid}
  [ -r /proc/$pid/smaps_rollup ] || { lines="$lines $name:gone"; continue; }
  r=$(awk '/^Rss:/ {print $2}' /proc/$pid/smaps_rollup); p=$(awk '/^Pss:/ {print $2}' /proc/$pid/smaps_rollup)
  c=$(awk '{print $14+$15}' /proc/$pid/stat)
  lines="$lines $name:$((r/1024))/$((p/1024))/$((c/TCK))s"
  rss=$((rss+r)); pss=$((pss+p)); cpu=$((cpu+c))
done < <(grep -E '^[a-z0-9-]+\.pid=' .flotilla/cluster.properties)
echo "[$LABEL] RSS sum $((rss/1024)) MB, PSS sum $((pss/1024)) MB, CPU sum $((cpu/TCK)) s (name:RSS/PSS MB/CPU:$lines)"
echo "[$LABEL] after: $(uptime | sed 's/.*load/load/')"
bin/flotilla down >/dev/null 2>&1 || bin/flotilla down
