package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.sim.SimEngineConfig;
import io.flotilla.worker.engine.sim.SimulatedEngine;
import io.flotilla.worker.engine.vllm.FakeVllmPublisher;
import io.flotilla.worker.engine.vllm.RecordingKvListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.flotilla.worker.engine.vllm.MsgspecWire.batchArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.batchMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.hashes;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.u64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A worker's engine adapter in front of a fake vLLM (HTTP server + ZMQ KV event publisher): it serves
 * a request, and the engine's KV events, translated, name the blocks with the seq hashes the gateway
 * (BlockHasher) and the simulated engine give the same tokens, through a gap repaired by replay.
 */
class ExternalEngineKvTest {

    private static final KvNamespace NAMESPACE = KvNamespace.of("m", "tok", "bf16/bs4/paged");
    private static final BlockHasher HASHER = new BlockHasher(NAMESPACE, 4);
    private static final int[] PROMPT = {11, 12, 13, 14, 21, 22, 23, 24, 31, 32, 33, 34};
    private static final int[] PROMPT2 = {11, 12, 13, 14, 21, 22, 23, 24, 41, 42, 43, 44};

    // What vLLM would call these blocks: per-process values, some at or above 2^63
    private static final long E0 = 0x9E37_79B9_7F4A_7C15L;
    private static final long E1 = 0x1234_5678_9ABC_DEF0L;
    private static final long E2 = 0xC2B2_AE3D_27D4_EB4FL;
    private static final long E2B = 0x0165_667B_1956_79E3L;

    private final FakeVllmServer http = new FakeVllmServer();
    private final FakeVllmPublisher zmq = new FakeVllmPublisher("kv-events");
    private final OpenAiHttpEngine engine;
    private final RecordingKvListener indexer = new RecordingKvListener();

    ExternalEngineKvTest() throws IOException {
        http.metrics = FakeVllmServer.vllmMetrics(0, 0, 0, 4, 1024);
        engine = OpenAiHttpEngine.start(OpenAiEngineSettings.of(http.url(), "m")
                .withKvEvents(zmq.endpoint(), zmq.replayEndpoint(), "kv-events")
                // the repair is under test, not its speed: a JeroMQ handshake on a loaded machine can outlast 1 s
                .withReplayTimeout(Duration.ofSeconds(10)), HASHER, Clock.systemUTC(),
                EngineListeners.kvEvents(indexer), "vllm-0");
    }

    @AfterEach
    void close() {
        engine.close();
        zmq.close();
        http.close();
    }

    @Test
    void servesARequestAndPublishesTheBlocksUnderFlotillaIdentity() {
        zmq.awaitSubscriber(Duration.ofSeconds(5));

        http.cachedTokens = 8;
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("r1", PROMPT, 3), sink);
        assertThat(sink.await()).isEqualTo(new AwaitingSink.End(FinishReason.FINISH_REASON_LENGTH, 12, 8, 3, null));
        assertThat(sink.tokens()).containsExactly(101, 102, 103);

        // the engine's events for the two prompts; the third batch never reaches the subscriber
        zmq.publish(batchArray(1.0, List.of(storedArray(hashes(E0, E1), null, Arrays.copyOfRange(PROMPT, 0, 8), 4, null, null, false)), null));
        zmq.publishLost(batchMap(1.1, List.of(storedMap(hashes(E2), u64(E1), Arrays.copyOfRange(PROMPT, 8, 12), 4, null, "GPU")), null));
        zmq.publish(batchMap(1.2, List.of(storedMap(hashes(E2B), u64(E1), Arrays.copyOfRange(PROMPT2, 8, 12), 4, null, null)), 0));
        await().atMost(Duration.ofSeconds(30)).until(() -> indexer.position() == 3);

        Set<Long> expected = new HashSet<>(RecordingKvListener.asSet(HASHER.seqHashes(PROMPT)));
        expected.addAll(RecordingKvListener.asSet(HASHER.seqHashes(PROMPT2)));
        assertThat(indexer.violations()).isEmpty();
        assertThat(indexer.resident()).as("the gateway's hashes for the same tokens").isEqualTo(expected);
        assertThat(indexer.resident()).as("the simulated engine's hashes for the same tokens").isEqualTo(simulatedEngineBlocks());
        assertThat(engine.kvEventCounters().gapsRepaired()).isEqualTo(1);
        assertThat(engine.kvEventCounters().untranslatable()).isZero();

        var snapshot = engine.residentBlocks();
        assertThat(snapshot.position()).isEqualTo(3);
        assertThat(RecordingKvListener.asSet(snapshot.seqHashes())).isEqualTo(expected);
    }

    @Test
    void blocksOfAnotherBlockSizeAreCountedNotClaimed() {
        zmq.awaitSubscriber(Duration.ofSeconds(5));
        zmq.publish(batchArray(1.0, List.of(storedArray(hashes(E0), null, Arrays.copyOfRange(PROMPT, 0, 8), 8, null, null, false)), null));
        await().atMost(Duration.ofSeconds(10)).until(() -> engine.kvEventCounters().batches() == 1);
        assertThat(engine.kvEventCounters().blockSizeMismatch()).isEqualTo(1);
        assertThat(engine.residentBlocks().count()).isZero();
    }

    /** The blocks the simulated engine reports after serving the same two prompts. */
    private static Set<Long> simulatedEngineBlocks() {
        RecordingKvListener simIndexer = new RecordingKvListener();
        SimEngineConfig config = SimEngineConfig.builder().blockSize(4).totalBlocks(64).kvBytesPerBlock(0)
                .namespace(NAMESPACE).seed(1).build();
        try (SimulatedEngine sim = SimulatedEngine.startRealTime(config, EngineListeners.kvEvents(simIndexer), "sim")) {
            for (int[] prompt : List.of(PROMPT, PROMPT2)) {
                AwaitingSink sink = new AwaitingSink();
                sim.submit(EngineRequest.of("s" + prompt[8], prompt, 1), sink);
                assertThat(sink.await().reason()).isNotNull();
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> simIndexer.resident().size() >= 4);
        }
        return simIndexer.resident();
    }
}
