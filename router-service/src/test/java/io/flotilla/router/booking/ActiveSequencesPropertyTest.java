package io.flotilla.router.booking;

import io.flotilla.router.core.ActiveLoad;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ActiveSequences against a naive reference model, and two replicas syncing through changes. Each
 * try replays a seeded random history of local operations, clock moves and expiries.
 */
class ActiveSequencesPropertyTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private static final Duration TTL = Duration.ofSeconds(60);

    /** The reference: live bookings in plain maps, loads recomputed from scratch. */
    private static final class Reference {
        record Entry(String worker, String prefillTarget, int tokens, int blocks, boolean prefillDone, Instant touched) {
        }

        final Map<String, Entry> live = new HashMap<>();

        Map<String, ActiveLoad> loads() {
            Map<String, ActiveLoad> out = new HashMap<>();
            for (Entry e : live.values()) {
                out.merge(e.worker(), new ActiveLoad(0, 0, e.blocks(), 1), (a, b) -> a.plus(b, 1));
                if (!e.prefillDone()) {
                    out.merge(e.prefillTarget(), new ActiveLoad(e.tokens(), 1, 0, 0), (a, b) -> a.plus(b, 1));
                }
            }
            out.values().removeIf(ActiveLoad::isEmpty);
            return out;
        }
    }

    @Property(seed = "20250103", tries = 300)
    void loadsAlwaysEqualTheSumOverLiveBookingsAndPeersConverge(@ForAll long seed) {
        Random rnd = new Random(seed);
        ActiveSequences a = new ActiveSequences("a", TTL, Duration.ofSeconds(10));
        ActiveSequences b = new ActiveSequences("b", TTL, Duration.ofSeconds(10));
        Reference ref = new Reference();
        List<SequenceChange> wire = new ArrayList<>();
        Instant now = T0;
        int nextId = 0;
        List<String> open = new ArrayList<>(); // request ids are never reused after their release
        for (int step = 0; step < 200; step++) {
            boolean fresh = open.isEmpty() || rnd.nextInt(3) == 0;
            String id = fresh ? "r" + nextId++ : open.get(rnd.nextInt(open.size()));
            ActiveSequences local = rnd.nextBoolean() ? a : b;
            switch (rnd.nextInt(6)) {
                case 0, 1 -> { // route, or re-route (migration) of a request still open
                    String w = "w" + rnd.nextInt(4);
                    String p = rnd.nextInt(3) == 0 ? "p" + rnd.nextInt(2) : "";
                    int tokens = rnd.nextInt(5000);
                    int blocks = rnd.nextInt(400);
                    wire.add(local.add(id, w, p, tokens, blocks, new long[0], now));
                    ref.live.put(id, new Reference.Entry(w, p.isEmpty() ? w : p, tokens, blocks, false, now));
                    if (fresh) {
                        open.add(id);
                    }
                }
                case 2 -> {
                    Instant at = now;
                    wire.add(local.markPrefillDone(id, at));
                    ref.live.computeIfPresent(id, (k, e) -> new Reference.Entry(e.worker(), e.prefillTarget(),
                            e.tokens(), e.blocks(), true, at));
                }
                case 3 -> {
                    wire.add(local.free(id, now));
                    ref.live.remove(id);
                    open.remove(id);
                }
                case 4 -> now = now.plusSeconds(rnd.nextInt(20));
                default -> {
                    Instant at = now;
                    a.expire(at);
                    b.expire(at);
                    ref.live.values().removeIf(e -> !e.touched().plus(TTL).isAfter(at));
                }
            }
            // deliver everything at once: both replicas must agree with the reference after every step
            for (SequenceChange c : wire) {
                a.apply(c, now);
                b.apply(c, now);
            }
            wire.clear();
            assertThat(a.loads()).as("replica a at step %d", step).isEqualTo(ref.loads());
            assertThat(b.loads()).as("replica b at step %d", step).isEqualTo(ref.loads());
            assertThat(a.loads().values()).allSatisfy(l -> assertThat(l.prefillTokens() >= 0 && l.decodeBlocks() >= 0
                    && l.prefillRequests() >= 0 && l.decodeRequests() >= 0).isTrue());
        }
    }
}
