package io.flotilla.gateway.limits;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The Redis every gateway replica shares its limits in, as one port: {@link #call} runs an operation
 * on the connection when the store may be used now, and otherwise fails at once with
 * {@link StoreUnavailable}, so a caller falls back to its local count within the same call.
 *
 * <p>"May be used now" is: a connection is open and the circuit breaker lets calls through. Commands
 * are rejected at once while the connection is down (Lettuce's {@code REJECT_COMMANDS}, not queued
 * for a reconnect), each command has a {@code timeout} and so has each call as a whole (an operation of
 * several commands, such as a compare-and-swap that retries, included), and after failing calls the breaker skips the
 * store for {@code openFor} (then lets one call through to try it). A store that is down therefore
 * costs a request nothing but a breaker check. Lettuce reconnects by itself once connected; the first
 * connection is retried in the background until it succeeds, so a gateway starts and serves without
 * its store.
 *
 * <p>Pub/sub (release notices of the in-flight limit) uses a second connection; a subscriber is
 * subscribed again after each reconnect.
 */
public final class LimitStore implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LimitStore.class);
    static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    /** The store was not tried: not connected, or the breaker is open. */
    public static final class StoreUnavailable extends RuntimeException {
        StoreUnavailable(String message) {
            super(message, null, false, false);
        }
    }

    private final RedisURI uri;
    private final Duration timeout;
    private final ClientResources resources;
    private final RedisClient client;
    private final CircuitBreaker breaker;
    private final LimitMetrics metrics;
    private final ScheduledExecutorService connector;
    private final List<Consumer<StatefulRedisConnection<String, byte[]>>> onConnect = new CopyOnWriteArrayList<>();
    private final Map<String, Consumer<String>> subscriptions = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile StatefulRedisConnection<String, byte[]> connection;
    private volatile StatefulRedisPubSubConnection<String, String> pubsub;
    private volatile String lastError = "not connected yet";
    private volatile boolean closed;

    /**
     * @param uri            {@code redis://host:port}
     * @param timeout        longest wait for one command
     * @param connectTimeout longest wait for a connection
     * @param openFor        how long the breaker skips the store after failing calls
     */
    public LimitStore(String uri, Duration timeout, Duration connectTimeout, Duration openFor, LimitMetrics metrics) {
        this.uri = RedisURI.create(uri);
        this.timeout = timeout;
        this.uri.setTimeout(timeout);
        this.metrics = metrics;
        this.resources = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();
        this.client = RedisClient.create(resources, this.uri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).keepAlive(true).tcpNoDelay(true).build())
                .build());
        this.breaker = CircuitBreaker.of("limits-store", CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(10)
                .minimumNumberOfCalls(3)
                .failureRateThreshold(50)
                .waitDurationInOpenState(openFor)
                .permittedNumberOfCallsInHalfOpenState(1)
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                .build());
        this.connector = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "limits-store-connect");
            t.setDaemon(true);
            return t;
        });
        metrics.storeGauge(this);
        connector.execute(this::connect);
    }

    CircuitBreaker breaker() {
        return breaker;
    }

    /** Runs {@code action} with the connection now if there is one, and after every (re)connect. */
    void onConnect(Consumer<StatefulRedisConnection<String, byte[]>> action) {
        synchronized (onConnect) { // with connected(): every action sees every connection, before calls may use it
            onConnect.add(action);
            StatefulRedisConnection<String, byte[]> c = connection;
            if (c != null) {
                action.accept(c);
            }
        }
    }

    /** Runs the connect actions on {@code c}, then lets calls use it: up() is true only once they ran. */
    private void connected(StatefulRedisConnection<String, byte[]> c) {
        synchronized (onConnect) {
            onConnect.forEach(a -> a.accept(c));
            connection = c;
        }
    }

    /**
     * {@code op} on the connection when the store may be used now, timed and recorded by the breaker
     * and in {@code flotilla_gateway_limits_store_seconds{limit}}; else a future failed with
     * {@link StoreUnavailable}. A call that has not answered within {@code timeout} fails with a
     * {@link java.util.concurrent.TimeoutException} then, whatever its commands are still doing: the
     * caller decides locally within the timeout (an operation that still lands later has only counted a
     * request twice, on the safe side).
     */
    public <T> CompletableFuture<T> call(String limit, Function<StatefulRedisConnection<String, byte[]>, CompletionStage<T>> op) {
        StatefulRedisConnection<String, byte[]> c = connection;
        if (c == null || !c.isOpen()) {
            return CompletableFuture.failedFuture(new StoreUnavailable("not connected: " + lastError));
        }
        if (!breaker.tryAcquirePermission()) {
            return CompletableFuture.failedFuture(new StoreUnavailable("skipped after failing calls (breaker "
                    + breaker.getState() + ")"));
        }
        long start = System.nanoTime();
        CompletionStage<T> stage;
        try {
            stage = op.apply(c);
        } catch (RuntimeException e) {
            stage = CompletableFuture.failedFuture(e);
        }
        return stage.toCompletableFuture().copy().orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((v, e) -> {
            long nanos = System.nanoTime() - start;
            if (e == null) {
                breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
            } else {
                breaker.onError(nanos, TimeUnit.NANOSECONDS, unwrap(e));
                lastError = String.valueOf(unwrap(e).getMessage());
            }
            metrics.storeCall(limit, e == null ? "ok" : "failed", nanos);
        });
    }

    /**
     * {@code listener} gets every message on {@code channel}; kept across reconnects. Messages sent while
     * this gateway was disconnected are lost (the callers' rechecks cover them).
     */
    void subscribe(String channel, Consumer<String> listener) {
        subscriptions.put(channel, listener);
        StatefulRedisPubSubConnection<String, String> p = pubsub;
        if (p != null) {
            p.async().subscribe(channel);
        }
    }

    /** Whether calls may go to the store now (connected, breaker not open); for health and metrics. */
    public boolean up() {
        StatefulRedisConnection<String, byte[]> c = connection;
        return c != null && c.isOpen() && breaker.getState() != CircuitBreaker.State.OPEN
                && breaker.getState() != CircuitBreaker.State.FORCED_OPEN;
    }

    /** What {@code limits} health shows. */
    public Map<String, Object> details() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("store", uri.getHost() + ":" + uri.getPort());
        StatefulRedisConnection<String, byte[]> c = connection;
        d.put("connection", c == null ? "never connected" : c.isOpen() ? "open" : "reconnecting");
        d.put("breaker", breaker.getState().name());
        if (!up()) {
            d.put("last_error", lastError);
            d.put("limits", "counted by this gateway alone until the store answers (fail-open)");
        }
        return d;
    }

    private void connect() {
        if (closed) {
            return;
        }
        try {
            StatefulRedisConnection<String, byte[]> c = client.connect(CODEC);
            StatefulRedisPubSubConnection<String, String> p = client.connectPubSub();
            p.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    Consumer<String> l = subscriptions.get(channel);
                    if (l != null) {
                        l.accept(message);
                    }
                }
            });
            c.addListener(new io.lettuce.core.RedisConnectionStateListener() {
                @Override
                public void onRedisConnected(io.lettuce.core.RedisChannelHandler<?, ?> connection,
                                             java.net.SocketAddress socketAddress) {
                    log.info("limits store {} reconnected", socketAddress);
                    connected(c);
                }
            });
            subscriptions.keySet().forEach(ch -> p.async().subscribe(ch));
            pubsub = p;
            connected(c);
            log.info("limits store {}:{} connected: limits are shared by every gateway", uri.getHost(), uri.getPort());
        } catch (RuntimeException e) {
            lastError = String.valueOf(e.getMessage());
            log.warn("limits store {}:{} unreachable ({}); limits are counted by this gateway alone until it answers",
                    uri.getHost(), uri.getPort(), lastError);
            if (!closed) {
                connector.schedule(this::connect, 2, TimeUnit.SECONDS);
            }
        }
    }

    static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    @Override
    public void close() {
        closed = true;
        connector.shutdownNow();
        StatefulRedisPubSubConnection<String, String> p = pubsub;
        if (p != null) {
            p.closeAsync();
        }
        StatefulRedisConnection<String, byte[]> c = connection;
        if (c != null) {
            c.closeAsync();
        }
        client.shutdownAsync(0, 2, TimeUnit.SECONDS).thenRun(() -> resources.shutdown(0, 2, TimeUnit.SECONDS));
    }
}
