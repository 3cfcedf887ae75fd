package io.flotilla.gateway.bench;

import io.flotilla.gateway.GatewayApplication;
import io.flotilla.gateway.fakes.FakeCluster;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Route latency as the gateway sees it during a burst of long prompts, with nothing else on the
 * machine's request path: the gateway in this JVM in front of the {@link FakeCluster} (a fake router
 * that answers at once, fake workers streaming as fast as gRPC takes tokens). Any Route time beyond the
 * loopback round trip is the gateway's own queueing: its event loops, its gRPC I/O threads, its CPU.
 * Sends {@code requests} streamed completions of {@code promptTokens} token ids at once (the burst
 * under study: 300 requests of ~40k tokens in flight within seconds), after 200 warm-up requests, and prints
 * the Route attempt latency (p50/p99/max from the gateway's own timer, bucket resolution), the client's
 * TTFT and the burst's wall time. Extra arguments are passed to the gateway (e.g.
 * {@code --flotilla.gateway.prepare.inline-bytes=1GB} parses every body on the event loops).
 *
 * <pre>
 * java -cp … io.flotilla.gateway.bench.RouteUnderBurstBenchmark 300 40000 64 [--flotilla.gateway.…=…]
 * </pre>
 */
public final class RouteUnderBurstBenchmark {

    public static void main(String[] args) throws Exception {
        int requests = Integer.parseInt(args[0]);
        int promptTokens = Integer.parseInt(args[1]);
        int outputTokens = Integer.parseInt(args[2]);
        FakeCluster cluster = FakeCluster.get();
        List<String> gatewayArgs = new ArrayList<>(List.of("--server.port=0", "--management.server.port=0",
                "--logging.level.root=WARN", "--flotilla.gateway.router-address=" + cluster.routerAddress(),
                "--flotilla.gateway.records.enabled=false", "--flotilla.gateway.flow.max-in-flight=1000",
                "--flotilla.gateway.flow.max-routing=1000", "--flotilla.gateway.max-request-size=64MB"));
        gatewayArgs.addAll(Arrays.asList(args).subList(3, args.length));
        ConfigurableApplicationContext app = SpringApplication.run(GatewayApplication.class, gatewayArgs.toArray(String[]::new));
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        MeterRegistry registry = app.getBean(MeterRegistry.class);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try {
            for (int i = 0; i < 200; i++) {
                send(http, port, prompt(i, 256), 4).join();
            }
            registry.find("flotilla.gateway.route").timers().forEach(registry::remove);
            List<byte[]> bodies = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                bodies.add(prompt(1000 + i, promptTokens));
            }
            long start = System.nanoTime();
            List<CompletableFuture<double[]>> sent = new ArrayList<>();
            for (byte[] b : bodies) {
                sent.add(send(http, port, b, outputTokens));
            }
            double[] ttft = sent.stream().map(CompletableFuture::join).mapToDouble(r -> r[0]).sorted().toArray();
            double wallS = (System.nanoTime() - start) / 1e9;
            long failed = sent.stream().map(CompletableFuture::join).filter(r -> r[1] != 200).count();
            Timer route = registry.find("flotilla.gateway.route").tag("outcome", "answered").timer();
            StringBuilder outcomes = new StringBuilder();
            registry.find("flotilla.gateway.route").timers().forEach(t -> outcomes.append(t.getId().getTag("outcome"))
                    .append('=').append(t.count()).append(' '));
            registry.find("flotilla.gateway.routed").counters().forEach(c -> outcomes.append(c.getId().getTag("mode"))
                    .append('=').append((long) c.count()).append(' '));
            System.out.println("route attempts and modes: " + outcomes);
            System.out.printf("burst of %d × %d tokens: %.1f s, %d failed; TTFT p50 %.0f ms p99 %.0f ms; Route p50 ≤ %.1f ms, "
                            + "p99 ≤ %.1f ms, max %.1f ms (%d calls)%n", requests, promptTokens, wallS, failed,
                    ttft[ttft.length / 2], ttft[(int) (ttft.length * 0.99)], bucket(route, 0.5), bucket(route, 0.99),
                    route == null ? Double.NaN : route.max(TimeUnit.MILLISECONDS), route == null ? 0 : route.count());
        } finally {
            app.close();
            System.exit(0);
        }
    }

    /** The upper bound (ms) of the histogram bucket holding quantile {@code q}. */
    private static double bucket(Timer t, double q) {
        if (t == null || t.count() == 0) {
            return Double.NaN;
        }
        double target = q * t.count();
        for (CountAtBucket c : t.takeSnapshot().histogramCounts()) {
            if (c.count() >= target) {
                return c.bucket(TimeUnit.MILLISECONDS);
            }
        }
        return t.max(TimeUnit.MILLISECONDS);
    }

    private static byte[] prompt(long seed, int tokens) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder sb = new StringBuilder(tokens * 6 + 128).append("{\"model\":\"flotilla-sim\",\"prompt\":[");
        for (int i = 0; i < tokens; i++) {
            sb.append(i == 0 ? "" : ",").append(r.nextInt(100_000));
        }
        return sb.append("],\"max_tokens\":").append(64).append(",\"stream\":true}").toString().getBytes();
    }

    /** [TTFT ms, status]. */
    private static CompletableFuture<double[]> send(HttpClient http, int port, byte[] body, int outputTokens) {
        long start = System.nanoTime();
        double[] out = {Double.NaN, 0};
        return http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                        .timeout(Duration.ofMinutes(5)).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofLines()).thenApply(r -> {
            out[1] = r.statusCode();
            r.body().forEach(line -> {
                if (Double.isNaN(out[0]) && line.startsWith("data: {") && line.contains("\"text\"")) {
                    out[0] = (System.nanoTime() - start) / 1e6;
                }
            });
            return out;
        });
    }
}
