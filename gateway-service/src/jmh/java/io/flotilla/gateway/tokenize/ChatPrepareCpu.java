package io.flotilla.gateway.tokenize;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The phases of {@link ChatPrepareBenchmark} in CPU time of the calling thread (not wall time), so that the
 * figure holds on a loaded machine: each phase warmed up, then timed over {@code runs} calls.
 *
 * <pre>
 * java -cp &lt;classpath&gt; io.flotilla.gateway.tokenize.ChatPrepareCpu [runs]
 * </pre>
 */
public final class ChatPrepareCpu {

    public static void main(String[] args) {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        System.out.println("tokens  phase        cpu ms/request");
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
                long start = threads.getCurrentThreadCpuTime();
                for (int i = 0; i < runs; i++) {
                    p.getValue().get();
                }
                double ms = (threads.getCurrentThreadCpuTime() - start) / 1e6 / runs;
                System.out.printf("%6d  %-11s  %8.3f%n", tokens, p.getKey(), ms);
            }
        }
    }
}
