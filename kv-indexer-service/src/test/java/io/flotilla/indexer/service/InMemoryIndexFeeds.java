package io.flotilla.indexer.service;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/** The in-memory twin of {@link KafkaIndexFeeds}: a test delivers records by hand and says when membership is read. */
final class InMemoryIndexFeeds implements IndexFeeds {

    volatile Sink membershipSink;
    volatile Sink kvSink;
    volatile Map<Integer, Long> kvFrom;
    volatile boolean caughtUp;
    volatile boolean healthy = true;
    volatile long unhealthySince = -1;
    final List<String> calls = new CopyOnWriteArrayList<>();

    @Override
    public void startMembership(Sink sink) {
        calls.add("membership");
        membershipSink = sink;
    }

    @Override
    public boolean membershipCaughtUp() {
        return caughtUp;
    }

    @Override
    public void startKvAndLoad(Map<Integer, Long> kvFrom, Sink sink) {
        calls.add("kv " + kvFrom);
        this.kvFrom = kvFrom;
        kvSink = sink;
    }

    @Override
    public boolean membershipHealthy() {
        return healthy;
    }

    @Override
    public long membershipUnhealthySinceMs() {
        return unhealthySince;
    }

    @Override
    public long kvLag() {
        return 0;
    }

    @Override
    public void close() {
        calls.add("close");
    }
}
