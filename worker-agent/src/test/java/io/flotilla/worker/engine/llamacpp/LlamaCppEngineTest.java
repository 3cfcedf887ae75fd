package io.flotilla.worker.engine.llamacpp;

import io.flotilla.gguf.TinyModel;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.SamplingOptions;
import io.flotilla.worker.engine.openai.AwaitingSink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Real forward passes: the tiny generated model in llama.cpp, through the engine the worker runs. */
class LlamaCppEngineTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("tiny", TinyModel.TOKENIZER_NAME,
            "f32/bs16/paged"), 16);
    private static LlamaCppEngine engine;
    private static final List<List<KvEvent>> events = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("llama-engine-");
        TinyModel.Written model = TinyModel.write(dir, 7);
        engine = LlamaCppEngine.start(new LlamaCppSettings(model.gguf(), 2, 1, 2048, 8, dir.resolve("native")), HASHER,
                Clock.systemUTC(), EngineListeners.kvEvents((position, batch) -> {
                    synchronized (events) {
                        events.add(batch);
                    }
                }), "test-engine");
    }

    @AfterAll
    static void stop() {
        if (engine != null) {
            engine.close();
        }
    }

    private static int[] prompt(long seed, int length) {
        Random r = new Random(seed);
        int[] p = new int[length];
        for (int i = 0; i < length; i++) {
            p[i] = r.nextInt(1000);
        }
        return p;
    }

    /** A finished run: its sink and how it ended. */
    record Run(AwaitingSink sink, AwaitingSink.End end) {
        List<Integer> tokens() {
            return sink.tokens();
        }
    }

    private static Run run(EngineRequest r) {
        AwaitingSink sink = new AwaitingSink();
        engine.submit(r, sink);
        return new Run(sink, sink.await(java.time.Duration.ofSeconds(60)));
    }

    @Test
    void greedyGenerationIsRepeatableAndTheRepeatedPromptComesFromTheSlotsCache() {
        int[] p = prompt(1, 300);
        Run first = run(EngineRequest.of("g1", p, 12));
        Run second = run(EngineRequest.of("g2", p, 12));
        assertThat(first.end().reason()).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(first.tokens()).hasSize(12);
        assertThat(second.tokens()).as("temperature 0 on the same prompt").isEqualTo(first.tokens());
        assertThat(second.end().cachedTokens()).as("all but the one token llama.cpp always evaluates").isEqualTo(299);
        assertThat(engine.residentBlocks().seqHashes()).as("the prompt's full blocks are resident")
                .contains(HASHER.seqHashes(p));
    }

    @Test
    void theSlotThatHoldsAPrefixServesItsExtension() {
        int[] base = prompt(2, 400);
        run(EngineRequest.of("e1", base, 4));
        run(EngineRequest.of("other", prompt(3, 200), 4)); // takes the other slot (least recently used)
        int[] extended = java.util.Arrays.copyOf(base, 416);
        System.arraycopy(prompt(4, 16), 0, extended, 400, 16);
        Run sink = run(EngineRequest.of("e2", extended, 4));
        assertThat(sink.end().cachedTokens()).as("the prefix, not the other slot's prompt").isGreaterThanOrEqualTo(400);
    }

    @Test
    void jsonSchemaOutputIsSampledUnderTheGrammar() {
        String schema = "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}";
        SamplingOptions json = new SamplingOptions(null, null, null, null, null, null, Map.of(), false, 0,
                new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_SCHEMA, schema, "s"), List.of());
        Run sink = run(new EngineRequest("j", prompt(5, 50), 64, null, false, 0.9, 11L, null, json));
        String text = TextOf.tokens(sink.tokens());
        JsonNode parsed = JsonMapper.builder().build().readTree(text);
        assertThat(parsed.path("ok").isBoolean()).as("%s", text).isTrue();
    }

    @Test
    void aStopTokenEndsTheRequestWithItAndRequestsTheEngineCannotServeAreRefusedByName() {
        int[] p = prompt(6, 100);
        List<Integer> free = run(EngineRequest.of("s1", p, 8)).tokens();
        int stop = free.get(2);
        Run stopped = run(EngineRequest.of("s2", p, 8).withStop(new int[] {stop}, false));
        assertThat(stopped.end().reason()).isEqualTo(FinishReason.FINISH_REASON_STOP);
        assertThat(stopped.tokens().get(stopped.tokens().size() - 1)).isEqualTo(stop);

        SamplingOptions logprobs = new SamplingOptions(null, null, null, null, null, null, Map.of(), true, 0, null, List.of());
        assertThatThrownBy(() -> engine.submit(EngineRequest.of("lp", p, 4).withOptions(logprobs), new AwaitingSink()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("logprobs");
        assertThatThrownBy(() -> engine.submit(EngineRequest.of("big", new int[] {5000}, 4), new AwaitingSink()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("vocabulary");
    }

    @Test
    void theMirrorsEventsReplayToTheResidentSet() {
        run(EngineRequest.of("m1", prompt(8, 160), 2));
        java.util.Set<Long> replayed = new java.util.HashSet<>();
        synchronized (events) {
            for (List<KvEvent> batch : events) {
                for (KvEvent e : batch) {
                    if (e.hasStored()) {
                        e.getStored().getBlocksList().forEach(b -> replayed.add(b.getSeqHash()));
                    } else if (e.hasRemoved()) {
                        e.getRemoved().getSeqHashesList().forEach(replayed::remove);
                    }
                }
            }
        }
        long[] resident = engine.residentBlocks().seqHashes();
        assertThat(replayed).containsExactlyInAnyOrderElementsOf(java.util.Arrays.stream(resident).boxed().toList());
    }

    @Test
    void clearingTheCacheDropsWhatTheIdleSlotsHeld() {
        int[] p = prompt(9, 200);
        run(EngineRequest.of("c1", p, 2));
        assertThat(engine.clearCache()).as("blocks dropped").isPositive();
        assertThat(engine.residentBlocks().seqHashes()).doesNotContain(HASHER.seqHashes(p));
        assertThat(run(EngineRequest.of("c2", p, 2)).end().cachedTokens()).as("a cold prompt again").isZero();
    }

    /** The generated text, from the tiny model's vocabulary. */
    static final class TextOf {
        /** As the gateway shows it: special tokens (the end-of-sequence that ended the request) are not text. */
        static String tokens(List<Integer> ids) {
            return engine.decode(ids.stream().mapToInt(Integer::intValue).filter(id -> id < TinyModel.VOCAB_SIZE - 3).toArray());
        }
    }
}
