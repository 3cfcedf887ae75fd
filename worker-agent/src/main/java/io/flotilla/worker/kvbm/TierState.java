package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;

import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.List;

/**
 * What the lower tiers hold and every change to it, with no bytes, no threads and no lock: the host and
 * disk slot books ({@link TierSlots}), the tiers' totals and the {@link TierEvents} each change announces.
 * The byte copies that a change plans (an offload's host copy and disk demotion, an onboarding's reads)
 * happen elsewhere ({@link LowerTiers} on its {@link TierIo}) and come back as results to
 * {@link #commit} or {@link #finish}.
 *
 * <p>One writer: the tiers' owner (the engine's driver) makes every call, so events leave in the order
 * the state changed; only {@link #close()} may come from elsewhere. Totals ({@link TierStats}) may be read from
 * any thread.
 */
final class TierState {

    /** One demotion: a host victim written to disk slot {@code diskSlot} before its host slot is reused. */
    record Demotion(long seqHash, int checksum, int diskSlot) {
    }

    /**
     * The slots a batch of offloads copies into: {@code hostSlot[i]} for block i (-1: no copy), and the disk
     * write that saves the host victim it displaces ({@code demote[i]}, null when none).
     */
    record OffloadPlan(long[] seqHashes, int[] hostSlot, Demotion[] demote) {
    }

    private final TierSlots host;
    private final TierSlots disk;
    private final TierEvents events;
    private final long bytesPerBlock;
    private final TierStats hostStats = new TierStats(KvTier.KV_TIER_HOST);
    private final TierStats diskStats = new TierStats(KvTier.KV_TIER_DISK);
    /** Set by {@link #close()}, which may come from any thread (the owner's shutdown). */
    private volatile boolean closed;

    /** @param disk null without a disk tier */
    TierState(TierSlots host, TierSlots disk, TierEvents events, long bytesPerBlock) {
        this.host = host;
        this.disk = disk;
        this.events = events;
        this.bytesPerBlock = bytesPerBlock;
    }

    /** Puts the blocks a previous run left on disk back in the index, the newest copy of a block winning. */
    int restore(List<DiskStore.Found> found) {
        List<DiskStore.Found> byAge = found.stream().sorted(Comparator.comparingLong(DiskStore.Found::writeSeq)).toList();
        int restored = 0;
        for (DiskStore.Found f : byAge) {
            int existing = disk.lookup(f.seqHash());
            if (existing >= 0) {
                disk.drop(existing); // an older copy of the same block: the newest write wins
                events.removed(KvTier.KV_TIER_DISK, f.seqHash());
                restored--;
            }
            disk.restore(f.slot(), f.seqHash(), f.checksum());
            events.stored(KvTier.KV_TIER_DISK, f.seqHash());
            restored++;
        }
        disk.sortFreeStack();
        return restored;
    }

    /** The best lower tier holding {@code seqHash}: host, disk, or UNSPECIFIED when neither does. */
    KvTier locate(long seqHash) {
        if (host.lookup(seqHash) >= 0) {
            return KvTier.KV_TIER_HOST;
        }
        if (disk != null && disk.lookup(seqHash) >= 0) {
            return KvTier.KV_TIER_DISK;
        }
        return KvTier.KV_TIER_UNSPECIFIED;
    }

    void touch(long seqHash) {
        int slot = host.lookup(seqHash);
        if (slot >= 0) {
            host.touch(slot);
        }
    }

    /** True unless host memory holds the block already (which then counts as used) or the tiers closed. */
    boolean wantsOffload(long seqHash) {
        int slot = host.lookup(seqHash);
        if (slot >= 0) {
            host.touch(slot);
            return false;
        }
        return !closed;
    }

    /**
     * Reserves a host slot (and, for its victim, a disk slot) for each copy of the batch. Events go out
     * tier by tier (every host removal, then every disk removal), so each tier's removals of one batch
     * share one {@code BlockRemoved}: interleaved per block they would each seal an event of their own.
     * Only blocks of different tiers change places, which no tier's index sees.
     */
    OffloadPlan reserve(long[] seqHashes) {
        int n = seqHashes.length;
        int[] hostSlot = new int[n];
        Demotion[] demote = new Demotion[n];
        TierSlots.Victim[] victim = new TierSlots.Victim[1];
        TierSlots.Victim[] diskVictim = new TierSlots.Victim[1];
        long[] diskRemoved = new long[n];
        int diskRemovedCount = 0;
        for (int i = 0; i < n; i++) {
            hostSlot[i] = -1;
            if (closed || host.lookup(seqHashes[i]) >= 0) {
                continue;
            }
            int slot = host.reserve(victim);
            if (slot < 0) {
                continue; // every host block is being read: skip this copy
            }
            hostSlot[i] = slot;
            if (victim[0] != null) {
                events.removed(KvTier.KV_TIER_HOST, victim[0].seqHash());
                demote[i] = demotionOf(victim[0], diskVictim);
                if (demote[i] != null && diskVictim[0] != null) {
                    diskRemoved[diskRemovedCount++] = diskVictim[0].seqHash();
                }
            }
        }
        for (int i = 0; i < diskRemovedCount; i++) {
            events.removed(KvTier.KV_TIER_DISK, diskRemoved[i]);
        }
        return new OffloadPlan(seqHashes, hostSlot, demote);
    }

    /**
     * The disk write that saves host victim {@code v}, or null when none is needed or possible;
     * {@code diskVictim[0]} is then the block its disk slot held (null when the slot was free).
     */
    private Demotion demotionOf(TierSlots.Victim v, TierSlots.Victim[] diskVictim) {
        diskVictim[0] = null;
        if (disk == null) {
            return null;
        }
        int existing = disk.lookup(v.seqHash());
        if (existing >= 0) {
            disk.touch(existing);
            return null;
        }
        int slot = disk.reserve(diskVictim);
        if (slot < 0) {
            return null;
        }
        return new Demotion(v.seqHash(), v.checksum(), slot);
    }

    /**
     * Publishes a planned batch once its copies ended: host stores first, then disk stores (see
     * {@link #reserve}). {@code checksum[i]} is block i's host copy's; {@code demoted[i]} whether its
     * victim's disk write succeeded. A block stored meanwhile by another copy keeps that copy.
     */
    void commit(OffloadPlan plan, boolean[] demoted, int[] checksum) {
        for (int i = 0; i < plan.seqHashes().length; i++) {
            int slot = plan.hostSlot()[i];
            if (slot < 0) {
                continue;
            }
            long seqHash = plan.seqHashes()[i];
            if (host.lookup(seqHash) >= 0) {
                host.abandon(slot);
            } else {
                host.commit(slot, seqHash, checksum[i]);
                events.stored(KvTier.KV_TIER_HOST, seqHash);
                hostStats.offloadedBlocks.incrementAndGet();
                hostStats.offloadedBytes.addAndGet(bytesPerBlock);
            }
        }
        for (int i = 0; i < plan.seqHashes().length; i++) {
            Demotion d = plan.demote()[i];
            if (d == null) {
                continue;
            }
            if (demoted[i] && disk.lookup(d.seqHash()) < 0) {
                disk.commit(d.diskSlot(), d.seqHash(), d.checksum());
                events.stored(KvTier.KV_TIER_DISK, d.seqHash());
                diskStats.offloadedBlocks.incrementAndGet();
                diskStats.offloadedBytes.addAndGet(bytesPerBlock);
            } else {
                disk.abandon(d.diskSlot());
            }
        }
    }

    /**
     * Pins the source slots of an onboarding (block i from {@code tiers[i]}, as {@link #locate} said) until
     * {@link #finish}; the job records each slot and its expected checksum for the copies.
     */
    Onboarding pin(long[] seqHashes, KvTier[] tiers, ByteBuffer[] into) {
        int n = seqHashes.length;
        int[] slots = new int[n];
        int[] checksums = new int[n];
        for (int i = 0; i < n; i++) {
            TierSlots t = slotsOf(tiers[i]);
            int slot = t.lookup(seqHashes[i]);
            if (slot < 0) {
                throw new IllegalStateException("block " + Long.toUnsignedString(seqHashes[i], 16) + " is not in " + tiers[i]);
            }
            t.pin(slot);
            t.touch(slot);
            slots[i] = slot;
            checksums[i] = t.checksumOf(slot);
        }
        return new Onboarding(seqHashes.clone(), tiers.clone(), slots, checksums, into.clone());
    }

    /**
     * Ends an onboarding: unpins its slots; the first block that did not verify leaves its tier (a miss
     * from now on, counted corrupt) unless the tiers closed. Returns the verified blocks per tier (indexed
     * by the tier's number).
     */
    long[] finish(Onboarding job) {
        int good = job.verifiedPrefix();
        long[] perTier = new long[4];
        for (int i = 0; i < job.blocks(); i++) {
            TierSlots t = slotsOf(job.tiers[i]);
            int slot = job.slots[i];
            t.unpin(slot);
            boolean failed = i == good && !closed;
            if (failed && t.lookup(job.seqHashes[i]) == slot) {
                t.drop(slot);
                events.removed(job.tiers[i], job.seqHashes[i]);
                stats(job.tiers[i]).corruptBlocks.incrementAndGet();
            }
            if (i < good) {
                perTier[job.tiers[i].getNumber()]++;
            }
        }
        for (KvTier tier : new KvTier[] {KvTier.KV_TIER_HOST, KvTier.KV_TIER_DISK}) {
            long blocks = perTier[tier.getNumber()];
            if (blocks > 0) {
                stats(tier).onboardedBlocks.addAndGet(blocks);
                stats(tier).onboardedBytes.addAndGet(blocks * bytesPerBlock);
            }
        }
        return perTier;
    }

    /** Drops every block of both tiers; returns how many. */
    int clear() {
        int n = host.clear().length;
        events.cleared(KvTier.KV_TIER_HOST);
        if (disk != null) {
            n += disk.clear().length;
            events.cleared(KvTier.KV_TIER_DISK);
        }
        return n;
    }

    /** From now on nothing is offloaded and a failed onboarding no longer drops its block. */
    void close() {
        closed = true;
    }

    boolean closed() {
        return closed;
    }

    TierSlots slotsOf(KvTier tier) {
        if (tier == KvTier.KV_TIER_HOST) {
            return host;
        }
        if (tier == KvTier.KV_TIER_DISK && disk != null) {
            return disk;
        }
        throw new IllegalArgumentException("no " + tier + " tier here");
    }

    /** The tier's slot book, or null when there is no such tier. */
    TierSlots slotsOrNull(KvTier tier) {
        return tier == KvTier.KV_TIER_HOST ? host : tier == KvTier.KV_TIER_DISK ? disk : null;
    }

    TierStats stats(KvTier tier) {
        return tier == KvTier.KV_TIER_DISK ? diskStats : hostStats;
    }
}
