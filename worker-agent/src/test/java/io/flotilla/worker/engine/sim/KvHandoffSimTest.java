package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.KvBlockRef;
import io.flotilla.worker.engine.KvImport;
import io.flotilla.worker.engine.KvMemory;
import io.flotilla.worker.engine.KvTransferSupport;
import io.flotilla.worker.engine.PrefillSink;
import io.flotilla.worker.engine.PrefilledKv;
import io.flotilla.worker.engine.RequestCancelledException;
import io.flotilla.worker.engine.RequestHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.flotilla.worker.engine.sim.SimTesting.prompt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Prefill-only execution, block import and continuation in the simulator, with the transfer done by
 * hand (a byte copy between the two engines' KV memory): what the worker agent does over a transfer
 * agent, without one.
 */
class KvHandoffSimTest {

    private static final SimEngineConfig CONFIG = SimTesting.small().kvBytesPerBlock(64).build();

    private final ManualClock clock = new ManualClock();
    private final Side prefill = new Side();
    private final Side decode = new Side();
    private final Side reference = new Side();

    /** One engine with its KV memory handed out by a map, as a transfer agent would. */
    private final class Side implements KvMemory {
        final Map<Integer, ByteBuffer> regions = new HashMap<>();
        final KvEventReplay replay = new KvEventReplay();
        final SimulatedEngine engine = new SimulatedEngine(CONFIG, clock, clock, EngineListeners.kvEvents(replay));
        final KvTransferSupport kv = engine.feature(KvTransferSupport.class).orElseThrow();

        Side() {
            kv.useKvMemory(this);
        }

        @Override
        public ByteBuffer region(int region, int bytes) {
            ByteBuffer b = ByteBuffer.allocateDirect(bytes);
            regions.put(region, b);
            return b;
        }

        ByteBuffer bytes(KvBlockRef ref) {
            return regions.get(ref.region()).slice((int) ref.offset(), ref.length());
        }

        void run() throws InterruptedException {
            engine.runUntilIdle(1000);
        }

        List<String> breaches() {
            return engine.withScheduler(s -> EngineInvariants.check(s, replay, List.of()));
        }
    }

    @AfterEach
    void close() {
        prefill.engine.close();
        decode.engine.close();
        reference.engine.close();
    }

    @Test
    void aPrefilledPromptContinuedElsewhereGivesTheSameTokensAsOneEngine() throws InterruptedException {
        int[] prompt = prompt(18, 1); // 4 full blocks of 4 and a 2-token tail
        EngineRequest request = SimTesting.request("r", prompt, 6);

        RecordingSink expected = new RecordingSink();
        reference.engine.submit(request, expected);
        reference.run();

        PrefilledKv kv = prefill(request);
        assertThat(kv.firstToken()).isEqualTo(expected.tokens.get(0));
        assertThat(kv.blocks()).hasSize(4).extracting(KvBlockRef::seqHash)
                .containsExactly(Arrays.stream(SimTesting.seqHashes(CONFIG, prompt)).boxed().toArray(Long[]::new));
        assertThat(prefill.engine.load().activeKvBlocks()).as("pinned after the request ended").isEqualTo(4);

        KvImport imported = decode.kv.beginImport(prompt, KvScope.SHARED, kv.blocks().size());
        assertThat(imported.residentTokens()).isZero();
        copy(kv, imported);
        assertThat(imported.firstCorruptBlock()).isEqualTo(-1);
        imported.commit();
        kv.pin().release();
        assertThat(prefill.engine.load().activeKvBlocks()).isZero();
        assertThat(prefill.engine.residentBlocks().count()).as("unpinned blocks stay cached").isEqualTo(4);

        RecordingSink out = new RecordingSink();
        decode.kv.submitContinuation(request, kv.firstToken(), kv.rngState(), imported, out);
        assertThat(out.tokens).as("the first token is sent at once").containsExactly(kv.firstToken());
        decode.run();

        assertThat(out.tokens).isEqualTo(expected.tokens);
        assertThat(out.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(out.completionTokens).isEqualTo(6);
        assertThat(out.promptTokens).isEqualTo(18);
        assertThat(decode.replay.resident).as("imported blocks were announced")
                .containsAll(kv.blocks().stream().map(KvBlockRef::seqHash).toList());
        for (KvBlockRef b : kv.blocks()) {
            int slot = decode.engine.withScheduler(s -> s.pool().lookup(b.seqHash()));
            assertThat(slot).isNotNegative();
        }
        assertThat(decode.breaches()).isEmpty();
        assertThat(prefill.breaches()).isEmpty();
        assertThat(decode.engine.load().activeKvBlocks()).isZero();
    }

    @Test
    void blocksAlreadyResidentAreNotFetched() throws InterruptedException {
        int[] prompt = prompt(16, 2);
        decode.engine.submit(SimTesting.request("warm", java.util.Arrays.copyOf(prompt, 9), 1), new RecordingSink());
        decode.run(); // blocks 0 and 1 resident on the decoder

        PrefilledKv kv = prefill(SimTesting.request("r", prompt, 3));
        KvImport imported = decode.kv.beginImport(prompt, KvScope.SHARED, kv.blocks().size());
        assertThat(imported.residentTokens()).isEqualTo(8);
        assertThat(imported.toFetch()).extracting(KvBlockRef::seqHash)
                .containsExactly(kv.blocks().get(2).seqHash(), kv.blocks().get(3).seqHash());
        imported.abort();
        kv.pin().release();
        assertThat(decode.engine.load().activeKvBlocks()).isZero();
        assertThat(decode.breaches()).isEmpty();
    }

    @Test
    void aCorruptBlockIsFoundAndAnAbortedImportLeavesNoTrace() throws InterruptedException {
        int[] prompt = prompt(12, 3);
        PrefilledKv kv = prefill(SimTesting.request("r", prompt, 3));
        long position = decode.replay.position;

        KvImport imported = decode.kv.beginImport(prompt, KvScope.SHARED, 3);
        copy(kv, imported);
        ByteBuffer second = decode.bytes(imported.toFetch().get(1));
        second.put(17, (byte) (second.get(17) ^ 1));
        assertThat(imported.firstCorruptBlock()).isEqualTo(1);
        imported.abort();

        assertThat(decode.replay.position).as("no event for blocks never committed").isEqualTo(position);
        assertThat(decode.engine.load().activeKvBlocks()).isZero();
        assertThat(decode.engine.residentBlocks().count()).isZero();
        assertThat(decode.breaches()).isEmpty();
        kv.pin().release();
    }

    @Test
    void aFirstTokenThatEndsTheRequestFinishesAtOnceAndFreesTheImport() throws InterruptedException {
        int[] prompt = prompt(8, 4);
        EngineRequest oneToken = SimTesting.request("r", prompt, 1);
        PrefilledKv kv = prefill(oneToken);
        KvImport imported = decode.kv.beginImport(prompt, KvScope.SHARED, 2);
        copy(kv, imported);
        imported.commit();

        RecordingSink out = new RecordingSink();
        decode.kv.submitContinuation(oneToken, kv.firstToken(), kv.rngState(), imported, out);

        assertThat(out.tokens).containsExactly(kv.firstToken());
        assertThat(out.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(decode.engine.load().inFlight()).isZero();
        assertThat(decode.engine.load().activeKvBlocks()).isZero();
        assertThat(decode.engine.residentBlocks().count()).isEqualTo(2);
        kv.pin().release();
    }

    @Test
    void aCancelledPrefillEndsInAnErrorAndPinsNothing() throws InterruptedException {
        PrefillResult result = new PrefillResult();
        RequestHandle h = prefill.kv.prefill(SimTesting.request("r", prompt(12, 5), 4), result);
        h.cancel();
        prefill.run();
        assertThat(result.error).isInstanceOf(RequestCancelledException.class);
        assertThat(result.kv).isNull();
        assertThat(prefill.engine.load().activeKvBlocks()).isZero();
    }

    @Test
    void anImportThatDoesNotFitHoldsNothing() {
        int[] prompt = prompt(4 * 65, 6); // 65 blocks, the pool has 64
        assertThatThrownBy(() -> decode.kv.beginImport(prompt, KvScope.SHARED, 65)).isInstanceOf(EngineOverloadedException.class);
        assertThat(decode.engine.load().activeKvBlocks()).isZero();
        assertThat(decode.breaches()).isEmpty();
    }

    @Test
    void kvMemoryCannotBeSwappedOnceUsed() throws InterruptedException {
        prefill(SimTesting.request("r", prompt(8, 7), 1)).pin().release();
        assertThatThrownBy(() -> prefill.kv.useKvMemory((r, b) -> ByteBuffer.allocateDirect(b)))
                .isInstanceOf(IllegalStateException.class);
    }

    private PrefilledKv prefill(EngineRequest request) throws InterruptedException {
        PrefillResult result = new PrefillResult();
        prefill.kv.prefill(request, result);
        prefill.run();
        assertThat(result.error).isNull();
        assertThat(result.kv).isNotNull();
        return result.kv;
    }

    /** The transfer: each block to fetch gets the source block with the same seq_hash. */
    private void copy(PrefilledKv kv, KvImport imported) {
        Map<Long, KvBlockRef> source = new HashMap<>();
        kv.blocks().forEach(b -> source.put(b.seqHash(), b));
        for (KvBlockRef dst : imported.toFetch()) {
            decode.bytes(dst).put(prefill.bytes(source.get(dst.seqHash())));
        }
    }

    private static final class PrefillResult implements PrefillSink {
        PrefilledKv kv;
        Throwable error;

        @Override
        public void onPrefilled(PrefilledKv k) {
            assertThat(kv == null && error == null).isTrue();
            kv = k;
        }

        @Override
        public void onError(Throwable e) {
            assertThat(kv == null && error == null).isTrue();
            error = e;
        }
    }
}
