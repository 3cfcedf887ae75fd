package io.flotilla.planner.profile;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link LoadPoint} with {@code concurrency} client threads, each sending its next request when the
 * previous one finished. Prompts are random token ids from a seeded generator, so no two requests of
 * a sweep share a cached prefix.
 */
public final class ClosedLoopRunner implements LoadPoint {

    /** By default token ids are drawn from [MIN_TOKEN, MAX_TOKEN): ordinary vocabulary, clear of special tokens. */
    static final int MIN_TOKEN = 1000;
    static final int MAX_TOKEN = 50_000;

    private final CompletionProbe probe;
    private final SplittableRandom random;
    private final int minToken;
    private final int maxToken;

    public ClosedLoopRunner(CompletionProbe probe, long seed) {
        this(probe, seed, MIN_TOKEN, MAX_TOKEN);
    }

    /** Prompts of ids in [minToken, maxToken), for a model whose vocabulary is smaller than the default range. */
    public ClosedLoopRunner(CompletionProbe probe, long seed, int minToken, int maxToken) {
        if (minToken < 0 || maxToken <= minToken) {
            throw new IllegalArgumentException("token id range [" + minToken + ", " + maxToken + ") is empty");
        }
        this.probe = probe;
        this.random = new SplittableRandom(seed);
        this.minToken = minToken;
        this.maxToken = maxToken;
    }

    @Override
    public List<Measurement> run(int promptTokens, int maxTokens, int concurrency, int requests) {
        List<Measurement> out = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger left = new AtomicInteger(requests);
        ExecutorService pool = Executors.newFixedThreadPool(concurrency);
        try {
            List<Future<?>> clients = new ArrayList<>();
            for (int i = 0; i < concurrency; i++) {
                SplittableRandom mine = split();
                clients.add(pool.submit(() -> {
                    while (left.getAndDecrement() > 0) {
                        out.add(probe.measure(prompt(mine, promptTokens, minToken, maxToken), maxTokens));
                    }
                }));
            }
            for (Future<?> f : clients) {
                f.get();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("a request of the sweep failed: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } finally {
            pool.shutdownNow();
        }
        return List.copyOf(out);
    }

    private synchronized SplittableRandom split() {
        return random.split();
    }

    static int[] prompt(SplittableRandom random, int tokens, int minToken, int maxToken) {
        int[] p = new int[tokens];
        for (int i = 0; i < tokens; i++) {
            p[i] = random.nextInt(minToken, maxToken);
        }
        return p;
    }
}
