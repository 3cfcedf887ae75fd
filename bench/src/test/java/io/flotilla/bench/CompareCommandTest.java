package io.flotilla.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.v1.ClearKvCacheRequest;
import io.flotilla.protocol.v1.ClearKvCacheResponse;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code bench compare} end to end: real HTTP to a fake gateway/router, real gRPC to fake router and workers. */
class CompareCommandTest {

    private final List<String> events = Collections.synchronizedList(new ArrayList<>());

    private final class Worker extends WorkerServiceGrpc.WorkerServiceImplBase {
        final String id;
        final FakeGateway gateway;

        Worker(String id, FakeGateway gateway) {
            this.id = id;
            this.gateway = gateway;
        }

        @Override
        public void clearKvCache(ClearKvCacheRequest request, StreamObserver<ClearKvCacheResponse> response) {
            events.add("clear " + id + " in mode " + gateway.mode());
            gateway.clearCaches();
            response.onNext(ClearKvCacheResponse.newBuilder().setBlocksCleared(4).build());
            response.onCompleted();
        }
    }

    @Test
    void comparesModesOnTheSameWorkloadWithColdCaches(@TempDir Path out) throws Exception {
        try (FakeGateway gw = new FakeGateway(2, 0, 0);
             GrpcEndpoint w0 = new GrpcEndpoint("w0", "127.0.0.1", 0, List.of(new Worker("worker-0", gw))).start();
             GrpcEndpoint w1 = new GrpcEndpoint("w1", "127.0.0.1", 0, List.of(new Worker("worker-1", gw))).start();
             GrpcEndpoint router = new GrpcEndpoint("router", "127.0.0.1", 0, List.of(new RouterServiceGrpc.RouterServiceImplBase() {
                 @Override
                 public void listWorkers(ListWorkersRequest request, StreamObserver<ListWorkersResponse> response) {
                     response.onNext(ListWorkersResponse.newBuilder()
                             .addWorkers(WorkerInfo.newBuilder().setWorkerId("worker-0").setEndpoint("127.0.0.1:" + w0.port())
                                     .setRole(WorkerRole.WORKER_ROLE_AGGREGATED).setRoutable(true))
                             .addWorkers(WorkerInfo.newBuilder().setWorkerId("worker-1").setEndpoint("127.0.0.1:" + w1.port())
                                     .setRole(WorkerRole.WORKER_ROLE_AGGREGATED).setRoutable(true))
                             .build());
                     response.onCompleted();
                 }
             })).start()) {
            StringWriter err = new StringWriter();
            picocli.CommandLine cl = BenchCli.commandLine();
            cl.setErr(new PrintWriter(err));
            int code = cl.execute("compare", "--modes", "round-robin,kv", "--router-grpc", "127.0.0.1:" + router.port(),
                    "--settle-ms", "0", "--groups", "3", "--prompts-per-group", "4", "--prefix-len", "64", "--suffix-len", "8",
                    "--output-len", "4", "--rate", "1000", "--url", gw.url(), "--router-url", gw.url(), "--out", out.toString(),
                    "--quiet", "--warmup", "3");
            assertThat(code).as(err.toString()).isZero();

            assertThat(gw.modePosts).containsExactly("round-robin", "kv", "kv");
            assertThat(events).containsExactly("clear worker-0 in mode round-robin", "clear worker-1 in mode round-robin",
                    "clear worker-0 in mode kv", "clear worker-1 in mode kv");
            assertThat(gw.bodies).hasSize(3 + 24);
            assertThat(gw.bodies.subList(0, 3)).as("warm-up before the first clear")
                    .allSatisfy(b -> assertThat(b.get("prompt").size()).isEqualTo(32));
            List<String> firstRun = gw.bodies.subList(3, 15).stream().map(b -> b.get("prompt").toString()).sorted().toList();
            List<String> secondRun = gw.bodies.subList(15, 27).stream().map(b -> b.get("prompt").toString()).sorted().toList();
            assertThat(secondRun).as("same workload in every run").isEqualTo(firstRun);
        }

        ObjectMapper json = new ObjectMapper();
        JsonNode rr = json.readTree(out.resolve("round-robin/summary.json").toFile());
        JsonNode kv = json.readTree(out.resolve("kv/summary.json").toFile());
        assertThat(rr.get("router_mode").asText()).isEqualTo("round-robin");
        assertThat(kv.get("router_mode").asText()).isEqualTo("kv");
        assertThat(rr.get("oracle_hit_rate").asDouble()).isEqualTo(kv.get("oracle_hit_rate").asDouble());
        // Cold caches (cleared before each run) can never beat the oracle; warm ones would.
        assertThat(rr.get("cached_tokens").asLong()).isLessThanOrEqualTo(rr.get("oracle_cached_tokens").asLong());
        assertThat(kv.get("cached_tokens").asLong()).as("caches were cleared before the second run")
                .isLessThanOrEqualTo(kv.get("oracle_cached_tokens").asLong());
        assertThat(out.resolve("round-robin/report.html")).exists();
        assertThat(out.resolve("kv/requests.csv")).exists();

        String md = Files.readString(out.resolve("compare.md"));
        assertThat(md).contains("| metric | round-robin | kv |", "| TTFT p50 (ms) |", "| TTFT p99 (ms) |", "| ITL p50 (ms, mean per request) |",
                "| ITL p99 (ms, mean per request) |", "| output tokens/s |", "| cache hit rate |", "| goodput (req/s) |", "Baseline for ratios: **round-robin**");
        assertThat(md.lines().filter(l -> l.startsWith("| TTFT p50")).findFirst().orElseThrow()).containsPattern("\\(1\\.00×\\) \\|.*×\\) \\|");
        String html = Files.readString(out.resolve("compare.html"));
        assertThat(html).contains("<svg", "TTFT CDF", "round-robin/report.html").doesNotContain("<script");
        assertThat(json.readTree(out.resolve("compare.json").toFile()).get("runs")).hasSize(2);
    }
}
