# bench/fleet-scale.sh: p50/p90/p99 upper bounds of a Micrometer histogram between two Prometheus scrapes
import sys, re, collections
# usage: p99.py before.prom after.prom metric_base [label_filter]
def buckets(path, base, filt):
    out = collections.defaultdict(float)
    for line in open(path):
        if not line.startswith(base + "_bucket"): continue
        if filt and filt not in line: continue
        le = float(re.search(r'le="([^"]+)"', line).group(1).replace("+Inf", "inf"))
        out[le] += float(line.rsplit(" ", 1)[1])
    return out
a = buckets(sys.argv[1], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
b = buckets(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
d = sorted((le, b[le] - a.get(le, 0)) for le in b)
if not d or d[-1][1] == 0:
    print(f"{sys.argv[3]} n=0 (no samples between the scrapes)")
    sys.exit(0)
total = d[-1][1]
res = {}
for q in (0.5, 0.9, 0.99):
    for le, c in d:
        if c >= q * total:
            res[q] = le; break
print(f"{sys.argv[3]} n={total:.0f} p50<={res[0.5]*1000:.3f}ms p90<={res[0.9]*1000:.3f}ms p99<={res[0.99]*1000:.3f}ms")
