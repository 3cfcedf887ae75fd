package io.flotilla.gateway.tokenize;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The phases of {@link ChatPrepareBenchmark} in CPU time of the calling thread (not wall time), so that the
 * figure holds on a loaded machine: each phase warmed up with {@code runs} calls, then each of {@code runs} calls
 * timed alone (median and 90th percentile). Run it with a pre-touched heap ({@code -Xms2g -Xmx2g
 * -XX:+AlwaysPreTouch}): on this machine a large allocation in fresh heap pages costs milliseconds of system time.
 *
 * <pre>
 * java -cp &lt;classpath&gt; -Xms2g -Xmx2g -XX:+AlwaysPreTouch io.flotilla.gateway.tokenize.ChatPrepareCpu [runs]
 * </pre>
 */
public final class ChatPrepareCpu {

    public static void main(String[] args) {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        System.out.println("tokens  phase        cpu p50   cpu p90   wall p50 (ms per request)");
        for (int tokens : new int[] {8192, 32768, 131072}) {
            ChatPrepareBenchmark b = new ChatPrepareBenchmark();
            b.tokens = tokens;
            b.setup();
            b.seeHistory();
            Map<String, Supplier<Object>> phases = new LinkedHashMap<>();
            phases.put("parse", b::parse);
            phases.put("template", b::template);
            phases.put("tokenize", b::tokenize);
            phases.put("hashChain", b::hashChain);
            phases.put("fullPath", b::fullPath);
            phases.put("seenHistory", b::seenHistory);
            for (Map.Entry<String, Supplier<Object>> p : phases.entrySet()) {
                for (int i = 0; i < runs; i++) {
                    p.getValue().get();
                }
                long[] cpu = new long[runs];
                long[] wall = new long[runs];
                for (int i = 0; i < runs; i++) {
                    long c = threads.getCurrentThreadCpuTime();
                    long w = System.nanoTime();
                    p.getValue().get();
                    cpu[i] = threads.getCurrentThreadCpuTime() - c;
                    wall[i] = System.nanoTime() - w;
                }
                Arrays.sort(cpu);
                Arrays.sort(wall);
                System.out.printf("%6d  %-11s  %8.3f  %8.3f  %8.3f%n", tokens, p.getKey(), cpu[runs / 2] / 1e6,
                        cpu[runs * 9 / 10] / 1e6, wall[runs / 2] / 1e6);
            }
        }
    }
}
