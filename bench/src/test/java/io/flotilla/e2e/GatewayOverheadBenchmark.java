package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flotilla.gateway.bench.TtftSampling;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static io.flotilla.gateway.bench.TtftSampling.pct;

/**
 * What the gateway and router add to a request: TTFT through the gateway against TTFT of the same
 * request sent straight to a worker's gRPC Generate, at several concurrencies, and the most tokens
 * per second the gateway streams. Needs a running cluster whose engines cost (almost) nothing:
 *
 * <pre>
 * bin/flotilla up -d --workers 2 --sim-speedup 1000
 * ./mvnw -q -pl bench test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.flotilla.e2e.GatewayOverheadBenchmark -Dexec.args="1,16,64 200 3000"
 * </pre>
 * Arguments: concurrencies, requests per concurrency, warm-up requests each way (default 3,000: the
 * gateway's, router's and indexer's request paths must be JIT-compiled first). Prompts are 512 token ids, unique per request
 * (no cache effects), 16 output tokens for TTFT; the throughput run streams 512 tokens per request at
 * the highest concurrency.
 */
public final class GatewayOverheadBenchmark {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final AtomicLong IDS = new AtomicLong();

    public static void main(String[] args) throws Exception {
        String[] levels = (args.length > 0 ? args[0] : "1,16,64").split(",");
        int perLevel = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 3000;
        ManagedChannel worker = NettyChannelBuilder.forAddress("127.0.0.1", 7100).usePlaintext().build();
        warmUp(worker, warmup);
        System.out.println("concurrency | direct TTFT p50 / p99 (ms) | gateway TTFT p50 / p99 (ms) | added p50 / p99 (ms)");
        int max = 1;
        for (String l : levels) {
            int c = Integer.parseInt(l.trim());
            max = Math.max(max, c);
            List<Double> direct = TtftSampling.concurrently(c, perLevel, 0, () -> directTtft(worker, 16));
            List<Double> gateway = TtftSampling.concurrently(c, perLevel, 0, () -> gatewayTtft(16)[0]);
            System.out.printf("%d | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f%n", c, pct(direct, 50), pct(direct, 99),
                    pct(gateway, 50), pct(gateway, 99), pct(gateway, 50) - pct(direct, 50), pct(gateway, 99) - pct(direct, 99));
        }
        AtomicLong tokens = new AtomicLong();
        long start = System.nanoTime();
        TtftSampling.concurrently(max, Math.max(max * 2, 64), 0, () -> {
            double[] r = gatewayTtft(512);
            tokens.addAndGet((long) r[1]);
            return r[0];
        });
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("streamed through the gateway: %d tokens in %.1f s = %.0f tokens/s (%d concurrent streams)%n",
                tokens.get(), seconds, tokens.get() / seconds, max);
        worker.shutdownNow();
    }

    private static int[] prompt() {
        return TtftSampling.prompt(IDS.incrementAndGet());
    }

    private static double directTtft(ManagedChannel ch, int maxTokens) {
        return TtftSampling.directTtft(ch, "direct-" + IDS.incrementAndGet(), "", prompt(), maxTokens);
    }

    /** TTFT in ms and completion tokens of one streamed /v1/completions request. */
    private static double[] gatewayTtft(int maxTokens) throws Exception {
        var body = JSON.createObjectNode().put("model", "flotilla-sim").put("max_tokens", maxTokens).put("ignore_eos", true)
                .put("stream", true);
        body.set("stream_options", JSON.createObjectNode().put("include_usage", true));
        var arr = body.putArray("prompt");
        for (int t : prompt()) {
            arr.add(t);
        }
        long t0 = System.nanoTime();
        HttpResponse<java.io.InputStream> resp = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:8000/v1/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        double ttft = -1;
        double completion = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(resp.body()))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.startsWith("data: ") || line.equals("data: [DONE]")) {
                    continue;
                }
                JsonNode chunk = JSON.readTree(line.substring(6));
                if (ttft < 0 && chunk.path("choices").size() > 0 && !chunk.path("choices").get(0).path("text").asText().isEmpty()) {
                    ttft = (System.nanoTime() - t0) / 1e6;
                }
                if (chunk.hasNonNull("usage")) {
                    completion = chunk.get("usage").get("completion_tokens").asDouble();
                }
            }
        }
        return new double[]{ttft, completion};
    }

    private static void warmUp(ManagedChannel worker, int requests) throws Exception {
        for (int i = 0; i < requests; i++) {
            directTtft(worker, 4);
            gatewayTtft(4);
        }
    }
}
