package io.flotilla.router.kube;

import jakarta.validation.constraints.NotBlank;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The router on Kubernetes ({@code flotilla.router.kubernetes.*}); off outside it.
 *
 * @param enabled   watch the worker pods of {@code namespace} (a worker without a pod leaves routing before its
 *                  lease lapses) and, when {@code configMap} is set, the runtime ConfigMap
 * @param namespace namespace of the worker pods and the ConfigMap (the router's own, on Kubernetes)
 * @param configMap name of the ConfigMap whose data sets the routing mode and weights at run time (while it does not
 *                  exist, routing runs as configured)
 */
public record KubernetesSettings(
        @DefaultValue("false") boolean enabled,
        @DefaultValue("flotilla") @NotBlank String namespace,
        @DefaultValue("flotilla-router-runtime") @NotBlank String configMap) {
}
