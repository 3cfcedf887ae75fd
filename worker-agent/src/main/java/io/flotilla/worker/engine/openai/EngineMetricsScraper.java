package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.metrics.PrometheusText;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads an external engine's load and health, one round per scrape interval: {@code GET} the
 * health path, then the Prometheus path.
 *
 * <p>Health contract: the engine is unhealthy before its first good round; a health answer other
 * than 200 makes it unhealthy at once (vLLM answers 503 when its engine core died); a round that
 * cannot reach the engine or read its metrics counts as failed, and {@code unhealthyAfter}
 * consecutive failed rounds make it unhealthy. One good round makes it healthy again.
 *
 * <p>Also warns, once per value and loudly, when the engine's block size differs from the one
 * Flotilla hashes with: every KV event of that engine is then untranslatable.
 */
public final class EngineMetricsScraper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EngineMetricsScraper.class);

    private final HttpClient http;
    private final URI metricsUri;
    private final URI healthUri;
    private final int blockSize;
    private final int unhealthyAfter;
    private final Duration timeout;
    private ScheduledExecutorService scheduler;
    private volatile Runnable onRecovery = () -> { };
    private volatile Runnable afterGoodRound = () -> { };
    private volatile EngineMetrics latest = EngineMetrics.UNKNOWN;
    private volatile boolean healthy;
    private final AtomicLong failedRoundsTotal = new AtomicLong();
    private final AtomicLong healthFailuresTotal = new AtomicLong();
    private int failedRounds;
    private boolean everGood;
    private int warnedBlockSize;

    /**
     * @param blockSize      the block size Flotilla hashes with
     * @param timeout        limit of each HTTP call
     */
    public EngineMetricsScraper(HttpClient http, URI metricsUri, URI healthUri, int blockSize, int unhealthyAfter,
                                Duration timeout) {
        this.http = http;
        this.metricsUri = metricsUri;
        this.healthUri = healthUri;
        this.blockSize = blockSize;
        this.unhealthyAfter = unhealthyAfter;
        this.timeout = timeout;
    }

    /** Runs {@link #scrapeOnce()} every {@code interval} on its own daemon thread. */
    public synchronized void start(Duration interval, String name) {
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        scheduler.scheduleWithFixedDelay(this::scrapeOnce, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Runs (on the scrape thread) each time the engine turns healthy again after having been
     * healthy and then not: it may be a new engine process.
     */
    public void onRecovery(Runnable action) {
        this.onRecovery = action;
    }

    /** Runs (on the scrape thread) after every round in which the engine answered health and metrics. */
    public void afterGoodRound(Runnable action) {
        this.afterGoodRound = action;
    }

    public EngineMetrics latest() {
        return latest;
    }

    public boolean healthy() {
        return healthy;
    }

    /** One round: health, then metrics. Never throws. */
    public synchronized void scrapeOnce() {
        boolean wasHealthy = healthy;
        String problem = null;
        boolean unhealthyNow = false;
        try {
            HttpResponse<String> health = get(healthUri);
            if (health.statusCode() != 200) {
                problem = "health answered " + health.statusCode();
                unhealthyNow = true;
                healthFailuresTotal.incrementAndGet();
            } else {
                HttpResponse<String> metrics = get(metricsUri);
                if (metrics.statusCode() != 200) {
                    problem = "metrics answered " + metrics.statusCode();
                } else {
                    EngineMetrics m = EngineMetrics.from(PrometheusText.parse(metrics.body()), blockSize);
                    latest = m;
                    checkBlockSize(m.engineBlockSize());
                }
            }
        } catch (IOException | RuntimeException e) {
            problem = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        boolean recovered = false;
        if (problem == null) {
            failedRounds = 0;
            recovered = everGood && !wasHealthy;
            everGood = true;
            healthy = true;
        } else {
            failedRounds++;
            failedRoundsTotal.incrementAndGet();
            if (unhealthyNow || failedRounds >= unhealthyAfter || !everGood) {
                healthy = false;
            }
        }
        if (wasHealthy && !healthy) {
            log.warn("engine at {} is UNHEALTHY: {}", healthUri, problem);
        } else if (!wasHealthy && healthy) {
            log.info("engine at {} is healthy", healthUri);
        }
        if (recovered) {
            onRecovery.run();
        }
        if (problem == null) {
            afterGoodRound.run();
        }
    }

    private HttpResponse<String> get(URI uri) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private void checkBlockSize(int engineBlockSize) {
        if (engineBlockSize > 0 && engineBlockSize != blockSize && engineBlockSize != warnedBlockSize) {
            warnedBlockSize = engineBlockSize;
            log.warn("""

                    ********************************************************************************
                    BLOCK SIZE MISMATCH: the engine at {} uses block_size={}, but this worker hashes
                    KV blocks with block size {}. Every KV event of this engine will be rejected
                    (counted as blockSizeMismatch) and routers will see no cache on this worker.
                    Start the engine with --block-size {} or set flotilla.worker.sim.block-size={}.
                    ********************************************************************************""",
                    metricsUri, engineBlockSize, blockSize, blockSize, engineBlockSize);
        }
    }

    /** Rounds that failed for any reason (unreachable, health not 200, metrics unreadable), since start. */
    public long failedRoundsTotal() {
        return failedRoundsTotal.get();
    }

    /** Health checks the engine answered with a status other than 200, since start. */
    public long healthFailuresTotal() {
        return healthFailuresTotal.get();
    }

    /** The last block size the engine reported that differs from Flotilla's, or 0. */
    public synchronized int mismatchedBlockSize() {
        return latest.engineBlockSize() > 0 && latest.engineBlockSize() != blockSize ? latest.engineBlockSize() : 0;
    }

    @Override
    public synchronized void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
    }
}
