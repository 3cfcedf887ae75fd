package io.flotilla.worker.agent;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.KvSnapshotRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.worker.WorkerApplication;
import io.flotilla.worker.engine.openai.FakeVllmEngine;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A prefill worker and a decode worker, each a real worker application with
 * {@code engine=openai-http} in front of its own fake vLLM (HTTP with NixlConnector's
 * {@code kv_transfer_params}, ZMQ KV events with replay): real gRPC, real Kafka. The test plays the
 * gateway: Prefill on P, then Generate with the handoff on D. Meters are read from the
 * applications' registries (see {@link DisaggregatedWorkersTest} on why not over HTTP).
 */
@ExtendWith(KafkaBrokerExtension.class)
class ExternalEngineWorkersTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16);

    private static KafkaBroker kafka;
    private static FakeVllmEngine prefillEngine;
    private static FakeVllmEngine decodeEngine;
    private static Worker prefill;
    private static Worker decode;

    private record Worker(String id, ConfigurableApplicationContext ctx, ManagedChannel channel) {
        WorkerServiceGrpc.WorkerServiceBlockingStub stub() {
            return WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        }

        double meter(String name, String... tags) {
            MeterRegistry registry = ctx.getBean(MeterRegistry.class);
            var fc = registry.find(name).tag("worker", id).tags(tags).functionCounter();
            if (fc != null) {
                return fc.count();
            }
            var c = registry.find(name).tag("worker", id).tags(tags).counter();
            if (c != null) {
                return c.count();
            }
            var g = registry.find(name).tag("worker", id).tags(tags).gauge();
            return g == null ? Double.NaN : g.value();
        }

        void close() {
            channel.shutdownNow();
            ctx.close();
        }
    }

    @BeforeAll
    static void start(KafkaBroker broker) throws IOException {
        kafka = broker;
        prefillEngine = FakeVllmEngine.start(FakeVllmEngine.WireForm.ARRAY, 16, 1);
        decodeEngine = FakeVllmEngine.start(FakeVllmEngine.WireForm.MAP, 16, 2);
        prefill = worker("prefill", prefillEngine);
        decode = worker("decode", decodeEngine);
        prefillEngine.awaitSubscriber(Duration.ofSeconds(10));
        decodeEngine.awaitSubscriber(Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(20)).until(() -> prefill.meter("flotilla.worker.engine.healthy") == 1
                && decode.meter("flotilla.worker.engine.healthy") == 1);
    }

    @AfterAll
    static void stop() {
        for (Worker w : new Worker[]{decode, prefill}) {
            if (w != null) {
                w.close();
            }
        }
        for (FakeVllmEngine e : new FakeVllmEngine[]{decodeEngine, prefillEngine}) {
            if (e != null) {
                e.close();
            }
        }
    }

    private static Worker worker(String role, FakeVllmEngine engine) {
        String id = "vllm-" + role + "-" + ProcessHandle.current().pid();
        int grpcPort = KafkaBroker.freePort();
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WorkerApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(),
                "--server.port=" + KafkaBroker.freePort(),
                "--flotilla.worker.id=" + id,
                "--flotilla.worker.role=" + role,
                "--flotilla.worker.grpc-port=" + grpcPort,
                "--flotilla.worker.transfer-port=" + KafkaBroker.freePort(),
                "--flotilla.worker.advertised-host=127.0.0.1",
                "--flotilla.worker.engine=openai-http",
                "--flotilla.worker.http.url=" + engine.url(),
                "--flotilla.worker.http.kv-events=" + engine.kvEvents(),
                "--flotilla.worker.http.kv-events-replay=" + engine.kvEventsReplay(),
                "--flotilla.worker.http.scrape-interval-ms=100",
                "--flotilla.worker.http.unhealthy-after=2",
                // traced, exported nowhere that answers: spans are made and propagated, their export fails quietly
                "--management.tracing.export.enabled=true", "--management.tracing.sampling.probability=1.0",
                "--management.tracing.export.zipkin.endpoint=http://127.0.0.1:" + KafkaBroker.freePort() + "/api/v2/spans",
                "--logging.level.io.opentelemetry.exporter=off");
        return new Worker(id, ctx, NettyChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build());
    }

    @Test
    void thePrefillEnginesTransferParamsTravelInTheHandoffAndTheDecodeEnginePullsWithThem() {
        int[] prompt = prompt(40, 1); // two full blocks and 8 tokens
        double used = decode.meter("flotilla.worker.handoffs_used");
        double prefilled = prefill.meter("flotilla.worker.prefill_tokens");

        PrefillResult result = prefill.stub().prefill(prefillRequest("pd-1", prompt));
        KvHandoff h = result.getHandoff();
        assertThat(prefill.meter("flotilla.worker.prefill_tokens") - prefilled)
                .as("the prefill worker counts the prompt tokens its engine computed")
                .isEqualTo(40.0 - result.getUsage().getCachedTokens());

        JsonNode sent = last(prefillEngine.server().requests());
        assertThat(sent.path("max_tokens").asInt()).isEqualTo(1);
        assertThat(sent.path("stream").asBoolean(true)).isFalse();
        assertThat(sent.path("kv_transfer_params").path("do_remote_decode").asBoolean()).isTrue();
        assertThat(last(prefillEngine.server().requestIds())).isEqualTo("pd-1");
        JsonNode issued = last(prefillEngine.server().transferParamsIssued());
        assertThat(JSON.readTree(h.getEngineTransferParams())).isEqualTo(issued);
        assertThat(issued.path("remote_block_ids").size()).as("the prompt's full blocks").isEqualTo(2);
        assertThat(h.getSourceWorkerId()).isEqualTo(prefill.id());
        assertThat(h.getSourceEpoch()).isNotZero();
        assertThat(h.getBlockSize()).isEqualTo(16);
        assertThat(h.getModel()).isEqualTo("flotilla-sim");
        assertThat(h.getComputedTokens()).isEqualTo(40);
        assertThat(h.getBlocksCount()).as("no Flotilla-moved blocks").isZero();
        assertThat(h.getLeaseId()).isEmpty();
        assertThat(h.getLeaseExpiryMs()).isGreaterThan(System.currentTimeMillis());
        assertThat(result.getUsage().getPromptTokens()).isEqualTo(40);

        GenerateStream pd = generate(decode, request("pd-1", prompt, 3).setHandoff(h));

        assertThat(pd.chunks()).allMatch(GenerateChunk::getHandoffUsed);
        assertThat(pd.last().getHandoffRefusedReason()).isEmpty();
        assertThat(pd.last().getFinishReason()).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(pd.tokens()).containsExactly(101, 102, 103);
        assertThat(last(decodeEngine.server().transferParamsReceived())).isEqualTo(issued);
        assertThat(last(decodeEngine.server().requestIds())).as("one request id on both engines").isEqualTo("pd-1");
        assertThat(decode.meter("flotilla.worker.handoffs_used") - used).isEqualTo(1);
    }

    @Test
    void theEngineRequestContinuesTheCallersTraceFromTheWorkersEngineSpan() {
        String traceId = "4bf92f3577b34da6a3ce929d0e0e" + String.format("%04x", (int) (System.nanoTime() & 0xffff));
        String callerSpan = "00f067aa0ba902b7";
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER), "00-" + traceId + "-" + callerSpan + "-01");
        var stub = decode.stub().withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));

        GenerateStream traced = GenerateStream.read(stub.generate(request("traced-" + traceId, prompt(20, 3), 2).build()));

        assertThat(traced.last().getFinishReason()).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        String sent = last(decodeEngine.server().traceparents());
        assertThat(sent).as("vLLM is asked within the caller's trace, from a span of the worker's own")
                .startsWith("00-" + traceId + "-").doesNotContain(callerSpan).endsWith("-01");
    }

    @Test
    void aHandoffTheDecodeWorkerCannotUseIsRefusedCountedAndPrefilledLocally() {
        refusedAndPrefilledLocally("block_size", h -> h.setBlockSize(32));
        refusedAndPrefilledLocally("model", h -> h.setModel("another-model"));
        refusedAndPrefilledLocally("engine_params", KvHandoff.Builder::clearEngineTransferParams);
        refusedAndPrefilledLocally("engine_params", h -> h.setEngineTransferParams("not json"));
    }

    private static void refusedAndPrefilledLocally(String reason, UnaryOperator<KvHandoff.Builder> change) {
        int[] prompt = prompt(48, reason.hashCode());
        String id = "pd-refused-" + reason + "-" + System.nanoTime();
        KvHandoff good = prefill.stub().prefill(prefillRequest(id, prompt)).getHandoff();
        double refused = decode.meter("flotilla.worker.handoffs_refused", "reason", reason);
        int pulls = decodeEngine.server().transferParamsReceived().size();

        GenerateStream pd = generate(decode, request(id, prompt, 3).setHandoff(change.apply(good.toBuilder()).build()));

        assertThat(pd.last().getHandoffUsed()).isFalse();
        assertThat(pd.last().getHandoffRefusedReason()).contains(reason);
        assertThat(pd.tokens()).as("served anyway, from the prompt").containsExactly(101, 102, 103);
        assertThat(last(decodeEngine.server().requests()).has("kv_transfer_params")).isFalse();
        assertThat(decodeEngine.server().transferParamsReceived()).hasSize(pulls);
        assertThat(decode.meter("flotilla.worker.handoffs_refused", "reason", reason) - (Double.isNaN(refused) ? 0 : refused))
                .isEqualTo(1);
    }

    @Test
    void anEngineWithoutKvConnectorFailsThePrefillUnavailable() {
        prefillEngine.server().setKvConnector(false);
        try {
            assertThatThrownBy(() -> prefill.stub().prefill(prefillRequest("pd-nokv", prompt(32, 9))))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        assertThat(e.getStatus().getDescription()).contains("kv_transfer_params");
                    });
        } finally {
            prefillEngine.server().setKvConnector(true);
        }
    }

    @Test
    void theAdaptersCountersAreMetersOfTheWorker() {
        double repaired = decode.meter("flotilla.worker.kv_events.gaps_repaired");
        double decoded = decode.meter("flotilla.worker.kv_events.decoded_batches");
        int[] lost = prompt(64, 11);
        int[] next = prompt(32, 12);

        decodeEngine.loseNextBatch();
        generate(decode, request("gap-1", lost, 2));
        generate(decode, request("gap-2", next, 2));

        await().atMost(Duration.ofSeconds(15)).until(() -> decode.meter("flotilla.worker.kv_events.gaps_repaired") - repaired == 1);
        assertThat(decode.meter("flotilla.worker.kv_events.decoded_batches") - decoded).isEqualTo(2);
        assertThat(decode.meter("flotilla.worker.kv_events.resyncs")).isZero();
        assertThat(decode.meter("flotilla.worker.kv_events.untranslatable_blocks", "reason", "block_size_mismatch")).isZero();
        assertThat(decode.meter("flotilla.worker.engine.block_size_mismatch")).isZero();
        Set<Long> resident = Set.copyOf(decode.stub().getKvSnapshot(KvSnapshotRequest.getDefaultInstance()).getSeqHashesList());
        assertThat(resident).as("the lost batch's blocks arrived through the replay socket")
                .containsAll(Arrays.stream(HASHER.seqHashes(lost)).boxed().toList());

        double healthFailures = decode.meter("flotilla.worker.engine.health_failures");
        double scrapeFailures = decode.meter("flotilla.worker.engine.scrape_failures");
        decodeEngine.server().setHealthStatus(503);
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> decode.meter("flotilla.worker.engine.healthy") == 0);
            assertThat(decode.meter("flotilla.worker.engine.health_failures")).isGreaterThan(healthFailures);
            assertThat(decode.meter("flotilla.worker.engine.scrape_failures")).isGreaterThan(scrapeFailures);
        } finally {
            decodeEngine.server().setHealthStatus(200);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> decode.meter("flotilla.worker.engine.healthy") == 1);
    }

    // --- the gateway's side ---

    private static PrefillRequest prefillRequest(String id, int[] prompt) {
        PrefillRequest.Builder r = PrefillRequest.newBuilder().setRequestId(id).setModel("flotilla-sim")
                .setStop(StopConditions.newBuilder().setMaxTokens(16));
        for (int t : prompt) {
            r.addTokenIds(t);
        }
        return r.build();
    }

    private static GenerateRequest.Builder request(String id, int[] prompt, int maxTokens) {
        GenerateRequest.Builder r = GenerateRequest.newBuilder().setRequestId(id).setModel("flotilla-sim")
                .setStop(StopConditions.newBuilder().setMaxTokens(maxTokens));
        for (int t : prompt) {
            r.addTokenIds(t);
        }
        return r;
    }

    private static GenerateStream generate(Worker w, GenerateRequest.Builder request) {
        return GenerateStream.read(w.stub().generate(request.build()));
    }

    private static <T> T last(List<T> list) {
        assertThat(list).isNotEmpty();
        return list.get(list.size() - 1);
    }

    private static int[] prompt(int n, int salt) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = Math.floorMod(salt * 7919 + i * 31, 100_000);
        }
        return out;
    }
}
