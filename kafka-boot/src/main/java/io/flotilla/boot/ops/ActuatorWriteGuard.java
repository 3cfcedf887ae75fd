package io.flotilla.boot.ops;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/**
 * Guards the actuator's write operations: a request that is not a read ({@code GET}, {@code HEAD}, {@code OPTIONS}) to
 * a path under the actuator's base path passes only as {@link #decide} says. With a write key configured, the caller
 * must present it as {@code Authorization: Bearer KEY} (401 otherwise, from anywhere); without one, only loopback
 * callers pass (403 otherwise), so a service reached over a network is never open by default. Runs before every other
 * filter and never changes the exchange it passes on.
 */
public final class ActuatorWriteGuard implements WebFilter, Ordered {

    /** What {@link #decide} answers. */
    public enum Decision { PASS, UNAUTHORIZED, FORBIDDEN }

    private static final Set<HttpMethod> READS = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS);

    private final String basePath;
    private final byte[] key;

    /**
     * @param basePath the actuator's base path ({@code management.endpoints.web.base-path}, {@code /actuator})
     * @param writeKey the key callers present; null: loopback callers only
     */
    public ActuatorWriteGuard(String basePath, String writeKey) {
        this.basePath = basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
        this.key = writeKey == null ? null : writeKey.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param remote        the caller's address; null when unknown (refused like a remote caller)
     * @param authorization the {@code Authorization} header; null when absent
     */
    public Decision decide(HttpMethod method, String path, InetSocketAddress remote, String authorization) {
        boolean actuator = path.equals(basePath) || path.startsWith(basePath + "/");
        if (!actuator || READS.contains(method)) {
            return Decision.PASS;
        }
        if (key == null) {
            return remote != null && remote.getAddress() != null && remote.getAddress().isLoopbackAddress()
                    ? Decision.PASS : Decision.FORBIDDEN;
        }
        if (authorization == null || !authorization.startsWith("Bearer ")) {
            return Decision.UNAUTHORIZED;
        }
        byte[] presented = authorization.substring("Bearer ".length()).strip().getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(presented, key) ? Decision.PASS : Decision.UNAUTHORIZED;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        var request = exchange.getRequest();
        Decision d = decide(request.getMethod(), request.getPath().pathWithinApplication().value(),
                request.getRemoteAddress(), request.getHeaders().getFirst(HttpHeaders.AUTHORIZATION));
        if (d == Decision.PASS) {
            return chain.filter(exchange);
        }
        var response = exchange.getResponse();
        if (d == Decision.UNAUTHORIZED) {
            response.setStatusCode(HttpStatus.UNAUTHORIZED);
            response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"actuator\"");
        } else {
            response.setStatusCode(HttpStatus.FORBIDDEN);
        }
        return response.setComplete();
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
