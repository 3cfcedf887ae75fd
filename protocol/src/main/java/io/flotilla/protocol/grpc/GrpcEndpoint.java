package io.flotilla.protocol.grpc;

import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.grpc.util.MutableHandlerRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * One gRPC server on a TCP port with the standard health and server-reflection services (so {@code grpcurl
 * list} and {@code grpcurl describe} work without the .proto files). Services wrap it in their own
 * lifecycle; a worker JVM that simulates many workers runs one endpoint per worker. Every endpoint of a JVM
 * shares gRPC's default Netty event loops and call executor (or the {@link SharedEventLoop} it is put on):
 * an endpoint costs a listening socket, not a thread.
 *
 * <p>Services given at construction are served from the start; {@link #addService} adds one to a started
 * endpoint, so an endpoint can bind port 0 first and its owner advertise the port it got.
 */
public final class GrpcEndpoint implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GrpcEndpoint.class);

    private final String name;
    private final String host;
    private final int requestedPort;
    private final List<BindableService> services;
    private final List<ServerInterceptor> interceptors;
    private final Set<String> inlineMethods;
    private final HealthStatusManager health = new HealthStatusManager();
    private final MutableHandlerRegistry added = new MutableHandlerRegistry();
    private SharedEventLoop loop;
    private Server server;

    /**
     * @param inlineMethods full names of methods ({@code package.Service/Method}) whose handlers never
     *                      block: they run on the transport thread that read the call, which saves a
     *                      thread hand-off per call; every other method runs on the default executor.
     *                      Only when every method is inline is that guaranteed for every call (the
     *                      server then has no executor; the health service never blocks either)
     */
    public GrpcEndpoint(String name, String host, int port, List<BindableService> services,
                        List<ServerInterceptor> interceptors, Set<String> inlineMethods) {
        this.name = name;
        this.host = host;
        this.requestedPort = port;
        this.services = List.copyOf(services);
        this.interceptors = List.copyOf(interceptors);
        this.inlineMethods = Set.copyOf(inlineMethods);
    }

    public GrpcEndpoint(String name, String host, int port, List<BindableService> services,
                        List<ServerInterceptor> interceptors) {
        this(name, host, port, services, interceptors, Set.of());
    }

    public GrpcEndpoint(String name, String host, int port, List<BindableService> services) {
        this(name, host, port, services, List.of());
    }

    /** Serves on {@code loop}'s thread (set before {@link #start()}): see {@link SharedEventLoop}. */
    public synchronized GrpcEndpoint onLoop(SharedEventLoop loop) {
        this.loop = loop;
        return this;
    }

    /** Binds and starts; fails with a message naming the port when it is taken. */
    public synchronized GrpcEndpoint start() {
        if (server != null) {
            return this;
        }
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(host, requestedPort))
                .maxInboundMessageSize(64 * 1024 * 1024)
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .addService(health.getHealthService())
                .addService(ProtoReflectionServiceV1.newInstance())
                .fallbackHandlerRegistry(added);
        if (loop != null) {
            loop.serve(builder);
        }
        if (!inlineMethods.isEmpty() && inlineMethods.containsAll(methodsOf(services))) {
            // Every method inline: no executor at all. (A call executor supplier is not enough for that:
            // gRPC looks the method up on its default executor first and may run the handler there.)
            builder.directExecutor();
        } else if (!inlineMethods.isEmpty()) {
            Executor inline = Runnable::run;
            builder.callExecutor(new ServerCallExecutorSupplier() {
                @Override
                public <Q, R> Executor getExecutor(ServerCall<Q, R> call, Metadata headers) {
                    return inlineMethods.contains(call.getMethodDescriptor().getFullMethodName()) ? inline : null;
                }
            });
        }
        for (BindableService s : services) {
            builder.addService(ServerInterceptors.intercept(s, interceptors));
        }
        try {
            server = builder.build().start();
        } catch (IOException e) {
            throw new UncheckedIOException(name + ": cannot listen for gRPC on " + host + ":" + requestedPort
                    + " (" + e.getMessage() + ")", e);
        }
        log.info("{} serving gRPC on {}:{}", name, host, port());
        return this;
    }

    private static Set<String> methodsOf(List<BindableService> services) {
        Set<String> out = new java.util.HashSet<>();
        for (BindableService s : services) {
            s.bindService().getMethods().forEach(m -> out.add(m.getMethodDescriptor().getFullMethodName()));
        }
        return out;
    }

    /**
     * Serves {@code service} (behind this endpoint's interceptors) from now on, on a started endpoint too.
     * Until then its methods answer UNIMPLEMENTED; they run where the endpoint runs methods not named inline
     * (on the transport thread when every constructed method is inline).
     */
    public GrpcEndpoint addService(BindableService service) {
        added.addService(ServerInterceptors.intercept(service, interceptors));
        return this;
    }

    /** The bound port (useful when started on port 0). */
    public synchronized int port() {
        return server == null ? requestedPort : server.getPort();
    }

    public synchronized boolean running() {
        return server != null && !server.isShutdown();
    }

    /**
     * Marks {@code services} SERVING in gRPC health, for clients that check a service by name (the
     * server as a whole, "", always is while it runs).
     */
    public GrpcEndpoint serving(String... services) {
        for (String s : services) {
            health.setStatus(s, io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
        }
        return this;
    }

    /** Marks the endpoint as not serving in gRPC health, so clients stop sending before shutdown. */
    public void notServing() {
        health.enterTerminalState();
    }

    @Override
    public synchronized void close() {
        if (server == null) {
            return;
        }
        health.enterTerminalState();
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
        server = null;
    }
}
