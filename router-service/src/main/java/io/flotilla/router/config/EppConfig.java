package io.flotilla.router.config;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.flotilla.gateway.tokenize.ChatMlTemplate;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.gateway.tokenize.ModelTokenizations;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.router.epp.EndpointPicker;
import io.flotilla.router.epp.EppSettings;
import io.flotilla.router.epp.ExtProcService;
import io.flotilla.router.service.RequestRouter;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Clock;
import java.util.List;
import java.util.Map;

/**
 * The endpoint picker, when {@code flotilla.router.epp.enabled}: Envoy's ext_proc service on its own port
 * ({@code flotilla.router.epp.port}), beside RouterService and sharing its {@link RequestRouter} (one
 * membership, one booking ledger). Not a {@code BindableService} bean, so the RouterService server does
 * not serve it too. Tokenizers come from the workers' registration, as an unconfigured gateway model's do.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "flotilla.router.epp", name = "enabled", havingValue = "true")
public class EppConfig {

    @Bean(destroyMethod = "close")
    ModelTokenizations eppTokenizations() {
        return new ModelTokenizations(Map.of(), Map.of(Cl100kTokenizer.ID, new Cl100kTokenizer()),
                Map.of(ChatMlTemplate.ID, new ChatMlTemplate()), Clock.systemUTC());
    }

    @Bean(initMethod = "start", destroyMethod = "close")
    GrpcEndpoint eppGrpcEndpoint(RouterProperties properties, RequestRouter router, ModelTokenizations eppTokenizations) {
        EppSettings settings = properties.epp();
        EndpointPicker picker = new EndpointPicker(router, eppTokenizations, settings);
        // The Endpoint Picker Protocol's health services. Readiness is the router pod's own (its actuator
        // readiness probe): a router that is not ready is not among router-epp's endpoints, so no proxy reaches it.
        return new GrpcEndpoint("router-epp", "0.0.0.0", settings.port(), List.of(new ExtProcService(picker, settings)))
                .serving("liveness", "readiness", ExternalProcessorGrpc.SERVICE_NAME);
    }
}
