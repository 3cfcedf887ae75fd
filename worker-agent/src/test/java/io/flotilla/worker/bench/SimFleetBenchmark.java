package io.flotilla.worker.bench;

import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.engine.sim.ManualClock;
import io.flotilla.worker.engine.sim.SimEngineConfig;
import io.flotilla.worker.engine.sim.SimulatedEngine;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Throughput of many simulated engines in one JVM, as fast as the CPU allows (simulated clocks, no
 * waiting): simulated steps per second and KV block events per second, and heap per engine.
 *
 * <pre>
 * ./mvnw -q -pl worker-agent test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.flotilla.worker.bench.SimFleetBenchmark -Dexec.args="64 16384 20"
 * </pre>
 * Arguments: engines, KV bytes per block (0 disables payloads), seconds to run. The workload per
 * engine keeps 32 requests in flight: one of 8 shared 1,024-token system prompts plus a unique
 * 256-token suffix, 64 output tokens, so blocks are reused, filled and evicted.
 */
public final class SimFleetBenchmark {

    private static final int IN_FLIGHT = 32;

    public static void main(String[] args) throws Exception {
        int engines = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        int kvBytes = args.length > 1 ? Integer.parseInt(args[1]) : 16384;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        int threads = Math.max(1, Runtime.getRuntime().availableProcessors());

        long heapBefore = usedHeapAfterGc();
        List<Lane> lanes = new ArrayList<>();
        LongAdder blockEvents = new LongAdder();
        LongAdder batches = new LongAdder();
        for (int i = 0; i < engines; i++) {
            lanes.add(new Lane(i, kvBytes, blockEvents, batches));
        }
        long heapEngines = usedHeapAfterGc() - heapBefore;

        List<Thread> drivers = new ArrayList<>();
        LongAdder steps = new LongAdder();
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int first = t;
            Thread d = new Thread(() -> {
                try {
                    while (System.nanoTime() < deadline) {
                        for (int i = first; i < lanes.size(); i += threads) {
                            if (lanes.get(i).step()) {
                                steps.increment();
                            }
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            d.start();
            drivers.add(d);
        }
        for (Thread d : drivers) {
            d.join();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        long heapLoaded = usedHeapAfterGc() - heapBefore;
        long finished = lanes.stream().mapToLong(l -> l.finished.get()).sum();
        System.out.printf("engines=%d kvBytesPerBlock=%d threads=%d seconds=%.1f%n", engines, kvBytes, threads, elapsed);
        System.out.printf("steps/s=%.0f  kv block events/s=%.0f  kv batches/s=%.0f  requests/s=%.0f%n",
                steps.sum() / elapsed, blockEvents.sum() / elapsed, batches.sum() / elapsed, finished / elapsed);
        System.out.printf("heap per engine: idle %.0f KiB, loaded %.0f KiB (after GC)%n",
                heapEngines / 1024.0 / engines, heapLoaded / 1024.0 / engines);
        System.out.printf("direct memory in use: %.0f MiB%n", directMemoryUsed() / 1048576.0);
        lanes.forEach(l -> l.engine.close());
    }

    /** One engine with its own clock and a closed-loop client. */
    private static final class Lane {
        final SimulatedEngine engine;
        final AtomicInteger finished = new AtomicInteger();
        final SplittableRandom random;
        final int id;
        int submitted;
        int inFlight;

        Lane(int id, int kvBytes, LongAdder blockEvents, LongAdder batches) {
            this.id = id;
            this.random = new SplittableRandom(id);
            ManualClock clock = new ManualClock();
            engine = new SimulatedEngine(SimEngineConfig.builder()
                    .kvBytesPerBlock(kvBytes)
                    .seed(id)
                    .namespace(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"))
                    .build(), clock, clock, EngineListeners.kvEvents((position, events) -> {
                        batches.increment();
                        for (KvEvent e : events) {
                            blockEvents.add(switch (e.getEventCase()) {
                                case STORED -> e.getStored().getBlocksCount();
                                case REMOVED -> e.getRemoved().getSeqHashesCount();
                                default -> 1;
                            });
                        }
                    }));
        }

        boolean step() throws InterruptedException {
            while (inFlight < IN_FLIGHT) {
                submit();
            }
            return engine.runOnce();
        }

        private void submit() {
            int group = random.nextInt(8);
            int[] prompt = new int[1024 + 256];
            for (int i = 0; i < 1024; i++) {
                prompt[i] = 1 + group * 5000 + i;
            }
            for (int i = 1024; i < prompt.length; i++) {
                prompt[i] = random.nextInt(100_000);
            }
            inFlight++;
            engine.submit(EngineRequest.of("e" + id + "-r" + submitted++, prompt, 64).withStop(new int[0], true),
                    new TokenSink() {
                        @Override
                        public void onTokens(int[] tokens) {
                        }

                        @Override
                        public void onFinish(FinishReason reason, int p, int c, int n) {
                            inFlight--;
                            finished.incrementAndGet();
                        }

                        @Override
                        public void onError(Throwable error) {
                            inFlight--;
                        }
                    });
        }
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static long directMemoryUsed() {
        return ManagementFactory.getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).mapToLong(java.lang.management.BufferPoolMXBean::getMemoryUsed).sum();
    }
}
