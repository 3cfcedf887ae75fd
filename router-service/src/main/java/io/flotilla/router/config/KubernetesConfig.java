package io.flotilla.router.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.flotilla.router.kube.RuntimeConfigMap;
import io.flotilla.router.kube.WorkerPods;
import io.flotilla.router.service.RequestRouter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The router on Kubernetes, when {@code flotilla.router.kubernetes.enabled}: the worker pods as a second view of
 * membership, and the runtime ConfigMap. Both start with the context and fail its start when the API server
 * cannot list them within 30 s (RBAC: list/watch on pods and configmaps of the namespace).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "flotilla.router.kubernetes", name = "enabled", havingValue = "true")
public class KubernetesConfig {

    private static final long LIST_WAIT_SECONDS = 30;

    /** From the pod's service account (or a kubeconfig); a context that has a client already keeps it. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    KubernetesClient routerKubernetesClient() {
        return new KubernetesClientBuilder().build();
    }

    @Bean(destroyMethod = "close")
    WorkerPods workerPods(KubernetesClient routerKubernetesClient, RouterProperties p, RequestRouter router,
                          MeterRegistry registry) throws Exception {
        Gauge.builder("flotilla.router.workers_without_pod", router, r -> r.directory().withoutPod())
                .description("Workers whose lease runs but whose pod is gone: out of routing").register(registry);
        return new WorkerPods(routerKubernetesClient, p.kubernetes().namespace(), router::podsPresent).start(LIST_WAIT_SECONDS);
    }

    @Bean(destroyMethod = "close")
    RuntimeConfigMap runtimeConfigMap(KubernetesClient routerKubernetesClient, RouterProperties p, RequestRouter router,
                                      MeterRegistry registry) throws Exception {
        return new RuntimeConfigMap(routerKubernetesClient, p.kubernetes().namespace(), p.kubernetes().configMap(), router,
                registry).start(LIST_WAIT_SECONDS);
    }
}
