package io.flotilla.gateway.fakes;

import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.gateway.tokenize.IncrementalDetokenizer;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * One fake router and three fake workers, each a real gRPC server on a free local port, shared by
 * every test of the JVM (tests run one at a time and {@link #reset()} between them).
 *
 * <ul>
 *   <li>{@code worker-a}, {@code worker-b}: aggregated workers of {@code flotilla-sim} (block size 16)</li>
 *   <li>{@code worker-p}: a prefill worker of {@code flotilla-sim}</li>
 *   <li>models {@code tiny-model}, {@code queue-model}, {@code tight-model} are also "served" by
 *       worker-a; {@code ghost-model} only by a worker that is not routable; {@code plain-model} by
 *       worker-a advertising no sampling capabilities (and, in the tests' configuration, no tool parser)</li>
 * </ul>
 * The default decision routes every request to worker-a, or to worker-b when worker-a is excluded,
 * and answers "no worker" when both are.
 */
public final class FakeCluster {

    /** Text the fake workers generate, over and over. Contains multi-byte characters split across tokens. */
    public static final String SCRIPT_TEXT = "The quick brown fox jumps over the lazy dog. Flotilla streams ünïcödé ✓ 😀 text. ";
    public static final Cl100kTokenizer TOKENIZER = new Cl100kTokenizer();
    public static final int[] SCRIPT = TOKENIZER.encode(SCRIPT_TEXT);

    private static FakeCluster shared;

    public final FakeRouter router;
    public final FakeWorker workerA;
    public final FakeWorker workerB;
    public final FakeWorker workerP;
    public final RecordingSink records = new RecordingSink();
    private final Map<String, Integer> basePrompt = new ConcurrentHashMap<>();
    private final GrpcEndpoint routerEndpoint;
    private final GrpcEndpoint endpointA;
    private final GrpcEndpoint endpointB;
    private final GrpcEndpoint endpointP;

    public static synchronized FakeCluster get() {
        if (shared == null) {
            shared = new FakeCluster();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "fake-cluster-stop"));
        }
        return shared;
    }

    private FakeCluster() {
        workerA = new FakeWorker("worker-a", SCRIPT, basePrompt);
        workerB = new FakeWorker("worker-b", SCRIPT, basePrompt);
        workerP = new FakeWorker("worker-p", SCRIPT, basePrompt);
        endpointA = new GrpcEndpoint("fake-worker-a", "127.0.0.1", 0, List.of(workerA)).start();
        endpointB = new GrpcEndpoint("fake-worker-b", "127.0.0.1", 0, List.of(workerB)).start();
        endpointP = new GrpcEndpoint("fake-worker-p", "127.0.0.1", 0, List.of(workerP)).start();
        router = new FakeRouter(List.of(
                worker("worker-a", "flotilla-sim", WorkerRole.WORKER_ROLE_AGGREGATED, endpointA, true),
                worker("worker-b", "flotilla-sim", WorkerRole.WORKER_ROLE_AGGREGATED, endpointB, true),
                worker("worker-p", "flotilla-sim", WorkerRole.WORKER_ROLE_PREFILL, endpointP, true),
                worker("worker-a", "tiny-model", WorkerRole.WORKER_ROLE_AGGREGATED, endpointA, true).toBuilder()
                        .setCapabilities(CAPABILITIES.toBuilder().setEmbedding(CAPABILITIES.getEmbedding().toBuilder()
                                .setTruncatable(false))).build(),
                worker("worker-a", "queue-model", WorkerRole.WORKER_ROLE_AGGREGATED, endpointA, true),
                worker("worker-a", "tight-model", WorkerRole.WORKER_ROLE_AGGREGATED, endpointA, true),
                worker("worker-a", "plain-model", WorkerRole.WORKER_ROLE_AGGREGATED, endpointA, true)
                        .toBuilder().clearCapabilities().build(),
                worker("worker-x", "ghost-model", WorkerRole.WORKER_ROLE_AGGREGATED, endpointA, false)),
                defaultDecision());
        routerEndpoint = new GrpcEndpoint("fake-router", "127.0.0.1", 0, List.of(router)).start();
    }

    private static WorkerInfo worker(String id, String model, WorkerRole role, GrpcEndpoint endpoint, boolean routable) {
        return WorkerInfo.newBuilder().setWorkerId(id).setModel(model).setRole(role)
                .setState(WorkerState.WORKER_STATE_READY).setEndpoint(address(endpoint)).setBlockSize(16)
                .setRoutable(routable).setCapabilities(CAPABILITIES).build();
    }

    /**
     * The fake workers honour every sampling feature (they record what they were asked; see FakeWorker) and embed
     * into {@link FakeWorker#EMBEDDING_DIMENSIONS} dimensions, shortened on request (tiny-model's cannot be).
     */
    public static final EngineCapabilities CAPABILITIES = EngineCapabilities.newBuilder()
            .addAllFeatures(java.util.Arrays.stream(SamplingFeature.values())
                    .filter(f -> f != SamplingFeature.SAMPLING_FEATURE_UNSPECIFIED && f != SamplingFeature.UNRECOGNIZED)
                    .toList())
            .setMaxTopLogprobs(20)
            .setEmbedding(io.flotilla.protocol.v1.EmbeddingCapability.newBuilder()
                    .setDimensions(FakeWorker.EMBEDDING_DIMENSIONS).setTruncatable(true))
            .build();

    private static String address(GrpcEndpoint endpoint) {
        return "127.0.0.1:" + endpoint.port();
    }

    /** A RouterClient over {@code channels} with a fixed 10 s Route deadline (nothing here asserts on timing). */
    public static io.flotilla.gateway.client.RouterClient routerClient(io.grpc.ManagedChannel... channels) {
        java.time.Duration tenSeconds = java.time.Duration.ofSeconds(10);
        return new io.flotilla.gateway.client.RouterClient(List.of(channels),
                new io.flotilla.gateway.client.RouteDeadline(tenSeconds, tenSeconds, 99, 1, tenSeconds, 1, System::nanoTime),
                tenSeconds, (router, outcome, nanos) -> { });
    }

    public String routerAddress() {
        return address(routerEndpoint);
    }

    public RouteDecision.Builder decisionFor(FakeWorker worker) {
        GrpcEndpoint e = worker == workerA ? endpointA : worker == workerB ? endpointB : endpointP;
        return RouteDecision.newBuilder().setWorkerId(worker.id()).setWorkerEndpoint(address(e));
    }

    /** Adds worker-p as the prefill worker of {@code decision}. */
    public RouteDecision.Builder withPrefill(RouteDecision.Builder decision) {
        return decision.setPrefillWorkerId(workerP.id()).setPrefillEndpoint(address(endpointP));
    }

    /** worker-a unless excluded, then worker-b unless excluded, then no worker. */
    public Function<RouteRequest, RouteDecision> defaultDecision() {
        return r -> {
            if (!r.getExcludeList().contains("worker-a")) {
                return decisionFor(workerA).build();
            }
            if (!r.getExcludeList().contains("worker-b")) {
                return decisionFor(workerB).build();
            }
            return RouteDecision.getDefaultInstance();
        };
    }

    /** Back to the default decision and behaviours; recorded calls are cleared. */
    public void reset() {
        router.decide(defaultDecision());
        router.pushCapacity(router.capacity(java.util.Set.of()));
        router.clearRecords();
        for (FakeWorker w : List.of(workerA, workerB, workerP)) {
            w.behave(FakeWorker.Behaviour.NORMAL);
            w.clearRecords();
        }
        records.clear();
    }

    /** The text of the first {@code n} script tokens: what a request with max_tokens n receives. */
    public static String expectedText(int n) {
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = SCRIPT[i % SCRIPT.length];
        }
        return decode(ids);
    }

    public static String decode(int[] ids) {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER);
        return d.push(ids) + d.finish();
    }

    private void close() {
        routerEndpoint.close();
        endpointA.close();
        endpointB.close();
        endpointP.close();
    }
}
