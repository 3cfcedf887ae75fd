package io.flotilla.worker.api;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.EmbedInput;
import io.flotilla.protocol.v1.EmbedRequest;
import io.flotilla.protocol.v1.EmbedResponse;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.sim.SimEngineConfig;
import io.flotilla.worker.engine.sim.SimulatedEngine;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.kv.LeaseTable;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code WorkerService.Embed} over a real gRPC socket, in front of the simulated engine. */
class EmbedGrpcTest {

    private static final KvNamespace NAMESPACE = KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged");

    private final AtomicInteger embeddedInputs = new AtomicInteger();
    private final AtomicInteger embeddedTokens = new AtomicInteger();
    private SimulatedEngine engine;
    private GrpcEndpoint endpoint;
    private ManagedChannel channel;

    private WorkerServiceGrpc.WorkerServiceBlockingStub worker(int embeddingDimensions) {
        engine = SimulatedEngine.startRealTime(SimEngineConfig.builder().vocabSize(1000).eosTokenId(999)
                .maxContextTokens(64).kvBytesPerBlock(0).embeddingDimensions(embeddingDimensions).build(),
                EngineListeners.NONE, "embed-test");
        int port = KafkaBroker.freePort();
        WorkerIdentity id = new WorkerIdentity("worker-e", 1, WorkerRole.WORKER_ROLE_AGGREGATED, NAMESPACE, 16,
                "127.0.0.1:" + port, "", "");
        LocalGenerate local = new LocalGenerate(id, engine, new Meters());
        endpoint = new GrpcEndpoint("embed-test", "127.0.0.1", port,
                List.of(new WorkerGrpcService(local, new LocalKvPath(local), d -> CompletableFuture.completedFuture(0))))
                .start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        return WorkerServiceGrpc.newBlockingStub(channel);
    }

    @AfterEach
    void close() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (endpoint != null) {
            endpoint.close();
        }
        if (engine != null) {
            engine.close();
        }
    }

    private static EmbedRequest request(int dimensions, int[]... inputs) {
        EmbedRequest.Builder r = EmbedRequest.newBuilder().setRequestId("emb-1").setModel("flotilla-sim")
                .setDimensions(dimensions);
        for (int[] ids : inputs) {
            EmbedInput.Builder in = EmbedInput.newBuilder();
            for (int id : ids) {
                in.addTokenIds(id);
            }
            r.addInputs(in);
        }
        return r.build();
    }

    private static double norm(List<Float> v) {
        double s = 0;
        for (float x : v) {
            s += x * x;
        }
        return Math.sqrt(s);
    }

    @Test
    void everyInputGetsAUnitVectorInOrderAndEqualInputsEqualVectors() {
        var stub = worker(16);
        EmbedResponse r = stub.embed(request(0, new int[]{1, 2, 3}, new int[]{7}, new int[]{1, 2, 3}));

        assertThat(r.getWorkerId()).isEqualTo("worker-e");
        assertThat(r.getPromptTokens()).isEqualTo(7);
        assertThat(r.getEmbeddingsCount()).isEqualTo(3);
        for (var e : r.getEmbeddingsList()) {
            assertThat(e.getValuesCount()).isEqualTo(16);
            assertThat(norm(e.getValuesList())).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-5));
        }
        assertThat(r.getEmbeddings(0)).isEqualTo(r.getEmbeddings(2));
        assertThat(r.getEmbeddings(0)).isNotEqualTo(r.getEmbeddings(1));
        assertThat(stub.embed(request(0, new int[]{7})).getEmbeddings(0)).isEqualTo(r.getEmbeddings(1));
        assertThat(embeddedInputs).hasValue(4);
        assertThat(embeddedTokens).hasValue(8);
    }

    @Test
    void shorterDimensionsAreTheRenormalisedPrefix() {
        var stub = worker(16);
        var full = stub.embed(request(0, new int[]{4, 5, 6})).getEmbeddings(0).getValuesList();
        var short4 = stub.embed(request(4, new int[]{4, 5, 6})).getEmbeddings(0).getValuesList();

        assertThat(short4).hasSize(4);
        double prefixNorm = norm(full.subList(0, 4));
        for (int i = 0; i < 4; i++) {
            assertThat((double) short4.get(i)).isCloseTo(full.get(i) / prefixNorm, org.assertj.core.data.Offset.offset(1e-5));
        }
    }

    @Test
    void whatTheEngineCanNeverEmbedIsInvalidArgument() {
        var stub = worker(16);
        assertCode(() -> stub.embed(request(0)), Status.Code.INVALID_ARGUMENT, "inputs must not be empty");
        assertCode(() -> stub.embed(request(0, new int[]{1}, new int[]{})), Status.Code.INVALID_ARGUMENT,
                "input 1 has no token ids");
        assertCode(() -> stub.embed(request(0, new int[]{1, 1000})), Status.Code.INVALID_ARGUMENT,
                "outside the vocabulary");
        assertCode(() -> stub.embed(request(0, new int[65])), Status.Code.INVALID_ARGUMENT, "more than the context");
        assertCode(() -> stub.embed(request(17, new int[]{1})), Status.Code.INVALID_ARGUMENT, "dimensions must be in [1, 16]");
        assertCode(() -> stub.embed(request(0, new int[]{1}).toBuilder().setModel("other").build()),
                Status.Code.INVALID_ARGUMENT, "is not served by worker-e");
        assertThat(embeddedInputs).hasValue(0);
    }

    @Test
    void aWorkerWhoseEngineDoesNotEmbedAnswersUnimplemented() {
        var stub = worker(0);
        assertCode(() -> stub.embed(request(0, new int[]{1})), Status.Code.UNIMPLEMENTED, "does not embed");
    }

    private static void assertCode(Runnable call, Status.Code code, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(code);
            assertThat(e.getStatus().getDescription()).contains(message);
        });
    }

    private final class Meters implements GenerationMeters {
        @Override public void handoffRefused(String reason) { }
        @Override public void handoffFallback(String reason) { }
        @Override public void handoffUsed() { }
        @Override public void requestFinished(int promptTokens, int cachedTokens, int importedTokens) { }
        @Override public void saltedRequest(int publicBlocks, TenantIsolation isolation) { }
        @Override public void scopeRefused(String code) { }
        @Override public void kvTransferred(long bytes, Duration took) { }
        @Override public void bindLeases(LeaseTable leases) { }

        @Override
        public void embedded(int inputs, int tokens) {
            embeddedInputs.addAndGet(inputs);
            embeddedTokens.addAndGet(tokens);
        }
    }
}
