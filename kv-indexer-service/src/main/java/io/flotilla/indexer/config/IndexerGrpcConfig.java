package io.flotilla.indexer.config;

import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.grpc.BindableService;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The indexer's gRPC server: every {@link BindableService} bean is served on {@code flotilla.indexer.grpc-port}. */
@Configuration(proxyBeanMethods = false)
class IndexerGrpcConfig {

    @Bean(initMethod = "start", destroyMethod = "close")
    GrpcEndpoint indexerGrpcEndpoint(IndexerProperties properties, ObjectProvider<BindableService> services) {
        return new GrpcEndpoint("kv-indexer", "0.0.0.0", properties.grpcPort(), services.orderedStream().toList());
    }
}
