package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * The KV block manager's tiers below an engine's device pool: host memory (off-heap), then disk.
 *
 * <p>Data flow. Device → host is write-through: every block the engine registers is queued for a copy
 * into host memory ({@link #offload}), and the engine keeps the device slot unchanged until the copy is
 * done. Host → disk is a victim write: a block evicted from host memory is written to disk unless it is
 * there already. Onboarding ({@link #onboard}) copies blocks from host memory or disk into device slots
 * and verifies them (CRC32C; the disk also checks its slot header), so a torn or corrupted copy is a
 * miss, never wrong KV. Each tier evicts by {@link SlruList} (blocks used twice outlive blocks used once).
 *
 * <p>Threads. Every method is called under the owner's lock (the engine's); byte copies run on the
 * {@link TierIo}, which takes the same lock through the {@link Guard} only to publish their results.
 * Index changes and their {@link TierEvents} therefore happen under that lock, in one order.
 */
public final class LowerTiers implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(LowerTiers.class.getName());

    /** Runs {@code work} under the owner's lock and then publishes the events it produced. */
    @FunctionalInterface
    public interface Guard {
        void run(Runnable work);
    }

    private final TierSettings settings;
    private final int bytesPerBlock;
    private final double speedup;
    private final TierIo io;
    private final TierEvents events;
    private Guard guard = Runnable::run;
    private final TierSlots host;
    private final HostMemory hostBytes;
    private final TierSlots disk;
    private final DiskStore diskStore;
    private final TierStats hostStats = new TierStats(KvTier.KV_TIER_HOST);
    private final TierStats diskStats = new TierStats(KvTier.KV_TIER_DISK);
    private final CRC32C crc = new CRC32C(); // tier thread only
    private List<Offload> pending = new ArrayList<>();
    private volatile OnboardObserver observer = (tier, blocks, nanos) -> { };
    private volatile boolean closed;

    /** Sees every finished onboarding: its source tier, blocks and wall time (tier thread, under the lock). */
    @FunctionalInterface
    public interface OnboardObserver {
        void onboarded(KvTier tier, int blocks, long nanos);
    }

    private record Offload(long seqHash, ByteBuffer device, Runnable done) {
    }

    /**
     * Opens the tiers; the disk tier's index is rebuilt from its files (and announced to
     * {@code events} as stored).
     *
     * @param namespaceSeed the block-hash namespace: disk slots of another namespace are ignored
     * @param speedup       onboarding time is divided by it, like the engine's step times
     */
    public LowerTiers(TierSettings settings, int bytesPerBlock, long namespaceSeed, double speedup, TierIo io,
                      TierEvents events) {
        if (!settings.enabled()) {
            throw new IllegalArgumentException("no lower tier is configured");
        }
        if (bytesPerBlock <= 0) {
            throw new IllegalArgumentException("lower KV tiers need KV payloads (kv-bytes-per-block > 0)");
        }
        this.settings = settings;
        this.bytesPerBlock = bytesPerBlock;
        this.speedup = speedup;
        this.io = io;
        this.events = events;
        int hostSlots = slots(settings.hostBytes(), bytesPerBlock, "host");
        this.host = new TierSlots(KvTier.KV_TIER_HOST, hostSlots);
        this.hostBytes = new HostMemory(hostSlots, bytesPerBlock);
        if (settings.diskEnabled()) {
            int diskSlots = slots(settings.diskBytes(), bytesPerBlock + DiskStore.HEADER_BYTES, "disk");
            this.disk = new TierSlots(KvTier.KV_TIER_DISK, diskSlots);
            this.diskStore = new DiskStore(settings.diskDir(), diskSlots, bytesPerBlock, namespaceSeed);
            restoreDisk();
        } else {
            this.disk = null;
            this.diskStore = null;
        }
    }

    private static int slots(long bytes, int perSlot, String what) {
        long n = bytes / perSlot;
        if (n < 1) {
            throw new IllegalArgumentException("the " + what + " KV tier (" + bytes + " bytes) holds no block of "
                    + perSlot + " bytes");
        }
        return (int) Math.min(Integer.MAX_VALUE - 8, n);
    }

    private void restoreDisk() {
        List<DiskStore.Found> found;
        try {
            found = diskStore.rebuild();
        } catch (IOException e) {
            diskStore.close();
            throw new UncheckedIOException("cannot read the KV disk tier in " + settings.diskDir() + ": " + e.getMessage(), e);
        }
        found.sort(Comparator.comparingLong(DiskStore.Found::writeSeq));
        int restored = 0;
        for (DiskStore.Found f : found) {
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
        if (restored > 0) {
            LOG.log(System.Logger.Level.INFO, "KV disk tier in " + settings.diskDir() + ": " + restored
                    + " blocks restored from a previous run");
        }
    }

    /** How the tier thread publishes results; set once by the owner before the first request. */
    public void setGuard(Guard guard) {
        this.guard = guard;
    }

    public void setOnboardObserver(OnboardObserver observer) {
        this.observer = observer;
    }

    public TierSettings settings() {
        return settings;
    }

    public int bytesPerBlock() {
        return bytesPerBlock;
    }

    /** The best lower tier holding {@code seqHash}: host, disk, or UNSPECIFIED when neither does. */
    public KvTier locate(long seqHash) {
        if (host.lookup(seqHash) >= 0) {
            return KvTier.KV_TIER_HOST;
        }
        if (disk != null && disk.lookup(seqHash) >= 0) {
            return KvTier.KV_TIER_DISK;
        }
        return KvTier.KV_TIER_UNSPECIFIED;
    }

    /** A request reused {@code seqHash} from the device: its host copy counts as used too. */
    public void touch(long seqHash) {
        int slot = host.lookup(seqHash);
        if (slot >= 0) {
            host.touch(slot);
        }
    }

    /** Whether a newly registered block should be copied down: true unless host memory holds it already. */
    public boolean wantsOffload(long seqHash) {
        int slot = host.lookup(seqHash);
        if (slot >= 0) {
            host.touch(slot);
            return false;
        }
        return !closed;
    }

    /**
     * Queues a copy of a registered device block into host memory. {@code device} must stay unchanged
     * until {@code done} ran (under the lock, after the copy, or when the copy was abandoned).
     * Copies queue until {@link #submit()}.
     */
    public void offload(long seqHash, ByteBuffer device, Runnable done) {
        pending.add(new Offload(seqHash, device, done));
    }

    /** The engine did not queue a block because too many copies are in flight (the tier thread lags). */
    public void skippedOffload() {
        hostStats.skippedOffloads.incrementAndGet();
    }

    /** Hands the queued offloads to the tier thread as one job (one lock round trip, one event batch). */
    public void submit() {
        if (pending.isEmpty()) {
            return;
        }
        List<Offload> batch = pending;
        pending = new ArrayList<>();
        try {
            io.execute(() -> runOffloads(batch), false);
        } catch (RuntimeException e) {
            batch.forEach(o -> o.done().run()); // closed: nothing will copy them
        }
    }

    /** Modeled milliseconds to onboard one block from {@code tier} over its link. */
    public double onboardMs(KvTier tier) {
        long bytes = settings.modeledBytesPerBlock() > 0 ? settings.modeledBytesPerBlock() : bytesPerBlock;
        double bw = tier == KvTier.KV_TIER_DISK ? settings.diskBytesPerSecond() : settings.hostBytesPerSecond();
        return bytes / bw * 1000.0 / speedup;
    }

    /**
     * Starts copying blocks into device slots: block i of {@code seqHashes} from {@code tiers[i]} (as
     * {@link #locate} said under this same lock hold) into {@code into[i]}. The source slots are pinned
     * until the copies end; {@code whenDone} then runs under the lock with the verified result.
     */
    public Onboarding onboard(long[] seqHashes, KvTier[] tiers, ByteBuffer[] into, Consumer<Onboarding> whenDone) {
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
        Onboarding job = new Onboarding(seqHashes.clone(), tiers.clone(), slots, checksums, into.clone());
        try {
            io.execute(() -> runOnboarding(job, whenDone), true);
        } catch (RuntimeException e) {
            finishOnboarding(job, whenDone); // closed: nothing verified, every block is recomputed
        }
        return job;
    }

    /** Drops every block of both tiers (the engine's ClearKvCache); returns how many. */
    public int clear() {
        int n = host.clear().length;
        events.cleared(KvTier.KV_TIER_HOST);
        if (disk != null) {
            n += disk.clear().length;
            events.cleared(KvTier.KV_TIER_DISK);
            try {
                io.execute(this::bumpDiskGeneration, true);
            } catch (RuntimeException e) {
                // closed: the next start rebuilds from files that still name the old generation
            }
        }
        return n;
    }

    public long[] seqHashes(KvTier tier) {
        TierSlots t = tier == KvTier.KV_TIER_HOST ? host : tier == KvTier.KV_TIER_DISK ? disk : null;
        return t == null ? new long[0] : t.seqHashes();
    }

    public int used(KvTier tier) {
        TierSlots t = tier == KvTier.KV_TIER_HOST ? host : disk;
        return t == null ? 0 : t.used();
    }

    /** XOR of the seq hashes {@code tier} holds. */
    public long xor(KvTier tier) {
        TierSlots t = tier == KvTier.KV_TIER_HOST ? host : disk;
        return t == null ? 0 : t.xor();
    }

    public int capacity(KvTier tier) {
        TierSlots t = tier == KvTier.KV_TIER_HOST ? host : disk;
        return t == null ? 0 : t.capacity();
    }

    public boolean hasDisk() {
        return disk != null;
    }

    public TierStats stats(KvTier tier) {
        return tier == KvTier.KV_TIER_DISK ? diskStats : hostStats;
    }

    /** Off-heap bytes the host tier has allocated so far. */
    public long hostAllocatedBytes() {
        return hostBytes.allocatedBytes();
    }

    /** Heap bytes of both tiers' bookkeeping divided by their slots. */
    public double heapBytesPerSlot() {
        long bytes = host.heapBytes() + (disk == null ? 0 : disk.heapBytes());
        long slots = host.capacity() + (disk == null ? 0L : disk.capacity());
        return (double) bytes / slots;
    }

    /** Checks both tiers' invariants (tests). */
    public void verifyInvariants() {
        host.verifyInvariants();
        if (disk != null) {
            disk.verifyInvariants();
        }
    }

    /** Where a disk-tier block's payload lies (for tools and fault-injection tests); empty when not on disk. */
    public java.util.Optional<DiskLocation> diskLocation(long seqHash) {
        int slot = disk == null ? -1 : disk.lookup(seqHash);
        return slot < 0 ? java.util.Optional.empty()
                : java.util.Optional.of(new DiskLocation(diskStore.fileOf(slot), diskStore.payloadOffset(slot),
                        diskStore.headerOffset(slot)));
    }

    /** A disk slot's segment file and the offsets of its payload and header in it. */
    public record DiskLocation(java.nio.file.Path file, long payloadOffset, long headerOffset) {
    }

    int slotOf(KvTier tier, long seqHash) {
        return slotsOf(tier).lookup(seqHash);
    }

    /** Stops the tier thread (waiting for its running job) and releases the memory and files. */
    @Override
    public void close() {
        closed = true;
        io.close();
        hostBytes.release();
        if (diskStore != null) {
            diskStore.close();
        }
    }

    // ------------------------------------------------------------------ tier thread

    /** One demotion: a host victim written to disk slot {@code diskSlot} before its host slot is reused. */
    private record Demotion(long seqHash, int checksum, int diskSlot) {
    }

    private void runOffloads(List<Offload> batch) {
        int n = batch.size();
        int[] hostSlot = new int[n];
        Demotion[] demote = new Demotion[n];
        guard.run(() -> reserveOffloads(batch, hostSlot, demote));
        int[] checksum = new int[n];
        boolean[] demoted = new boolean[n];
        for (int i = 0; i < n; i++) {
            if (hostSlot[i] < 0) {
                continue;
            }
            if (demote[i] != null) {
                demoted[i] = writeDisk(demote[i], hostSlot[i]);
            }
            hostBytes.write(hostSlot[i], batch.get(i).device());
            checksum[i] = checksum(hostBytes.view(hostSlot[i]));
        }
        guard.run(() -> commitOffloads(batch, hostSlot, demote, demoted, checksum));
    }

    /**
     * Reserves a host slot (and, for its victim, a disk slot) for each copy of the batch. Events go out
     * tier by tier (every host removal, then every disk removal), so each tier's removals of one batch
     * share one {@code BlockRemoved}: interleaved per block they would each seal an event of their own.
     * Only blocks of different tiers change places, which no tier's index sees.
     */
    private void reserveOffloads(List<Offload> batch, int[] hostSlot, Demotion[] demote) {
        TierSlots.Victim[] victim = new TierSlots.Victim[1];
        TierSlots.Victim[] diskVictim = new TierSlots.Victim[1];
        long[] diskRemoved = new long[batch.size()];
        int diskRemovedCount = 0;
        for (int i = 0; i < batch.size(); i++) {
            hostSlot[i] = -1;
            if (closed || host.lookup(batch.get(i).seqHash()) >= 0) {
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
    }

    /**
     * The disk write that saves host victim {@code v}, or null when none is needed or possible;
     * {@code diskVictim[0]} is then the block its disk slot held (null when the slot was free).
     */
    private Demotion demotionOf(TierSlots.Victim v, TierSlots.Victim[] diskVictim) {
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

    private boolean writeDisk(Demotion d, int hostSlot) {
        try {
            diskStore.write(d.diskSlot(), hostBytes.view(hostSlot), d.seqHash(), d.checksum());
            return true;
        } catch (IOException | RuntimeException e) {
            diskStats.ioErrors.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "writing a KV block to the disk tier failed: " + e);
            return false;
        }
    }

    /** Publishes the batch's copies: host stores first, then disk stores (see {@link #reserveOffloads}). */
    private void commitOffloads(List<Offload> batch, int[] hostSlot, Demotion[] demote, boolean[] demoted,
                                int[] checksum) {
        for (int i = 0; i < batch.size(); i++) {
            Offload o = batch.get(i);
            if (hostSlot[i] < 0) {
                continue;
            }
            if (host.lookup(o.seqHash()) >= 0) {
                host.abandon(hostSlot[i]); // stored meanwhile by another copy
            } else {
                host.commit(hostSlot[i], o.seqHash(), checksum[i]);
                events.stored(KvTier.KV_TIER_HOST, o.seqHash());
                hostStats.offloadedBlocks.incrementAndGet();
                hostStats.offloadedBytes.addAndGet(bytesPerBlock);
            }
        }
        for (int i = 0; i < batch.size(); i++) {
            Demotion d = demote[i];
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
        batch.forEach(o -> o.done().run());
    }

    private void runOnboarding(Onboarding job, Consumer<Onboarding> whenDone) {
        for (int i = 0; i < job.blocks(); i++) {
            job.verified[i] = copyIn(job, i);
            if (!job.verified[i]) {
                break; // the rest would be recomputed anyway
            }
        }
        guard.run(() -> finishOnboarding(job, whenDone));
    }

    private boolean copyIn(Onboarding job, int i) {
        ByteBuffer dst = job.into[i];
        if (job.tiers[i] == KvTier.KV_TIER_HOST) {
            dst.duplicate().put(hostBytes.view(job.slots[i]));
            return checksum(dst) == job.checksums[i];
        }
        try {
            return diskStore.read(job.slots[i], job.seqHashes[i], job.checksums[i], dst);
        } catch (IOException | RuntimeException e) {
            diskStats.ioErrors.incrementAndGet();
            return false;
        }
    }

    private void finishOnboarding(Onboarding job, Consumer<Onboarding> whenDone) {
        int good = job.verifiedPrefix();
        long[] perTier = new long[4];
        for (int i = 0; i < job.blocks(); i++) {
            TierSlots t = slotsOf(job.tiers[i]);
            int slot = job.slots[i];
            t.unpin(slot);
            boolean failed = i == good && i < job.blocks() && !closed;
            if (failed && t.lookup(job.seqHashes[i]) == slot) {
                t.drop(slot); // its bytes do not verify: a miss from now on
                events.removed(job.tiers[i], job.seqHashes[i]);
                stats(job.tiers[i]).corruptBlocks.incrementAndGet();
            }
            if (i < good) {
                perTier[job.tiers[i].getNumber()]++;
            }
        }
        long nanos = System.nanoTime() - job.startedNanos;
        for (KvTier tier : new KvTier[] {KvTier.KV_TIER_HOST, KvTier.KV_TIER_DISK}) {
            long blocks = perTier[tier.getNumber()];
            if (blocks > 0) {
                stats(tier).onboardedBlocks.addAndGet(blocks);
                stats(tier).onboardedBytes.addAndGet(blocks * bytesPerBlock);
                observer.onboarded(tier, (int) blocks, nanos);
            }
        }
        whenDone.accept(job);
    }

    private void bumpDiskGeneration() {
        try {
            diskStore.clear();
        } catch (IOException e) {
            diskStats.ioErrors.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "cannot record the KV disk tier's clear: " + e);
        }
    }

    private TierSlots slotsOf(KvTier tier) {
        if (tier == KvTier.KV_TIER_HOST) {
            return host;
        }
        if (tier == KvTier.KV_TIER_DISK && disk != null) {
            return disk;
        }
        throw new IllegalArgumentException("no " + tier + " tier here");
    }

    private int checksum(ByteBuffer block) {
        crc.reset();
        crc.update(block.duplicate());
        return (int) crc.getValue();
    }
}
