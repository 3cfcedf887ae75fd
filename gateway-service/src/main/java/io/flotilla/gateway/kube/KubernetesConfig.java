package io.flotilla.gateway.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.limits.KeyRateLimits;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.Optional;

/**
 * The gateway on Kubernetes, when {@code flotilla.gateway.kubernetes.enabled}: the runtime ConfigMap. It starts with
 * the context and fails its start when the API server cannot list it within 30 s (RBAC: get/list/watch on configmaps
 * of the namespace, k8s/base/gateway-rbac.yaml).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "flotilla.gateway.kubernetes", name = "enabled", havingValue = "true")
class KubernetesConfig {

    private static final long LIST_WAIT_SECONDS = 30;

    /** From the pod's service account (or a kubeconfig); a context that has a client already keeps it. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    KubernetesClient gatewayKubernetesClient() {
        return new KubernetesClientBuilder().build();
    }

    @Bean(destroyMethod = "close")
    RuntimeConfigMap gatewayRuntimeConfigMap(KubernetesClient gatewayKubernetesClient, GatewayProperties p, FlowPolicy policy,
                                             ObjectProvider<KeyRateLimits> limits, MeterRegistry registry) throws Exception {
        GatewayProperties.Kubernetes k = p.kubernetes();
        return new RuntimeConfigMap(gatewayKubernetesClient, k.namespace(), k.configMap(), policy,
                Optional.ofNullable(limits.getIfAvailable()), registry).start(LIST_WAIT_SECONDS);
    }
}
