package io.flotilla.indexer.config;

import io.flotilla.indexer.service.IndexerProperties;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.grpc.BindableService;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcServerInterceptor;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.List;
import java.util.Set;

/**
 * The indexer's gRPC server: every {@link BindableService} bean is served on {@code flotilla.indexer.grpc-port}.
 * FindMatches reads the lock-free index in microseconds and Stats reads counters, so both run on the
 * transport thread, and with every method inline the server has no executor at all: with only
 * FindMatches inline, gRPC still looked each call's method up on its default executor (a thread
 * wake-up per call) and ran about one FindMatches in twenty there. Every call is observed: the caller's trace
 * continued, {@code grpc.server} timers.
 */
@Configuration(proxyBeanMethods = false)
class IndexerGrpcConfig {

    @Bean(initMethod = "start", destroyMethod = "close")
    GrpcEndpoint indexerGrpcEndpoint(IndexerProperties properties, ObjectProvider<BindableService> services,
                                     ObservationRegistry observations) {
        return new GrpcEndpoint("kv-indexer", "0.0.0.0", properties.grpcPort(), services.orderedStream().toList(),
                List.of(new ObservationGrpcServerInterceptor(observations)), Set.of(IndexerServiceGrpc.getFindMatchesMethod().getFullMethodName(),
                        IndexerServiceGrpc.getStatsMethod().getFullMethodName()));
    }
}
