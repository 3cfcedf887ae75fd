package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.hash.KvScope;
import io.flotilla.worker.engine.AdapterStatus;
import io.flotilla.worker.engine.AdapterSupport;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.InvalidRequestException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** LoRA adapters through vLLM's API, against the wire-faithful fake server: discovery, load on demand, LRU unload. */
class LoraAdaptersTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("m", "tok", "bf16/bs16/paged"), 16);

    private final FakeVllmServer server = new FakeVllmServer();
    private OpenAiHttpEngine engine;
    private final java.util.concurrent.atomic.AtomicInteger changes = new java.util.concurrent.atomic.AtomicInteger();

    LoraAdaptersTest() throws IOException {
    }

    private OpenAiHttpEngine start(int maxLoaded) {
        engine = OpenAiHttpEngine.start(OpenAiEngineSettings.of(server.url(), "served-model"),
                new LoraSettings(Map.of("sql", "/loras/sql", "chat", "/loras/chat"), maxLoaded, 700), HASHER,
                Clock.systemUTC(), EngineListeners.NONE.withAdaptersChanged(changes::incrementAndGet), "lora-engine");
        return engine;
    }

    @AfterEach
    void close() {
        if (engine != null) {
            engine.close();
        }
        server.close();
    }

    private void run(String id, KvScope scope) {
        AwaitingSink sink = new AwaitingSink();
        engine.submit(new EngineRequest("r-" + id, new int[]{1, 2, 3}, 2, null, false, 0.0, null, null, scope), sink);
        sink.await();
    }

    @Test
    void aConfiguredAdapterIsLoadedOnFirstUseAndNamedAsTheModel() {
        start(2);
        assertThat(engine.feature(AdapterSupport.class).orElseThrow().adapterStatus().available()).containsExactly("chat", "sql");
        assertThat(engine.feature(AdapterSupport.class).orElseThrow().adapterStatus().loadMsSource()).isEqualTo(AdapterStatus.CONFIGURED);
        server.loraLoadDelayMs = 30;
        run("1", KvScope.lora("sql"));
        assertThat(server.loraCalls).containsExactly("+sql");
        assertThat(server.loras).containsEntry("sql", "/loras/sql");
        assertThat(server.lastRequest().path("model").asString()).isEqualTo("sql");
        AdapterStatus status = engine.feature(AdapterSupport.class).orElseThrow().adapterStatus();
        assertThat(status.loaded()).containsExactly("sql");
        assertThat(status.loads()).isEqualTo(1);
        assertThat(status.loadMsSource()).isEqualTo(AdapterStatus.MEASURED);
        assertThat(status.loadMs()).isGreaterThanOrEqualTo(30);
        assertThat(changes.get()).as("the worker is told at once").isPositive();

        run("2", KvScope.lora("sql"));
        assertThat(server.loraCalls).as("loaded once").containsExactly("+sql");
        run("3", KvScope.SHARED);
        assertThat(server.lastRequest().path("model").asString()).isEqualTo("served-model");
    }

    @Test
    void pastMaxLoadedTheLeastRecentlyUsedIdleAdapterIsUnloadedFirst() {
        start(1);
        run("1", KvScope.lora("sql"));
        run("2", KvScope.lora("chat"));
        assertThat(server.loraCalls).containsExactly("+sql", "-sql", "+chat");
        // The fake records a call when it arrives; the engine marks the adapter unloaded when the answer does.
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.feature(AdapterSupport.class).orElseThrow().adapterStatus().loaded().equals(java.util.List.of("chat")));
        AdapterStatus status = engine.feature(AdapterSupport.class).orElseThrow().adapterStatus();
        assertThat(status.loads()).isEqualTo(2);
        assertThat(status.unloads()).isEqualTo(1);
    }

    @Test
    void adaptersTheEngineListsAreDiscoveredAndAnUnknownOneIsRefused() {
        server.loras.put("disc", "/models/disc");
        start(4);
        await().atMost(Duration.ofSeconds(5)).until(() -> engine.feature(AdapterSupport.class).orElseThrow().adapterStatus().loaded().contains("disc"));
        assertThat(engine.feature(AdapterSupport.class).orElseThrow().adapterStatus().available()).contains("disc", "sql", "chat");
        run("1", KvScope.lora("disc"));
        assertThat(server.loraCalls).as("already loaded by the engine").isEmpty();
        assertThat(server.lastRequest().path("model").asString()).isEqualTo("disc");
        assertThatThrownBy(() -> engine.submit(new EngineRequest("r-x", new int[]{1}, 1, null, false, 0.0, null, null,
                KvScope.lora("nope")), new AwaitingSink())).isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("unknown LoRA adapter 'nope'");
    }

    @Test
    void aSaltedRequestCarriesItsSaltAsCacheSalt() {
        start(4);
        run("1", new KvScope("", "fs1:0123456789abcdef0123456789abcdef", 0));
        assertThat(server.lastRequest().path("cache_salt").asString()).isEqualTo("fs1:0123456789abcdef0123456789abcdef");
        run("2", KvScope.SHARED);
        assertThat(server.lastRequest().has("cache_salt")).isFalse();
    }
}
