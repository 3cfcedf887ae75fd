package io.flotilla.worker.engine.openai;

import io.flotilla.worker.settings.WorkerProperties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code flotilla.worker.http.*} keys ENGINES.md documents bind, with their defaults. */
class HttpEnginePropertiesTest {

    private static WorkerProperties bind(Map<String, String> props) {
        return new Binder(new MapConfigurationPropertySource(props)).bindOrCreate("flotilla.worker", WorkerProperties.class);
    }

    @Test
    void documentedKeysBind() {
        WorkerProperties p = bind(Map.of(
                "flotilla.worker.engine", "openai-http",
                "flotilla.worker.http.url", "http://vllm:8000",
                "flotilla.worker.http.served-model", "meta-llama/Llama-3.1-8B-Instruct",
                "flotilla.worker.http.kv-events", "tcp://vllm:5557",
                "flotilla.worker.http.kv-events-replay", "tcp://vllm:5558",
                "flotilla.worker.http.kv-events-topic", "kv-events",
                "flotilla.worker.http.max-in-flight", "256"));
        assertThat(p.engine()).isEqualTo("openai-http");
        WorkerProperties.Http http = p.http();
        assertThat(http.url()).isEqualTo("http://vllm:8000");
        assertThat(http.servedModel()).isEqualTo("meta-llama/Llama-3.1-8B-Instruct");
        assertThat(http.kvEvents()).isEqualTo("tcp://vllm:5557");
        assertThat(http.kvEventsReplay()).isEqualTo("tcp://vllm:5558");
        assertThat(http.kvEventsTopic()).isEqualTo("kv-events");
        assertThat(http.maxInFlight()).isEqualTo(256);
    }

    @Test
    void defaults() {
        WorkerProperties.Http http = bind(Map.of()).http();
        assertThat(http.url()).isEqualTo("http://localhost:8000");
        assertThat(http.servedModel()).isNull();
        assertThat(http.kvEvents()).isEmpty();
        assertThat(http.kvEventsReplay()).isEmpty();
        assertThat(http.metricsPath()).isEqualTo("/metrics");
        assertThat(http.healthPath()).isEqualTo("/health");
        assertThat(bind(Map.of()).clearCachePath()).isEqualTo("/reset_prefix_cache");
        assertThat(bind(Map.of("flotilla.worker.engine", "sglang")).clearCachePath()).isEqualTo("/flush_cache");
        assertThat(http.scrapeIntervalMs()).isEqualTo(250);
        assertThat(http.unhealthyAfter()).isEqualTo(4);
        assertThat(http.requestTimeoutMs()).isEqualTo(60_000);
        assertThat(http.replayTimeoutMs()).isEqualTo(1000);
        assertThat(http.maxInFlight()).isEqualTo(1024);
        assertThat(http.returnTokenIds()).isTrue();
        assertThat(http.embeddingDimensions()).as("a vLLM worker embeds only when told its pooling model").isZero();
        assertThat(http.embeddingTruncatable()).isFalse();
        assertThat(bind(Map.of()).sim().embeddingDimensions()).isEqualTo(256);
    }
}
