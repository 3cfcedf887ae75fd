package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.LongToDoubleFunction;

/** Seeded request streams for {@link SimCluster}. */
final class Workloads {

    private Workloads() {
    }

    /** Poisson arrival times (ms) in [0, durationMs) with a time-varying rate (requests per second). */
    static List<Long> poisson(long seed, long durationMs, LongToDoubleFunction ratePerSecond) {
        Random rnd = new Random(seed);
        List<Long> out = new ArrayList<>();
        double t = 0;
        while (true) {
            double rate = Math.max(1e-6, ratePerSecond.applyAsDouble((long) t));
            t += -Math.log(1 - rnd.nextDouble()) * 1000.0 / rate;
            if (t >= durationMs) {
                return out;
            }
            out.add((long) t);
        }
    }

    /** Every request shares a {@code systemBlocks}-block system prompt, then has {@code ownBlocks} of its own. */
    static List<SimCluster.Arrival> sharedSystemPrompt(List<Long> times, int systemBlocks, int ownBlocks, int osl,
                                                       int replicas, long seed) {
        long[] system = Fixtures.chain(777, systemBlocks);
        Random rnd = new Random(seed);
        List<SimCluster.Arrival> out = new ArrayList<>();
        for (int i = 0; i < times.size(); i++) {
            long[] hashes = Fixtures.extend(system, 1_000_000L + i, ownBlocks);
            out.add(new SimCluster.Arrival(times.get(i), request("hot-" + i, hashes, osl), rnd.nextInt(replicas)));
        }
        return out;
    }

    /** Unrelated prompts of {@code blocks} blocks each. */
    static List<SimCluster.Arrival> unique(List<Long> times, int blocks, int osl, int replicas, long seed) {
        Random rnd = new Random(seed);
        List<SimCluster.Arrival> out = new ArrayList<>();
        for (int i = 0; i < times.size(); i++) {
            out.add(new SimCluster.Arrival(times.get(i), request("u-" + i, Fixtures.chain(5_000_000L + i, blocks), osl),
                    rnd.nextInt(replicas)));
        }
        return out;
    }

    /**
     * Multi-turn chat: session s starts at s · staggerMs with a {@code firstBlocks}-block prompt; turn t
     * arrives at start + t · turnGapMs and its prompt is the previous prompt plus the previous answer
     * and a new user message ({@code growBlocks} blocks together).
     */
    static List<SimCluster.Arrival> sessions(int sessions, int turns, long staggerMs, long turnGapMs, int firstBlocks,
                                             int growBlocks, int osl) {
        List<SimCluster.Arrival> out = new ArrayList<>();
        for (int s = 0; s < sessions; s++) {
            long[] prompt = Fixtures.chain(9_000_000L + s, firstBlocks);
            for (int t = 0; t < turns; t++) {
                if (t > 0) {
                    prompt = Fixtures.extend(prompt, 31L * s + t, growBlocks);
                }
                out.add(new SimCluster.Arrival(s * staggerMs + t * turnGapMs, request("s" + s + "-t" + t, prompt, osl), 0));
            }
        }
        out.sort((a, b) -> Long.compare(a.atMs(), b.atMs()));
        return out;
    }

    static RoutingRequest request(String id, long[] hashes, int osl) {
        return new RoutingRequest(id, Fixtures.MODEL, hashes.length * Fixtures.BS, Fixtures.BS, hashes, Set.of(), false, osl);
    }
}
