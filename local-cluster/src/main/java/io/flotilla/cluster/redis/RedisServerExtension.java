package io.flotilla.cluster.redis;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * JUnit 5 extension giving integration tests a real Redis over TCP, as {@code KafkaBrokerExtension}
 * gives them Kafka: one server for the whole test JVM, started on first use, stopped and deleted when
 * the JVM ends. Tests share it, so they use unique key prefixes.
 *
 * <p>Without a {@code redis-server} binary: where one is required ({@code FLOTILLA_REQUIRE_REDIS=true},
 * which {@code .ci/run} sets after installing it, or {@code CI=true}) the test class <b>fails</b> with the
 * install hint; elsewhere it is aborted (reported as skipped) with the same hint on standard error, never
 * silently.
 *
 * <pre>
 * &#64;ExtendWith(RedisServerExtension.class)
 * class MyIT {
 *     &#64;Test void test(RedisServer redis) { … redis.uri() … }
 * }
 * </pre>
 */
public final class RedisServerExtension implements BeforeAllCallback, ParameterResolver {

    private static final Object LOCK = new Object();
    private static RedisServer shared;

    /** The JVM-wide server, started on first call; fails or aborts as the class comment says when there is no binary. */
    public static RedisServer sharedServer() {
        synchronized (LOCK) {
            if (shared == null) {
                requireBinary();
                Path dir;
                try {
                    dir = Files.createTempDirectory("flotilla-redis-");
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                RedisServer server = new RedisServer(RedisServer.Config.forTests(dir)).start();
                Runtime.getRuntime().addShutdownHook(new Thread(server::closeAndDelete, "redis-server-stop"));
                shared = server;
            }
            return shared;
        }
    }

    /** Fails where Redis is required, aborts elsewhere, when this machine has no redis-server. */
    public static void requireBinary() {
        if (RedisServer.binary().isPresent()) {
            return;
        }
        String message = "this test needs a real Redis and no redis-server was found: " + RedisServer.INSTALL_HINT;
        if ("true".equalsIgnoreCase(System.getenv("FLOTILLA_REQUIRE_REDIS")) || "true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException(message + " (.ci/install-redis installs it; CI must have it)");
        }
        System.err.println("SKIPPED (no redis-server): " + message);
        Assumptions.abort(message);
    }

    /** {@link #requireBinary()}, then {@code next}: for a test whose cluster starts a Redis of its own. */
    public static <T> T requireBinary(T next) {
        requireBinary();
        return next;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        sharedServer();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == RedisServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return sharedServer();
    }
}
