package io.flotilla.gateway.responses;

import io.flotilla.gateway.limits.LimitStore;
import io.lettuce.core.SetArgs;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import java.time.Duration;

/**
 * Stored responses in the Redis the gateway replicas share (the limits' store and its connection): one key per
 * response, {@code <prefix>resp:<id>}, holding the record as JSON and expiring after {@code ttl} (Redis drops it;
 * nothing sweeps). Any replica reads what any other stored. A record larger than {@code maxBytes} is not stored
 * (the put fails). Unlike the limits, nothing falls back to local memory when the store cannot be reached: a
 * response kept in one replica alone would be unknown to the others, so the caller sees the failure.
 */
public final class RedisResponseStore implements ResponseStore {

    static final String CALL = "responses";

    private final LimitStore store;
    private final JsonMapper json;
    private final String prefix;
    private final Duration ttl;
    private final long maxBytes;

    public RedisResponseStore(LimitStore store, JsonMapper json, String keyPrefix, Duration ttl, long maxBytes) {
        this.store = store;
        this.json = json;
        this.prefix = keyPrefix + "resp:";
        this.ttl = ttl;
        this.maxBytes = maxBytes;
    }

    @Override
    public Mono<Void> put(StoredResponse response) {
        return Mono.defer(() -> {
            byte[] record = json.writeValueAsBytes(response);
            if (record.length > maxBytes) {
                return Mono.error(new IllegalStateException("the response is " + record.length
                        + " bytes, over the store's limit of " + maxBytes));
            }
            return Mono.fromFuture(() -> store.call(CALL, c -> c.async().set(prefix + response.id(), record,
                    SetArgs.Builder.px(ttl.toMillis())))).then();
        });
    }

    @Override
    public Mono<StoredResponse> get(String owner, String id) {
        return Mono.fromFuture(() -> store.call(CALL, c -> c.async().get(prefix + id)))
                .map(bytes -> json.readValue(bytes, StoredResponse.class))
                .filter(r -> r.owner().equals(owner));
    }

    @Override
    public Mono<Boolean> delete(String owner, String id) {
        return get(owner, id)
                .flatMap(r -> Mono.fromFuture(() -> store.call(CALL, c -> c.async().del(prefix + id))).map(n -> n > 0))
                .defaultIfEmpty(false);
    }
}
