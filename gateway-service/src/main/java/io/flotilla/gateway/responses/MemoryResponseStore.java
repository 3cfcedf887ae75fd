package io.flotilla.gateway.responses;

import reactor.core.publisher.Mono;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Stored responses in this gateway's memory, for a gateway without a shared store: at most {@code maxResponses}
 * (the oldest goes first), each for {@code ttl} after it was stored, on an injected clock. One lock guards the
 * map; every operation is a few map steps.
 */
public final class MemoryResponseStore implements ResponseStore {

    private record Entry(StoredResponse response, Instant expires) {
    }

    private final int maxResponses;
    private final Duration ttl;
    private final Clock clock;
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>();

    public MemoryResponseStore(int maxResponses, Duration ttl, Clock clock) {
        if (maxResponses < 1) {
            throw new IllegalArgumentException("max responses must be positive: " + maxResponses);
        }
        this.maxResponses = maxResponses;
        this.ttl = ttl;
        this.clock = clock;
    }

    @Override
    public Mono<Void> put(StoredResponse response) {
        return Mono.fromRunnable(() -> {
            synchronized (entries) {
                Instant now = clock.instant();
                expire(now);
                entries.remove(response.id());
                entries.put(response.id(), new Entry(response, now.plus(ttl)));
                Iterator<Map.Entry<String, Entry>> oldest = entries.entrySet().iterator();
                while (entries.size() > maxResponses) {
                    oldest.next();
                    oldest.remove();
                }
            }
        });
    }

    @Override
    public Mono<StoredResponse> get(String owner, String id) {
        return Mono.fromCallable(() -> {
            synchronized (entries) {
                Entry e = entries.get(id);
                if (e == null || !clock.instant().isBefore(e.expires()) || !e.response().owner().equals(owner)) {
                    return null;
                }
                return e.response();
            }
        });
    }

    @Override
    public Mono<Boolean> delete(String owner, String id) {
        return Mono.fromCallable(() -> {
            synchronized (entries) {
                Entry e = entries.get(id);
                if (e == null || !clock.instant().isBefore(e.expires()) || !e.response().owner().equals(owner)) {
                    return false;
                }
                entries.remove(id);
                return true;
            }
        });
    }

    /** Entries in insertion order, each with the same ttl: the expired ones are a prefix. */
    private void expire(Instant now) {
        Iterator<Entry> it = entries.values().iterator();
        while (it.hasNext()) {
            if (now.isBefore(it.next().expires())) {
                return;
            }
            it.remove();
        }
    }

    /** Responses held now (expired ones not yet dropped included). */
    public int size() {
        synchronized (entries) {
            return entries.size();
        }
    }
}
