package io.flotilla.gateway.responses;

import reactor.core.publisher.Mono;

/**
 * Where stored responses live: in this process ({@link MemoryResponseStore}) or in the Redis every gateway
 * replica shares ({@link RedisResponseStore}). A response is visible only to its owner: to anyone else it is
 * unknown, exactly as one that never existed or has expired.
 */
public interface ResponseStore {

    /** Keeps {@code response} for the store's time to live; fails when it could not be kept. */
    Mono<Void> put(StoredResponse response);

    /** The response {@code id} when {@code owner} may see it; empty when unknown, expired or another's. */
    Mono<StoredResponse> get(String owner, String id);

    /** Deletes the response {@code id} of {@code owner}; false when there was none to delete. */
    Mono<Boolean> delete(String owner, String id);
}
