package io.flotilla.worker.agent;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.BlockDescriptor;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.KvSnapshotRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.worker.WorkerApplication;
import io.flotilla.worker.engine.sim.KvPattern;
import io.flotilla.worker.engine.sim.SimulatedEngine;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A prefill worker and a decode worker as two real worker applications: real gRPC, real transfer
 * agents on loopback (shared memory between them; tcp for a second prefill worker), real Kafka.
 * The test plays the gateway: Prefill on P, then Generate with the handoff on D.
 *
 * <p>Closing a worker application disposes Reactor Netty's shared resources, which the other
 * in-process applications' HTTP servers use; so this test never uses HTTP and reads metrics from
 * the applications' registries.
 */
@ExtendWith(KafkaBrokerExtension.class)
class DisaggregatedWorkersTest {

    /** 256 KiB blocks: 16 per 4 MiB region, so a 600-token prompt (37 full blocks) spans 3 regions. */
    private static final int BLOCK_BYTES = 256 * 1024;
    private static final int LEASE_TTL_MS = 2000;
    private static final String LAYOUT = "bf16/bs16/paged";
    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", LAYOUT), 16);
    private static final AtomicInteger IDS = new AtomicInteger();

    private static KafkaBroker kafka;
    private static Worker prefill;
    private static Worker decode;

    /** One worker application and a gRPC client for it. */
    private record Worker(String id, ConfigurableApplicationContext ctx, ManagedChannel channel) {
        WorkerServiceGrpc.WorkerServiceBlockingStub stub() {
            return WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        }

        WorkerInstance instance() {
            return ctx.getBean(WorkerFleet.class).workers().get(0);
        }

        SimulatedEngine engine() {
            return (SimulatedEngine) instance().engine();
        }

        double counter(String name, String... tags) {
            var c = ctx.getBean(MeterRegistry.class).find(name).tags(tags).functionCounter();
            if (c != null) {
                return c.count();
            }
            var plain = ctx.getBean(MeterRegistry.class).find(name).tags(tags).counter();
            return plain == null ? 0 : plain.count();
        }

        long timed(String name, String... tags) {
            var t = ctx.getBean(MeterRegistry.class).find(name).tags(tags).timer();
            return t == null ? 0 : t.count();
        }

        void close() {
            channel.shutdownNow();
            ctx.close();
        }
    }

    @BeforeAll
    static void start(KafkaBroker broker) {
        kafka = broker;
        prefill = worker("prefill", "", LEASE_TTL_MS);
        decode = worker("decode", "", LEASE_TTL_MS);
    }

    @AfterAll
    static void stop() {
        if (decode != null) {
            decode.close();
        }
        if (prefill != null) {
            prefill.close();
        }
    }

    /** Leases of earlier tests are released asynchronously; tests that count pinned blocks start clean. */
    private static void awaitNoLeases() {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> prefill.instance().transfer().orElseThrow().leases().active() == 0);
    }

    private static Worker worker(String role, String backends, int leaseTtlMs) {
        String id = "pd-" + role + "-" + ProcessHandle.current().pid() + "-" + IDS.incrementAndGet();
        int grpcPort = KafkaBroker.freePort();
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WorkerApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(),
                "--server.port=" + KafkaBroker.freePort(),
                "--flotilla.worker.id=" + id,
                "--flotilla.worker.role=" + role,
                "--flotilla.worker.grpc-port=" + grpcPort,
                "--flotilla.worker.transfer-port=" + KafkaBroker.freePort(),
                "--flotilla.worker.advertised-host=127.0.0.1",
                "--flotilla.worker.load-report-ms=100",
                "--flotilla.worker.sim.total-blocks=256",
                "--flotilla.worker.sim.kv-bytes-per-block=" + BLOCK_BYTES,
                "--flotilla.worker.sim.speedup=50",
                "--flotilla.worker.transfer.backends=" + backends,
                "--flotilla.worker.transfer.lease-ttl-ms=" + leaseTtlMs);
        return new Worker(id, ctx, NettyChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build());
    }

    @Test
    void aDisaggregatedRequestGivesTheAggregatedAnswerAndMovesTheBlocks() {
        awaitNoLeases();
        int[] prompt = prompt(600, 1);
        Map<TopicPartition, Long> offsets = WorkerAgentKafkaTest.endOffsets(kafka);
        double bytesBefore = decode.counter("flotilla.worker.transfer_bytes");
        double computedBefore = decode.counter("flotilla.worker.prefill_tokens");
        double prefilledBefore = prefill.counter("flotilla.worker.prefill_tokens");
        long pullsBefore = decode.timed("flotilla.worker.kv.pull", "outcome", "transferred");
        long decodesBefore = decode.timed("flotilla.worker.engine.decode");

        PrefillResult answer = prefill(prefill, "pd-a", prompt, greedy());
        KvHandoff h = answer.getHandoff();
        assertThat(prefill.counter("flotilla.worker.prefill_tokens") - prefilledBefore)
                .as("the prefill worker counts the prompt tokens it computed")
                .isEqualTo(600.0 - answer.getUsage().getCachedTokens());
        assertThat(h.getSourceWorkerId()).isEqualTo(prefill.id());
        assertThat(h.getSourceEndpoint()).isEqualTo(prefill.instance().identity().endpoint());
        assertThat(h.getComputedTokens()).isEqualTo(600);
        assertThat(h.getKvLayout()).isEqualTo(LAYOUT);
        assertThat(h.getAgentMetadata().isEmpty()).isFalse();
        assertThat(h.getLeaseId()).isNotEmpty();
        long[] hashes = HASHER.seqHashes(prompt);
        assertThat(h.getBlocksList()).extracting(BlockDescriptor::getSeqHash)
                .containsExactly(java.util.Arrays.stream(hashes).boxed().toArray(Long[]::new));
        assertThat(h.getBlocksList().stream().map(BlockDescriptor::getRegionId).distinct().count())
                .as("the blocks span several registered regions").isGreaterThanOrEqualTo(3);
        assertThat(prefill.instance().transfer().orElseThrow().leases().active()).isEqualTo(1);

        GenerateStream pd = generate(decode, request("pd-a", prompt, 16, greedy()).setHandoff(h));
        assertThat(pd.tokens()).hasSize(16).startsWith(h.getFirstToken());
        assertThat(pd.chunks()).allMatch(GenerateChunk::getHandoffUsed);
        assertThat(pd.last().getHandoffRefusedReason()).isEmpty();
        assertThat(pd.last().getFinishReason()).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(pd.last().getUsage().getPromptTokens()).isEqualTo(600);

        // The decode worker holds the prompt's blocks, their bytes verify, and it announced them.
        Set<Long> snapshot = Set.copyOf(decode.stub().getKvSnapshot(KvSnapshotRequest.getDefaultInstance()).getSeqHashesList());
        assertThat(snapshot).containsAll(java.util.Arrays.stream(hashes).boxed().toList());
        ByteBuffer block = ByteBuffer.allocateDirect(BLOCK_BYTES);
        for (long hash : hashes) {
            block.clear();
            assertThat(decode.engine().readBlock(hash, block)).isTrue();
            block.flip();
            assertThat(KvPattern.verify(block, hash, LAYOUT)).as("block %x", hash).isTrue();
        }
        List<Long> imported = java.util.Arrays.stream(hashes).boxed().toList();
        List<KvEventBatch> events = WorkerAgentKafkaTest.read(kafka, Topics.KV_EVENTS.name(), offsets,
                new ProtoDeserializer.KvEventBatches(), decode.id(),
                list -> WorkerAgentKafkaTest.replay(list).containsAll(imported));
        assertThat(WorkerAgentKafkaTest.replay(events)).as("BlockStored events for the imported blocks").containsAll(imported);
        assertThat(decode.counter("flotilla.worker.transfer_bytes") - bytesBefore).isEqualTo(37.0 * BLOCK_BYTES);
        assertThat(decode.counter("flotilla.worker.handoffs_used")).isPositive();
        assertThat(decode.timed("flotilla.worker.kv.pull", "outcome", "transferred") - pullsBefore)
                .as("the pull is observed (a span of the request's trace, and a timer)").isEqualTo(1);
        assertThat(decode.timed("flotilla.worker.engine.decode") - decodesBefore)
                .as("the continuation is the engine's observation, as a local generation is").isEqualTo(1);
        assertThat(decode.counter("flotilla.worker.prefill_tokens") - computedBefore)
                .as("only the partial last block is computed on the decode worker").isEqualTo(600 - 37 * 16);

        // The prefill worker's lease was released: nothing pinned any more.
        await().atMost(Duration.ofSeconds(5)).until(() -> prefill.instance().transfer().orElseThrow().leases().active() == 0);
        assertThat(prefill.engine().load().activeKvBlocks()).isZero();
        assertThat(prefill.counter("flotilla.worker.leases_released")).isPositive();

        // The same request served aggregated (here, by the prefill worker) gives the same tokens.
        assertThat(generate(prefill, request("agg-a", prompt, 16, greedy())).tokens()).isEqualTo(pd.tokens());
    }

    @Test
    void aSeededSampledRequestContinuesTheSameTokenStream() {
        int[] prompt = prompt(100, 2);
        SamplingParams seeded = SamplingParams.newBuilder().setTemperature(0.8f).setSeed(1234).build();
        KvHandoff h = prefill(prefill, "pd-b", prompt, seeded).getHandoff();
        GenerateStream pd = generate(decode, request("pd-b", prompt, 12, seeded).setHandoff(h));
        assertThat(pd.chunks()).allMatch(GenerateChunk::getHandoffUsed);
        assertThat(generate(decode, request("agg-b", prompt(100, 2), 12, seeded)).tokens()).isEqualTo(pd.tokens());
    }

    @Test
    void aLayoutMismatchIsRefusedAndThePromptPrefilledLocally() {
        int[] prompt = prompt(300, 3);
        double before = decode.counter("flotilla.worker.handoffs_refused", "reason", "kv_layout");
        KvHandoff h = prefill(prefill, "pd-c", prompt, greedy()).getHandoff().toBuilder()
                .setKvLayout("fp8/bs16/paged").build();

        GenerateStream pd = generate(decode, request("pd-c", prompt, 8, greedy()).setHandoff(h));

        assertThat(pd.last().getHandoffUsed()).isFalse();
        assertThat(pd.last().getHandoffRefusedReason()).contains("kv_layout");
        assertThat(pd.last().getUsage().getCachedTokens()).isZero();
        assertThat(decode.counter("flotilla.worker.handoffs_refused", "reason", "kv_layout") - before).isEqualTo(1);
        assertThat(generate(prefill, request("agg-c", prompt, 8, greedy())).tokens()).isEqualTo(pd.tokens());
        await().atMost(Duration.ofSeconds(5)).until(() -> prefill.instance().transfer().orElseThrow().leases().active() == 0);
    }

    @Test
    void blocksThatDoNotVerifyAreRefusedAndThePromptPrefilledLocally() {
        int[] prompt = prompt(200, 4);
        double before = decode.counter("flotilla.worker.handoff_fallbacks", "reason", "verify");
        long failedPullsBefore = decode.timed("flotilla.worker.kv.pull", "outcome", "verify");
        KvHandoff good = prefill(prefill, "pd-d", prompt, greedy()).getHandoff();
        // Point block 1 at block 2's bytes: the seq_hash identity still matches, the bytes do not.
        KvHandoff h = good.toBuilder().setBlocks(1, good.getBlocks(1).toBuilder()
                .setOffset(good.getBlocks(2).getOffset()).setRegionId(good.getBlocks(2).getRegionId())).build();

        GenerateStream pd = generate(decode, request("pd-d", prompt, 8, greedy()).setHandoff(h));

        assertThat(pd.last().getHandoffUsed()).isFalse();
        assertThat(pd.last().getHandoffRefusedReason()).contains("verify");
        assertThat(decode.counter("flotilla.worker.handoff_fallbacks", "reason", "verify") - before).isEqualTo(1);
        assertThat(decode.timed("flotilla.worker.kv.pull", "outcome", "verify") - failedPullsBefore)
                .as("the failed pull is observed with its reason").isEqualTo(1);
        assertThat(generate(prefill, request("agg-d", prompt, 8, greedy())).tokens()).isEqualTo(pd.tokens());
    }

    @Test
    void aLeaseNobodyReleasesExpiresAndFreesTheBlocks() {
        awaitNoLeases();
        int[] prompt = prompt(160, 5);
        double expired = prefill.counter("flotilla.worker.leases_expired");
        KvHandoff h = prefill(prefill, "pd-e", prompt, greedy()).getHandoff();
        assertThat(prefill.engine().load().activeKvBlocks()).isEqualTo(10);

        await().atMost(Duration.ofSeconds(10)).until(() -> prefill.counter("flotilla.worker.leases_expired") > expired);
        assertThat(prefill.engine().load().activeKvBlocks()).isZero();
        assertThat(prefill.instance().transfer().orElseThrow().leases().release(h.getLeaseId())).isFalse();

        // The stale handoff is refused by the decode worker, which prefills itself.
        GenerateStream pd = generate(decode, request("pd-e", prompt, 6, greedy()).setHandoff(h));
        assertThat(pd.last().getHandoffRefusedReason()).contains("lease_expired");
        assertThat(pd.tokens()).hasSize(6);
    }

    @Test
    void aPrefillWorkerThatDiesAfterItsHandoffLeavesTheDecodeWorkerToPrefill() {
        Worker tcpOnly = worker("prefill", "tcp", 60_000); // outlives its own shutdown
        try {
            // First it works over tcp...
            int[] first = prompt(120, 6);
            double bytes = decode.counter("flotilla.worker.transfer_bytes");
            KvHandoff h1 = prefill(tcpOnly, "pd-f1", first, greedy()).getHandoff();
            GenerateStream ok = generate(decode, request("pd-f1", first, 6, greedy()).setHandoff(h1));
            assertThat(ok.chunks()).allMatch(GenerateChunk::getHandoffUsed);
            assertThat(decode.counter("flotilla.worker.transfer_bytes") - bytes).isEqualTo(7.0 * BLOCK_BYTES);

            // ...then it dies between its handoff and the decode worker's pull.
            int[] second = prompt(400, 7);
            double fallbacks = decode.counter("flotilla.worker.handoff_fallbacks", "reason", "transfer");
            KvHandoff h2 = prefill(tcpOnly, "pd-f2", second, greedy()).getHandoff();
            tcpOnly.close();

            GenerateStream pd = generate(decode, request("pd-f2", second, 16, greedy()).setHandoff(h2));
            assertThat(pd.tokens()).hasSize(16);
            assertThat(pd.last().getFinishReason()).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
            assertThat(pd.last().getHandoffUsed()).isFalse();
            assertThat(pd.last().getHandoffRefusedReason()).contains("transfer");
            assertThat(decode.counter("flotilla.worker.handoff_fallbacks", "reason", "transfer") - fallbacks).isEqualTo(1);
            assertThat(generate(prefill, request("agg-f2", second, 16, greedy())).tokens()).isEqualTo(pd.tokens());
        } finally {
            tcpOnly.close();
        }
    }

    // --- the gateway's side ---

    /** Greedy, said explicitly: a request without a temperature samples at the engine's default. */
    private static SamplingParams greedy() {
        return SamplingParams.newBuilder().setTemperature(0).build();
    }

    private static PrefillResult prefill(Worker w, String id, int[] prompt, SamplingParams sampling) {
        PrefillRequest.Builder r = PrefillRequest.newBuilder().setRequestId(id).setModel("flotilla-sim")
                .setSampling(sampling).setStop(StopConditions.newBuilder().setMaxTokens(16).setIgnoreEos(true));
        for (int t : prompt) {
            r.addTokenIds(t);
        }
        return w.stub().prefill(r.build());
    }

    private static GenerateRequest.Builder request(String id, int[] prompt, int maxTokens, SamplingParams sampling) {
        GenerateRequest.Builder r = GenerateRequest.newBuilder().setRequestId(id).setModel("flotilla-sim")
                .setSampling(sampling).setStop(StopConditions.newBuilder().setMaxTokens(maxTokens).setIgnoreEos(true));
        for (int t : prompt) {
            r.addTokenIds(t);
        }
        return r;
    }

    private static GenerateStream generate(Worker w, GenerateRequest.Builder request) {
        return GenerateStream.read(w.stub().generate(request.build()));
    }

    private static int[] prompt(int n, int salt) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = (salt * 7919 + i * 31) % 100_000;
        }
        return out;
    }
}
