/**
 * The router's pure policy: no Spring, no Kafka, no gRPC, no clock reads. The state decisions leave
 * behind (bookings, the approximate index, replica sync) is {@link io.flotilla.router.booking}. Everything time-dependent
 * takes an {@link java.time.Instant} from the caller; everything random takes an injected generator.
 *
 * <h2>Request path (what the shell calls)</h2>
 * <pre>
 * RoutingPolicy policy = new RoutingPolicy(config, new java.util.Random(seed));
 * BookingLedger ledger = BookingLedger.create(routerId, config);   // routerId unique per process start
 *
 * Route:           r = ProtoMapping.request(req)                     // io.flotilla.router.wire: the core imports no protobuf
 *                  matches = policy.requires().contains(KV_OVERLAP) ? indexer answer : null   // null = failed/slow
 *                  s = ledger.snapshot(workers, r, policy.requires(), matches, now)
 *                  d = policy.decide(r, s)                 // pure
 *                  ledger.book(r, d, now).ifPresent(publish)   // the only booking
 *                  reply ProtoMapping.decision(d) (NO_WORKER → UNAVAILABLE); count decisions by d.modeUsed().metricTag()
 * MarkPrefillDone: publish(ledger.prefillDone(id, now))
 * Release:         publish(ledger.release(id, now))
 * router-sync in:  SequenceChange.fromProto(msg).ifPresent(c -> ledger.applyRemote(c, now))
 * worker-load in:  update the worker's WorkerView (ProtoMapping.workerView), then ledger.loadReported(workerId)
 * worker gone:     ledger.forgetWorker(workerId) (STOPPED, lease expired, new epoch)
 * every few s:     ledger.expire(now)
 * </pre>
 *
 * <h2>Cost (modes kv and load)</h2>
 * For request r (prompt P tokens, block size bs) and worker i, in milliseconds when every candidate
 * advertises timing and capacity, else in blocks:
 * <pre>
 * cost(r,i) = w_prefill · (prefill_i + adapter_i) + w_decode · decode_i + w_queue · queue_i
 * adapter_i = 0 when r's LoRA adapter is loaded on i (or r is on the base model), else load_ms_i   (blocks: ⌈P/bs⌉)
 *
 * H  = min(overlap_i · bs, P)  (kv; 0 in load mode or without overlap data);  N = P − H
 * Q  = merge(report.waitingPrefillTokens, booked prefill tokens);  n = merge(report.waiting, booked prefills) ≥ 1
 * B  = merge(report.activeKvBlocks, booked decode blocks);         W = report.waiting
 * merge (DELTA) = max(0, report + booked − booked when the report arrived)
 *
 *              milliseconds                                      blocks
 * prefill_i    (a·Q²/n + b·Q + c·n)/s + prefill_ms(N)             (Q + N) / bs
 * decode_i     decode_ms((B + ⌈(P + osl)/bs⌉ − ⌊H/bs⌋) / cap)      B
 * queue_i      W · decode_ms(B / cap)                              W
 *
 * prefill_ms(t) = (a·t² + b·t + c)/s,  decode_ms(u) = (d2·u² + d1·u + d0)/s,  s = speedup
 * </pre>
 * Temperature 0 picks the minimum (ties: least loaded Q + B, then id); T &gt; 0 samples
 * p_i ∝ exp(−((cost_i − min)/(max − min)) / T).
 *
 * <h2>Filters, busy, pairing</h2>
 * Workers must be READY, routable, of the request's model and block size, able to serve its LoRA
 * adapter, tenant-isolating when it is salted, and not excluded
 * (the standard filters of {@link io.flotilla.router.core.FilterChain}). Busy: Q &gt; prefill limit or B &gt; decode limit
 * ({@link io.flotilla.router.core.BusyDetector}); busy workers are skipped, all busy → BUSY with a
 * retry-after hint. Pairing ({@link io.flotilla.router.core.RoutingPolicy}): decode pool = DECODE
 * workers, else aggregated; a PREFILL worker is named when the uncached prompt on the best one exceeds
 * {@code disagg.minUncachedTokens} and the prefill pool is not all busy.
 */
package io.flotilla.router.core;
