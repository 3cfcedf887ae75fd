package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a Zipkin server's collector does for the services, in the test JVM: takes {@code POST /api/v2/spans} (Zipkin v2
 * JSON, what Spring Boot's Zipkin exporter sends) and keeps every span, so a test can read a trace without starting
 * Zipkin (14 s on a busy 2-core machine).
 */
final class SpanCollector implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One span: its trace, its id and parent, its name and the service that reported it. */
    record Span(String traceId, String id, String parentId, String name, String service) {
    }

    private final HttpServer server;
    private final List<Span> spans = new CopyOnWriteArrayList<>();

    /** Listening on a free port of 127.0.0.1. */
    static SpanCollector start() {
        try {
            return new SpanCollector();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private SpanCollector() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/api/v2/spans", exchange -> {
            try (exchange) {
                if (!"POST".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                java.io.InputStream body = exchange.getRequestBody();
                if ("gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"))) {
                    body = new java.util.zip.GZIPInputStream(body); // the exporter compresses larger batches
                }
                try {
                    for (JsonNode s : JSON.readTree(body)) {
                        spans.add(new Span(s.path("traceId").asText(), s.path("id").asText(),
                                s.path("parentId").asText(null), s.path("name").asText(),
                                s.path("localEndpoint").path("serviceName").asText()));
                    }
                } catch (IOException | RuntimeException e) {
                    System.err.println("span collector: cannot read a batch: " + e);
                    exchange.sendResponseHeaders(400, -1);
                    return;
                }
                exchange.sendResponseHeaders(202, -1);
            }
        });
        server.start();
    }

    /** The endpoint for {@code management.tracing.export.zipkin.endpoint}. */
    String spansUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/api/v2/spans";
    }

    /** The spans of trace {@code traceId} received so far. */
    List<Span> trace(String traceId) {
        return spans.stream().filter(s -> s.traceId().equals(traceId)).toList();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
