package io.flotilla.worker.engine.openai;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Health and load from a fake engine's endpoints, one scrape round at a time (no timers). */
class EngineMetricsScraperTest {

    private final FakeVllmServer engine = new FakeVllmServer();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    EngineMetricsScraperTest() throws IOException {
    }

    @AfterEach
    void close() {
        engine.close();
    }

    private EngineMetricsScraper scraper(String url, int unhealthyAfter) {
        return new EngineMetricsScraper(http, URI.create(url + "/metrics"), URI.create(url + "/health"), 16,
                unhealthyAfter, Duration.ofSeconds(2));
    }

    @Test
    void unhealthyUntilTheFirstGoodRoundThenLoadFromMetrics() {
        EngineMetricsScraper s = scraper(engine.url(), 3);
        assertThat(s.healthy()).isFalse();
        s.scrapeOnce();
        assertThat(s.healthy()).isTrue();
        assertThat(s.latest()).isEqualTo(new EngineMetrics(3, 2, 0.25, 2048, 16));
        assertThat(s.mismatchedBlockSize()).isZero();
    }

    @Test
    void aHealthEndpointAnsweringOtherThan200IsUnhealthyAtOnce() {
        EngineMetricsScraper s = scraper(engine.url(), 3);
        s.scrapeOnce();
        engine.healthStatus = 503;
        s.scrapeOnce();
        assertThat(s.healthy()).isFalse();
        engine.healthStatus = 200;
        s.scrapeOnce();
        assertThat(s.healthy()).isTrue();
    }

    @Test
    void anUnreachableEngineIsUnhealthyAfterNFailedRounds() {
        EngineMetricsScraper s = scraper(engine.url(), 3);
        s.scrapeOnce();
        engine.close();
        s.scrapeOnce();
        s.scrapeOnce();
        assertThat(s.healthy()).as("two failed rounds are tolerated").isTrue();
        s.scrapeOnce();
        assertThat(s.healthy()).isFalse();
        assertThat(s.latest().running()).as("last known load is kept").isEqualTo(3);
    }

    @Test
    void recoveryAfterAnOutageIsReportedOnce() {
        EngineMetricsScraper s = scraper(engine.url(), 1);
        java.util.concurrent.atomic.AtomicInteger recoveries = new java.util.concurrent.atomic.AtomicInteger();
        s.onRecovery(recoveries::incrementAndGet);
        s.scrapeOnce();
        assertThat(recoveries.get()).as("the first good round is not a recovery").isZero();
        engine.healthStatus = 500;
        s.scrapeOnce();
        engine.healthStatus = 200;
        s.scrapeOnce();
        s.scrapeOnce();
        assertThat(recoveries.get()).isEqualTo(1);
    }

    @Test
    void unreadableMetricsCountAsFailedRounds() {
        EngineMetricsScraper s = new EngineMetricsScraper(http, URI.create(engine.url() + "/nope"),
                URI.create(engine.url() + "/health"), 16, 1, Duration.ofSeconds(2));
        s.scrapeOnce();
        assertThat(s.healthy()).isFalse();
    }

    @Test
    void aDifferentEngineBlockSizeIsReported() {
        engine.metrics = FakeVllmServer.vllmMetrics(0, 0, 0, 32, 100);
        EngineMetricsScraper s = scraper(engine.url(), 3);
        s.scrapeOnce();
        assertThat(s.mismatchedBlockSize()).isEqualTo(32);
        assertThat(s.healthy()).as("a mismatch is loud but does not stop serving").isTrue();
    }
}
