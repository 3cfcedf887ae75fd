package io.flotilla.worker.engine.vllm;

import io.flotilla.protocol.v1.KvEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;

import static io.flotilla.worker.engine.vllm.KvEventTranslatorTest.HASHER;
import static io.flotilla.worker.engine.vllm.KvEventTranslatorTest.PROMPT;
import static io.flotilla.worker.engine.vllm.KvEventTranslatorTest.SEQ;
import static io.flotilla.worker.engine.vllm.KvEventTranslatorTest.slice;
import static io.flotilla.worker.engine.vllm.MsgspecWire.batchArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.batchMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.hashes;
import static io.flotilla.worker.engine.vllm.MsgspecWire.removedArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.removedMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.u64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The subscriber against a wire-faithful vLLM publisher: real ZMQ sockets, msgpack payloads, gaps and replay. */
class VllmKvEventSubscriberTest {

    private static final long H0 = 0xF1F1_0000_0000_0000L; // engine hashes >= 2^63
    private static final long H1 = 0xF1F1_0000_0000_0001L;
    private static final long H2 = 0xF1F1_0000_0000_0002L;
    private static final long OTHER = 0x0000_0000_0000_0777L;
    private static final int[] OTHER_TOKENS = {91, 92, 93, 94};

    private final FakeVllmPublisher engine = new FakeVllmPublisher("kv-events");
    private final KvEventCounters counters = new KvEventCounters();
    private final RecordingKvListener indexer = new RecordingKvListener();
    private final VllmKvEventFeed feed = new VllmKvEventFeed(HASHER, counters, 1000, indexer);
    private VllmKvEventSubscriber subscriber;

    private void subscribe(boolean withReplay) {
        subscriber = new VllmKvEventSubscriber(engine.endpoint(), withReplay ? engine.replayEndpoint() : null, "kv-events",
                Duration.ofSeconds(2), feed, "test-kv-events");
        subscriber.start();
        engine.awaitSubscriber(Duration.ofSeconds(5));
    }

    @AfterEach
    void close() {
        if (subscriber != null) {
            subscriber.close();
        }
        engine.close();
    }

    private static byte[] storeFirstTwo() {
        return batchArray(1.0, List.of(storedArray(hashes(H0, H1), null, slice(PROMPT, 0, 2), 4, null, null, false)), null);
    }

    private static byte[] storeThird() {
        return batchMap(2.0, List.of(storedMap(hashes(H2), u64(H1), slice(PROMPT, 2, 3), 4, null, null)), null);
    }

    private static byte[] storeOther() {
        return batchArray(3.0, List.of(storedArray(hashes(OTHER), null, OTHER_TOKENS, 4, null, "GPU", true)), 0);
    }

    private void awaitSubscriberAt(long seq) {
        await().atMost(Duration.ofSeconds(10)).until(() -> subscriber.expectedSeq() == seq + 1);
    }

    @Test
    void bothWireFormsTranslateToFlotillaSeqHashes() {
        subscribe(true);
        engine.publish(storeFirstTwo());
        engine.publish(storeThird());
        engine.publish(batchMap(4.0, List.of(removedMap(hashes(H2), null)), null));
        engine.publish(batchArray(5.0, List.of(removedArray(hashes(H1), "GPU")), null));
        awaitSubscriberAt(3);

        assertThat(indexer.violations()).isEmpty();
        assertThat(indexer.storedInOrder()).containsExactly(SEQ[0], SEQ[1], SEQ[2]);
        assertThat(indexer.resident()).containsExactly(SEQ[0]);
        var snapshot = feed.residentBlocks();
        assertThat(snapshot.position()).isEqualTo(indexer.position()).isEqualTo(4);
        assertThat(RecordingKvListener.asSet(snapshot.seqHashes())).isEqualTo(indexer.resident());
        assertThat(counters.untranslatable()).isZero();
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aGapIsFilledFromTheReplaySocket(boolean replayWithTopic) {
        engine.replayWithTopic(replayWithTopic);
        subscribe(true);
        engine.publish(storeFirstTwo());
        engine.publishLost(storeThird());
        engine.publishLost(batchMap(4.0, List.of(removedMap(hashes(H0), null)), null));
        engine.publish(storeOther());
        awaitSubscriberAt(3);

        assertThat(counters.gapsRepaired()).isEqualTo(1);
        assertThat(engine.replayRequests()).isEqualTo(1);
        assertThat(indexer.violations()).isEmpty();
        assertThat(indexer.storedInOrder()).containsExactly(SEQ[0], SEQ[1], SEQ[2], HASHER.seqHashes(OTHER_TOKENS)[0]);
        assertThat(indexer.resident()).containsExactlyInAnyOrder(SEQ[1], SEQ[2], HASHER.seqHashes(OTHER_TOKENS)[0]);
        assertThat(RecordingKvListener.asSet(feed.residentBlocks().seqHashes())).isEqualTo(indexer.resident());
    }

    @Test
    void aGapTheReplayBufferNoLongerHoldsResyncsAndNeverClaimsEvictedBlocks() {
        subscribe(true);
        engine.publish(storeFirstTwo());
        engine.publishLost(batchArray(2.0, List.of(removedArray(hashes(H1), null)), null)); // lost for good
        engine.publishLost(storeThird());
        engine.forgetBefore(2);
        engine.publish(storeOther());
        awaitSubscriberAt(3);

        assertThat(counters.gapsUnrepaired()).isEqualTo(1);
        assertThat(indexer.violations()).isEmpty();
        assertThat(indexer.events()).anyMatch(KvEvent::hasCleared);
        assertThat(indexer.resident()).as("SEQ[1] was evicted in the lost batch and must not be claimed")
                .containsExactlyInAnyOrder(SEQ[2], HASHER.seqHashes(OTHER_TOKENS)[0]);
        assertThat(RecordingKvListener.asSet(feed.residentBlocks().seqHashes())).isEqualTo(indexer.resident());
    }

    @Test
    void withoutAReplaySocketAGapResyncs() {
        subscribe(false);
        engine.publish(storeFirstTwo());
        engine.publishLost(storeThird());
        engine.publish(storeOther());
        awaitSubscriberAt(2);

        assertThat(counters.gapsUnrepaired()).isEqualTo(1);
        assertThat(indexer.violations()).isEmpty();
        assertThat(indexer.resident()).containsExactly(HASHER.seqHashes(OTHER_TOKENS)[0]);
    }

    @Test
    void anAgentThatJoinsLateReadsTheEngineHistoryFromReplay() {
        engine.publishLost(storeFirstTwo()); // published before anyone subscribed
        engine.publishLost(storeThird());
        subscribe(true);
        engine.publish(storeOther());
        awaitSubscriberAt(2);

        assertThat(counters.gapsRepaired()).isEqualTo(1);
        assertThat(indexer.resident()).containsExactlyInAnyOrder(SEQ[0], SEQ[1], SEQ[2], HASHER.seqHashes(OTHER_TOKENS)[0]);
    }

    @Test
    void anEngineRestartDropsEverythingFromTheOldProcess() {
        subscribe(true);
        engine.publish(storeFirstTwo());
        engine.publish(storeThird());
        awaitSubscriberAt(1);
        engine.restart();
        engine.publish(storeOther());
        awaitSubscriberAt(0);

        assertThat(counters.engineRestarts()).isEqualTo(1);
        assertThat(indexer.violations()).isEmpty();
        assertThat(indexer.resident()).containsExactly(HASHER.seqHashes(OTHER_TOKENS)[0]);
    }

    @Test
    void aRequestedResetRereadsANewEngineProcessFromItsReplayBuffer() {
        subscribe(true);
        engine.publish(storeFirstTwo());
        awaitSubscriberAt(0);
        engine.restart(); // a new process: its seq 0 never reaches the subscriber
        engine.publishLost(storeOther());
        subscriber.requestReset();
        engine.publish(storeFirstTwo());
        awaitSubscriberAt(1);

        assertThat(counters.engineRestarts()).isEqualTo(1);
        assertThat(indexer.violations()).isEmpty();
        assertThat(indexer.resident()).containsExactlyInAnyOrder(SEQ[0], SEQ[1], HASHER.seqHashes(OTHER_TOKENS)[0]);
        assertThat(RecordingKvListener.asSet(feed.residentBlocks().seqHashes())).isEqualTo(indexer.resident());
    }

    @Test
    void anUndecodablePayloadCountsAsALostBatch() {
        subscribe(true);
        engine.publish(storeFirstTwo());
        engine.publish(new byte[]{(byte) 0xc1, 1, 2});
        engine.publish(storeOther());
        awaitSubscriberAt(2);

        assertThat(counters.undecodable()).isEqualTo(1);
        assertThat(indexer.violations()).isEmpty();
        assertThat(indexer.resident()).containsExactly(HASHER.seqHashes(OTHER_TOKENS)[0]);
    }
}
