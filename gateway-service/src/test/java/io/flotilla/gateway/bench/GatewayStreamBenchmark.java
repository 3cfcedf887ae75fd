package io.flotilla.gateway.bench;

import io.flotilla.gateway.GatewayApplication;
import io.flotilla.gateway.fakes.FakeCluster;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import java.io.BufferedInputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.flotilla.gateway.bench.TtftSampling.pct;

/**
 * The gateway's own cost, with nothing behind it: the gateway in this JVM in front of the test
 * {@link FakeCluster} (a fake router that answers at once and fake workers that stream tokens as
 * fast as gRPC takes them, over real sockets). Measures
 * <ul>
 *   <li>TTFT of a streamed 512-token-id completion through the gateway against TTFT of the same
 *       request sent straight to the fake worker's {@code Generate} (the gateway's added latency), at
 *       1, 16 and 64 concurrent streams;</li>
 *   <li>streamed tokens per second through the gateway, and the CPU time of this whole JVM
 *       (client + gateway + fakes) per streamed token.</li>
 * </ul>
 *
 * <pre>
 * ./mvnw -q -pl gateway-service test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.flotilla.gateway.bench.GatewayStreamBenchmark -Dexec.args="1000 64 1024 4"
 * </pre>
 * Arguments: TTFT samples at concurrency 1, streams for the throughput run, tokens per stream,
 * throughput rounds (default 3; each sends two requests per stream), warm-up requests before the TTFT
 * samples (default 5,000, each sent both ways: the added TTFT is 3 ms after 300 and under 1 ms after
 * 5,000 — the request path's code must be JIT-compiled before it is measured), and the request kind:
 * {@code completions} (default: token-id prompts on {@code /v1/completions}), {@code chat} (the same
 * prompt as text on {@code /v1/chat/completions}) or {@code chat-parsed} (chat with a tool and the
 * {@code qwen3} reasoning parser: every streamed token goes through the reasoning split and the
 * hermes tool-call parse).
 */
public final class GatewayStreamBenchmark {

    private static final AtomicLong IDS = new AtomicLong();
    private static final String TOOL = "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":"
            + "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}";
    private static String kind = "completions";
    private static final Pattern COMPLETION_TOKENS = Pattern.compile("\"completion_tokens\":(\\d+)");

    public static void main(String[] args) throws Exception {
        int samples = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int streams = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        int tokens = args.length > 2 ? Integer.parseInt(args[2]) : 512;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        int warmup = args.length > 4 ? Integer.parseInt(args[4]) : 5000;
        kind = args.length > 5 ? args[5] : "completions";
        if (!List.of("completions", "chat", "chat-parsed").contains(kind)) {
            throw new IllegalArgumentException("request kind must be completions, chat or chat-parsed, not " + kind);
        }
        FakeCluster cluster = FakeCluster.get();
        ConfigurableApplicationContext app = SpringApplication.run(GatewayApplication.class,
                "--server.port=0", "--management.server.port=0", "--logging.level.root=WARN",
                "--flotilla.gateway.router-address=" + cluster.routerAddress(),
                "--flotilla.gateway.records.enabled=false",
                "--flotilla.gateway.models.flotilla-sim.reasoning-parser=" + (kind.equals("chat-parsed") ? "qwen3" : "none"),
                "--flotilla.gateway.flow.max-in-flight=" + Math.max(256, streams));
        System.out.println("request kind: " + kind);
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        String worker = cluster.decisionFor(cluster.workerA).getWorkerEndpoint();
        ManagedChannel direct = NettyChannelBuilder.forTarget(worker).usePlaintext().build();
        try {
            for (int i = 0; i < warmup; i++) {
                directTtft(direct, 4);
                stream(port, 4);
                if (i % 50 == 0) {
                    cluster.reset();
                }
            }
            List<Double> d = new ArrayList<>();
            List<Double> g = new ArrayList<>();
            for (int i = 0; i < samples; i++) {
                d.add(directTtft(direct, 16));
                g.add(stream(port, 16)[0]);
                if (i % 50 == 0) {
                    cluster.reset(); // the fakes record every request
                }
            }
            Collections.sort(d);
            Collections.sort(g);
            System.out.printf("TTFT at concurrency 1 (%d samples): direct p50 %.3f / p99 %.3f ms; through the gateway "
                            + "p50 %.3f / p99 %.3f ms; added p50 %.3f ms%n", samples, pct(d, 50), pct(d, 99),
                    pct(g, 50), pct(g, 99), pct(g, 50) - pct(d, 50));
            for (int c : new int[] {16, 64}) {
                cluster.reset();
                long cpu0 = cpuNanos();
                List<Double> dc = TtftSampling.concurrently(c, samples, c, () -> directTtft(direct, 16));
                long cpu1 = cpuNanos();
                List<Double> gc = TtftSampling.concurrently(c, samples, c, () -> stream(port, 16)[0]);
                long cpu2 = cpuNanos();
                double n = samples + c;
                System.out.printf("TTFT at concurrency %d (%d samples): direct p50 %.3f / p99 %.3f ms; through the gateway "
                                + "p50 %.3f / p99 %.3f ms; added p50 %.3f / p99 %.3f ms; CPU of this JVM per request: "
                                + "direct %.3f ms, through the gateway %.3f ms%n", c, samples, pct(dc, 50), pct(dc, 99),
                        pct(gc, 50), pct(gc, 99), pct(gc, 50) - pct(dc, 50), pct(gc, 99) - pct(dc, 99),
                        (cpu1 - cpu0) / 1e6 / n, (cpu2 - cpu1) / 1e6 / n);
            }

            for (int round = 0; round < rounds; round++) {
                cluster.reset();
                var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
                long cpu0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                ExecutorService pool = Executors.newFixedThreadPool(streams);
                List<Future<double[]>> futures = new ArrayList<>();
                for (int i = 0; i < streams * 2; i++) {
                    futures.add(pool.submit(() -> stream(port, tokens)));
                }
                long streamed = 0;
                for (Future<double[]> f : futures) {
                    streamed += (long) f.get()[1];
                }
                pool.shutdown();
                double seconds = (System.nanoTime() - t0) / 1e9;
                double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
                System.out.printf("streamed %d tokens in %.2f s = %.0f tokens/s (%d concurrent streams); "
                                + "CPU of this JVM %.1f µs per token (%.2f cores busy)%n", streamed, seconds,
                        streamed / seconds, streams, cpu * 1e6 / streamed, cpu / seconds);
            }
        } finally {
            direct.shutdownNow();
            app.close();
        }
        System.exit(0);
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static int[] prompt() {
        return TtftSampling.prompt(IDS.incrementAndGet());
    }

    private static double directTtft(ManagedChannel ch, int maxTokens) {
        return TtftSampling.directTtft(ch, "direct-" + IDS.incrementAndGet(), "flotilla-sim", prompt(), maxTokens);
    }

    /** TTFT in ms (first event carrying text) and the completion tokens (from the usage chunk) of one stream. */
    private static double[] stream(int port, int maxTokens) throws Exception {
        StringBuilder body = new StringBuilder("{\"model\":\"flotilla-sim\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
                + "\"ignore_eos\":true,\"max_tokens\":")
                .append(maxTokens);
        int[] p = prompt();
        boolean chat = !kind.equals("completions");
        if (chat) {
            body.append(",\"messages\":[{\"role\":\"user\",\"content\":\"")
                    .append(FakeCluster.decode(p).replace("\\", "\\\\").replace("\"", "\\\"")
                            .replaceAll("[\\x00-\\x1f]", " ")).append("\"}]");
            if (kind.equals("chat-parsed")) {
                body.append(",\"tools\":[").append(TOOL).append("]");
            }
            body.append("}");
        } else {
            body.append(",\"prompt\":[");
            for (int i = 0; i < p.length; i++) {
                body.append(i == 0 ? "" : ",").append(p[i]);
            }
            body.append("]}");
        }
        byte[] json = body.toString().getBytes(StandardCharsets.UTF_8);
        byte[] head = ("POST " + (chat ? "/v1/chat/completions" : "/v1/completions") + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/json\r\nContent-Length: " + json.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        double ttft = -1;
        long completion = 0;
        long t0 = System.nanoTime();
        Connection c = CONNECTIONS.get();
        if (c == null || c.socket.isClosed()) {
            c = new Connection(new Socket("127.0.0.1", port));
            CONNECTIONS.set(c);
        }
        {
            OutputStream out = c.socket.getOutputStream();
            out.write(head);
            out.write(json);
            out.flush();
            ChunkedLines in = c.in;
            String status = in.statusLine();
            if (!status.contains(" 200 ")) {
                throw new IllegalStateException(status);
            }
            String line;
            while ((line = in.next()) != null) {
                String field = chat ? "\"content\":\"" : "\"text\":\"";
                if (ttft < 0 && line.startsWith("data: {") && line.contains(field) && !line.contains(field + "\"")) {
                    ttft = (System.nanoTime() - t0) / 1e6;
                }
                Matcher m = COMPLETION_TOKENS.matcher(line);
                if (m.find()) {
                    completion = Long.parseLong(m.group(1));
                }
            }
        }
        return new double[]{ttft, completion};
    }

    /** One keep-alive connection per client thread, as an OpenAI client's connection pool keeps them. */
    private static final ThreadLocal<Connection> CONNECTIONS = new ThreadLocal<>();

    private static final class Connection {
        final Socket socket;
        final ChunkedLines in;

        Connection(Socket socket) throws java.io.IOException {
            this.socket = socket;
            socket.setTcpNoDelay(true);
            this.in = new ChunkedLines(socket.getInputStream());
        }
    }

    /** The lines of an HTTP/1.1 response with a chunked body, body lines across chunk boundaries joined. */
    private static final class ChunkedLines {
        private final BufferedInputStream in;
        private final StringBuilder pending = new StringBuilder();
        private final java.util.ArrayDeque<String> lines = new java.util.ArrayDeque<>();
        private boolean ended;

        ChunkedLines(java.io.InputStream in) {
            this.in = new BufferedInputStream(in, 64 * 1024);
        }

        String statusLine() throws java.io.IOException {
            ended = false;
            String status = rawLine();
            while (!rawLine().isEmpty()) {
                // headers
            }
            return status;
        }

        String next() throws java.io.IOException {
            while (lines.isEmpty() && !ended) {
                int size = Integer.parseInt(rawLine().trim(), 16);
                if (size == 0) {
                    rawLine(); // the empty line after the last chunk
                    ended = true;
                    break;
                }
                pending.append(new String(in.readNBytes(size), StandardCharsets.UTF_8));
                rawLine(); // CRLF after the chunk
                int nl;
                while ((nl = pending.indexOf("\n")) >= 0) {
                    lines.add(pending.substring(0, nl));
                    pending.delete(0, nl + 1);
                }
            }
            return lines.poll();
        }

        private String rawLine() throws java.io.IOException {
            StringBuilder b = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                if (c != '\r') {
                    b.append((char) c);
                }
            }
            return b.toString();
        }
    }
}
