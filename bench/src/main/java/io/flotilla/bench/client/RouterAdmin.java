package io.flotilla.bench.client;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flotilla.protocol.v1.ClearKvCacheRequest;
import io.flotilla.protocol.v1.KvTierStatsRequest;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@link ClusterAdmin} over the real interfaces: the router's management endpoint
 * ({@code GET|POST {routerUrl}/actuator/router}, JSON {@code {"mode": "..."}}), the router's gRPC
 * {@code RouterService.ListWorkers} and each worker's gRPC {@code WorkerService.ClearKvCache}
 * (plaintext, 10 s deadline).
 */
public final class RouterAdmin implements ClusterAdmin {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final String routerUrl;
    private final String routerGrpc;
    private final HttpClient http = CompletionClient.httpClient(null);

    public RouterAdmin(String routerUrl, String routerGrpc) {
        this.routerUrl = CompletionClient.trimSlash(routerUrl);
        this.routerGrpc = routerGrpc;
    }

    @Override
    public String routerMode() {
        return routerMode(http, routerUrl);
    }

    /** {@code mode} of {@code GET {routerUrl}/actuator/router}, or "unknown" when unreachable. */
    public static String routerMode(HttpClient http, String routerUrl) {
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create(routerUrl + "/actuator/router")).timeout(Duration.ofSeconds(3)).GET().build();
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200) {
                String mode = JSON.readTree(r.body()).path("mode").asText("");
                return mode.isEmpty() ? "unknown" : mode;
            }
        } catch (IOException | IllegalArgumentException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "unknown";
    }

    @Override
    public void setRouterMode(String mode) {
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create(routerUrl + "/actuator/router"))
                    .timeout(TIMEOUT)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("mode", mode))))
                    .build();
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() / 100 != 2) {
                throw new IllegalStateException("router refused mode '" + mode + "': HTTP " + r.statusCode() + " " + r.body());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot reach the router at " + routerUrl + " to set mode '" + mode + "': "
                    + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public List<Worker> workers() {
        ManagedChannel ch = channel(routerGrpc);
        try {
            return RouterServiceGrpc.newBlockingStub(ch).withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .listWorkers(ListWorkersRequest.getDefaultInstance())
                    .getWorkersList().stream()
                    .map(w -> new Worker(w.getWorkerId(), w.getEndpoint(), w.getRole().name()))
                    .toList();
        } catch (StatusRuntimeException e) {
            throw new IllegalStateException("RouterService.ListWorkers at " + routerGrpc + " failed: " + e.getStatus(), e);
        } finally {
            shutdown(ch);
        }
    }

    @Override
    public int clearKvCache(Worker worker) {
        if (worker.endpoint().isEmpty()) {
            throw new IllegalStateException("worker " + worker.id() + " has no endpoint; cannot clear its cache");
        }
        ManagedChannel ch = channel(worker.endpoint());
        try {
            return WorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .clearKvCache(ClearKvCacheRequest.getDefaultInstance()).getBlocksCleared();
        } catch (StatusRuntimeException e) {
            throw new IllegalStateException("WorkerService.ClearKvCache on " + worker.id() + " (" + worker.endpoint()
                    + ") failed: " + e.getStatus(), e);
        } finally {
            shutdown(ch);
        }
    }

    @Override
    public List<TierCount> kvTiers(Worker worker) {
        ManagedChannel ch = channel(worker.endpoint());
        try {
            return WorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .getKvTierStats(KvTierStatsRequest.getDefaultInstance()).getTiersList().stream()
                    .map(t -> new TierCount(t.getTier().name().replace("KV_TIER_", "").toLowerCase(java.util.Locale.ROOT),
                            t.getCapacityBlocks(), t.getHitTokens()))
                    .toList();
        } catch (StatusRuntimeException e) {
            throw new IllegalStateException("WorkerService.GetKvTierStats on " + worker.id() + " (" + worker.endpoint()
                    + ") failed: " + e.getStatus(), e);
        } finally {
            shutdown(ch);
        }
    }

    private static ManagedChannel channel(String target) {
        return ManagedChannelBuilder.forTarget(target).usePlaintext().build();
    }

    private static void shutdown(ManagedChannel ch) {
        ch.shutdownNow();
        try {
            ch.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
