package io.flotilla.router.client;

import java.util.List;

/**
 * The router's indexer clients, one per address: one indexer, or every shard of a sharded indexer. Each keeps its
 * own deadline and breaker; they are warmed and their deadline windows rolled together.
 */
public final class IndexerShards implements AutoCloseable {

    private final List<IndexerClient> clients;

    public IndexerShards(List<IndexerClient> clients) {
        if (clients.isEmpty()) {
            throw new IllegalArgumentException("no indexer address");
        }
        this.clients = List.copyOf(clients);
    }

    public List<IndexerClient> clients() {
        return clients;
    }

    /** The first (with one address, the only) client: the one the status endpoint and the legacy metrics describe. */
    public IndexerClient first() {
        return clients.get(0);
    }

    public boolean sharded() {
        return clients.size() > 1;
    }

    /** One warming query to each (see {@link IndexerClient#keepWarm}). */
    public void keepWarm() {
        clients.forEach(IndexerClient::keepWarm);
    }

    /** Moves each deadline's window on by one slice. */
    public void roll() {
        clients.forEach(c -> c.deadline().roll());
    }

    @Override
    public void close() {
        clients.forEach(IndexerClient::close);
    }
}
