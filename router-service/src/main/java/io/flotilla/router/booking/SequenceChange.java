package io.flotilla.router.booking;

import io.flotilla.protocol.v1.RouterSync;
import io.flotilla.protocol.v1.SequenceAdded;
import io.flotilla.protocol.v1.SequenceFreed;
import io.flotilla.protocol.v1.SequencePrefillDone;

import java.util.Objects;
import java.util.Optional;

/**
 * One booking change made by a router replica. The shell publishes every change its own
 * {@link ActiveSequences} returns to {@code flotilla.router-sync} (key: router id, so one replica's
 * changes stay in order) and feeds every record it consumes to {@link BookingLedger#applyRemote};
 * a replica's own records come back as echoes and are ignored there.
 */
public sealed interface SequenceChange {

    /** The replica that made the change; unique per router process start. */
    String routerId();

    String requestId();

    /** Epoch milliseconds when the change was made (informational; ordering is the topic's). */
    long tsMillis();

    /**
     * A request was booked.
     *
     * @param prefillWorkerId   the separate prefill worker, "" when the request runs aggregated
     * @param newPrefillTokens  uncached prompt tokens, counted on the prefill worker until prefill is done
     * @param blocks            KV blocks counted on {@code workerId} until freed
     * @param seqHashes         the prompt's seq hashes, so other replicas' approximate indexes learn the route
     */
    record Added(String routerId, String requestId, long tsMillis, String workerId, String prefillWorkerId,
                 int newPrefillTokens, int blocks, long[] seqHashes) implements SequenceChange {
        public Added {
            Objects.requireNonNull(workerId, "workerId");
            prefillWorkerId = prefillWorkerId == null ? "" : prefillWorkerId;
            seqHashes = seqHashes == null ? new long[0] : seqHashes;
            if (newPrefillTokens < 0 || blocks < 0) {
                throw new IllegalArgumentException("booked amounts must not be negative");
            }
        }

        /** The worker whose prefill queue the new tokens join. */
        public String prefillTarget() {
            return prefillWorkerId.isEmpty() ? workerId : prefillWorkerId;
        }
    }

    /** The request's prefill finished: its prompt tokens stop counting. */
    record PrefillDone(String routerId, String requestId, long tsMillis) implements SequenceChange {
    }

    /** The request finished or was cancelled: it stops counting anywhere. */
    record Freed(String routerId, String requestId, long tsMillis) implements SequenceChange {
    }

    /** The wire form for {@code flotilla.router-sync}. */
    default RouterSync toProto() {
        RouterSync.Builder b = RouterSync.newBuilder().setRouterId(routerId()).setTs(tsMillis());
        if (this instanceof Added a) {
            SequenceAdded.Builder add = SequenceAdded.newBuilder().setRequestId(a.requestId())
                    .setWorkerId(a.workerId()).setPrefillWorkerId(a.prefillWorkerId())
                    .setNewPrefillTokens(a.newPrefillTokens()).setBlocks(a.blocks());
            for (long h : a.seqHashes()) {
                add.addSeqHashes(h);
            }
            b.setAdd(add);
        } else if (this instanceof PrefillDone p) {
            b.setPrefillDone(SequencePrefillDone.newBuilder().setRequestId(p.requestId()));
        } else if (this instanceof Freed f) {
            b.setFree(SequenceFreed.newBuilder().setRequestId(f.requestId()));
        }
        return b.build();
    }

    /** Reads a {@code flotilla.router-sync} value; empty when it carries no change this version knows. */
    static Optional<SequenceChange> fromProto(RouterSync m) {
        return switch (m.getChangeCase()) {
            case ADD -> {
                SequenceAdded a = m.getAdd();
                long[] hashes = new long[a.getSeqHashesCount()];
                for (int i = 0; i < hashes.length; i++) {
                    hashes[i] = a.getSeqHashes(i);
                }
                yield Optional.of(new Added(m.getRouterId(), a.getRequestId(), m.getTs(), a.getWorkerId(),
                        a.getPrefillWorkerId(), unsigned(a.getNewPrefillTokens()), unsigned(a.getBlocks()), hashes));
            }
            case PREFILL_DONE -> Optional.of(new PrefillDone(m.getRouterId(), m.getPrefillDone().getRequestId(), m.getTs()));
            case FREE -> Optional.of(new Freed(m.getRouterId(), m.getFree().getRequestId(), m.getTs()));
            case CHANGE_NOT_SET -> Optional.empty();
        };
    }

    /** uint32 on the wire; values above Integer.MAX_VALUE saturate. */
    private static int unsigned(int wire) {
        return (int) Math.min(Integer.MAX_VALUE, Integer.toUnsignedLong(wire));
    }
}
