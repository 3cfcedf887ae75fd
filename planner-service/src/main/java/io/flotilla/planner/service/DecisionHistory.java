package io.flotilla.planner.service;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/** The last {@code capacity} decisions, newest first. Thread-safe. */
public final class DecisionHistory {

    private final int capacity;
    private final ArrayDeque<DecisionRecord> records = new ArrayDeque<>();

    public DecisionHistory(int capacity) {
        this.capacity = Math.max(1, capacity);
    }

    public synchronized void add(DecisionRecord r) {
        records.addFirst(r);
        while (records.size() > capacity) {
            records.removeLast();
        }
    }

    public synchronized List<DecisionRecord> newest(int limit) {
        List<DecisionRecord> out = new ArrayList<>();
        Iterator<DecisionRecord> it = records.iterator();
        while (it.hasNext() && out.size() < limit) {
            out.add(it.next());
        }
        return out;
    }
}
