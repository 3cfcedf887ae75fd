package io.flotilla.router.config;

import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.grpc.SharedEventLoop;
import io.flotilla.router.api.RouterGrpcService;
import io.grpc.BindableService;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcServerInterceptor;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.List;

/**
 * The router's gRPC server: every {@link BindableService} bean is served on {@code flotilla.router.grpc-port}, each
 * call observed (the caller's trace continued, {@code grpc.server} timers).
 */
@Configuration(proxyBeanMethods = false)
class RouterGrpcConfig {

    @Bean(initMethod = "start", destroyMethod = "close")
    GrpcEndpoint routerGrpcEndpoint(RouterProperties properties, ObjectProvider<BindableService> services,
                                    ObjectProvider<SharedEventLoop> routerEventLoop, ObservationRegistry observations) {
        GrpcEndpoint endpoint = new GrpcEndpoint("router", "0.0.0.0", properties.grpcPort(), services.orderedStream().toList(),
                List.of(new ObservationGrpcServerInterceptor(observations)), RouterGrpcService.INLINE_METHODS);
        routerEventLoop.ifAvailable(endpoint::onLoop);
        return endpoint;
    }
}
