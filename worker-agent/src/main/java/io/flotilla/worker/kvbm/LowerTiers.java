package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
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
 * <p>Threads. What the tiers hold is a {@link TierState} with one writer, the tiers' {@link Owner} (the
 * engine's driver): the engine calls this class's methods as that owner, and the byte copies, which run
 * on the {@link TierIo}, hand their results back through {@link Owner#apply}, given at construction, to
 * change the state there. State changes and their {@link TierEvents} therefore come from one writer, in
 * one order; the tier thread only reads and writes bytes.
 */
public final class LowerTiers implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(LowerTiers.class.getName());

    /**
     * The tiers' owner: runs a state change where the owner's own work runs (the engine's driver, holding
     * what serializes it) and then publishes the events the change produced. A closed owner may drop it.
     */
    @FunctionalInterface
    public interface Owner {
        void apply(Runnable change);
    }

    private final TierSettings settings;
    private final int bytesPerBlock;
    private final double speedup;
    private final TierIo io;
    private final Owner owner;
    private final TierState state;
    private final HostMemory hostBytes;
    private final DiskStore diskStore;
    private final CRC32C crc = new CRC32C(); // tier thread only
    private List<Offload> pending = new ArrayList<>();
    private volatile OnboardObserver observer = (tier, blocks, nanos) -> { };

    /** Sees every finished onboarding: its source tier, blocks and wall time (as the owner). */
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
     * @param owner         where the tier thread's results change the state
     */
    public LowerTiers(TierSettings settings, int bytesPerBlock, long namespaceSeed, double speedup, TierIo io,
                      TierEvents events, Owner owner) {
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
        this.owner = owner;
        int hostSlots = slots(settings.hostBytes(), bytesPerBlock, "host");
        this.hostBytes = new HostMemory(hostSlots, bytesPerBlock);
        TierSlots host = new TierSlots(KvTier.KV_TIER_HOST, hostSlots);
        if (settings.diskEnabled()) {
            int diskSlots = slots(settings.diskBytes(), bytesPerBlock + DiskStore.HEADER_BYTES, "disk");
            this.diskStore = new DiskStore(settings.diskDir(), diskSlots, bytesPerBlock, namespaceSeed);
            this.state = new TierState(host, new TierSlots(KvTier.KV_TIER_DISK, diskSlots), events, bytesPerBlock);
            restoreDisk();
        } else {
            this.diskStore = null;
            this.state = new TierState(host, null, events, bytesPerBlock);
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
        int restored = state.restore(found);
        if (restored > 0) {
            LOG.log(System.Logger.Level.INFO, "KV disk tier in " + settings.diskDir() + ": " + restored
                    + " blocks restored from a previous run");
        }
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
        return state.locate(seqHash);
    }

    /** A request reused {@code seqHash} from the device: its host copy counts as used too. */
    public void touch(long seqHash) {
        state.touch(seqHash);
    }

    /** Whether a newly registered block should be copied down: true unless host memory holds it already. */
    public boolean wantsOffload(long seqHash) {
        return state.wantsOffload(seqHash);
    }

    /**
     * Queues a copy of a registered device block into host memory. {@code device} must stay unchanged
     * until {@code done} ran (as the owner, after the copy, or when the copy was abandoned).
     * Copies queue until {@link #submit()}.
     */
    public void offload(long seqHash, ByteBuffer device, Runnable done) {
        pending.add(new Offload(seqHash, device, done));
    }

    /** The engine did not queue a block because too many copies are in flight (the tier thread lags). */
    public void skippedOffload() {
        state.stats(KvTier.KV_TIER_HOST).skippedOffloads.incrementAndGet();
    }

    /** Hands the queued offloads to the tier thread as one job (two trips to the owner, one event batch each). */
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
     * {@link #locate} said, with no state change between) into {@code into[i]}. The source slots are
     * pinned until the copies end; {@code whenDone} then runs as the owner with the verified result.
     */
    public Onboarding onboard(long[] seqHashes, KvTier[] tiers, ByteBuffer[] into, Consumer<Onboarding> whenDone) {
        Onboarding job = state.pin(seqHashes, tiers, into);
        try {
            io.execute(() -> runOnboarding(job, whenDone), true);
        } catch (RuntimeException e) {
            finishOnboarding(job, whenDone); // closed: nothing verified, every block is recomputed
        }
        return job;
    }

    /** Drops every block of both tiers (the engine's ClearKvCache); returns how many. */
    public int clear() {
        int n = state.clear();
        if (diskStore != null) {
            try {
                io.execute(this::bumpDiskGeneration, true);
            } catch (RuntimeException e) {
                // closed: the next start rebuilds from files that still name the old generation
            }
        }
        return n;
    }

    public long[] seqHashes(KvTier tier) {
        TierSlots t = state.slotsOrNull(tier);
        return t == null ? new long[0] : t.seqHashes();
    }

    public int used(KvTier tier) {
        TierSlots t = bookOf(tier);
        return t == null ? 0 : t.used();
    }

    /** XOR of the seq hashes {@code tier} holds. */
    public long xor(KvTier tier) {
        TierSlots t = bookOf(tier);
        return t == null ? 0 : t.xor();
    }

    public int capacity(KvTier tier) {
        TierSlots t = bookOf(tier);
        return t == null ? 0 : t.capacity();
    }

    /** The host book for the host tier, else the disk book (null without disk). */
    private TierSlots bookOf(KvTier tier) {
        return tier == KvTier.KV_TIER_HOST ? state.slotsOrNull(KvTier.KV_TIER_HOST) : state.slotsOrNull(KvTier.KV_TIER_DISK);
    }

    public boolean hasDisk() {
        return diskStore != null;
    }

    public TierStats stats(KvTier tier) {
        return state.stats(tier);
    }

    /** Off-heap bytes the host tier has allocated so far. */
    public long hostAllocatedBytes() {
        return hostBytes.allocatedBytes();
    }

    /** Heap bytes of both tiers' bookkeeping divided by their slots. */
    public double heapBytesPerSlot() {
        TierSlots host = state.slotsOrNull(KvTier.KV_TIER_HOST);
        TierSlots disk = state.slotsOrNull(KvTier.KV_TIER_DISK);
        long bytes = host.heapBytes() + (disk == null ? 0 : disk.heapBytes());
        long slots = host.capacity() + (disk == null ? 0L : disk.capacity());
        return (double) bytes / slots;
    }

    /** Checks both tiers' invariants (tests). */
    public void verifyInvariants() {
        state.slotsOrNull(KvTier.KV_TIER_HOST).verifyInvariants();
        if (diskStore != null) {
            state.slotsOrNull(KvTier.KV_TIER_DISK).verifyInvariants();
        }
    }

    /** Where a disk-tier block's payload lies (for tools and fault-injection tests); empty when not on disk. */
    public java.util.Optional<DiskLocation> diskLocation(long seqHash) {
        int slot = diskStore == null ? -1 : state.slotsOf(KvTier.KV_TIER_DISK).lookup(seqHash);
        return slot < 0 ? java.util.Optional.empty()
                : java.util.Optional.of(new DiskLocation(diskStore.fileOf(slot), diskStore.payloadOffset(slot),
                        diskStore.headerOffset(slot)));
    }

    /** A disk slot's segment file and the offsets of its payload and header in it. */
    public record DiskLocation(java.nio.file.Path file, long payloadOffset, long headerOffset) {
    }

    int slotOf(KvTier tier, long seqHash) {
        return state.slotsOf(tier).lookup(seqHash);
    }

    /** Stops the tier thread (waiting for its running job) and releases the memory and files. */
    @Override
    public void close() {
        state.close();
        io.close();
        hostBytes.release();
        if (diskStore != null) {
            diskStore.close();
        }
    }

    // ------------------------------------------------------------------ tier thread: bytes only

    private void runOffloads(List<Offload> batch) {
        int n = batch.size();
        long[] seqHashes = new long[n];
        for (int i = 0; i < n; i++) {
            seqHashes[i] = batch.get(i).seqHash();
        }
        TierState.OffloadPlan[] plan = new TierState.OffloadPlan[1];
        owner.apply(() -> plan[0] = state.reserve(seqHashes));
        if (plan[0] == null) {
            return; // the owner closed: nothing was reserved
        }
        int[] hostSlot = plan[0].hostSlot();
        TierState.Demotion[] demote = plan[0].demote();
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
        owner.apply(() -> {
            state.commit(plan[0], demoted, checksum);
            batch.forEach(o -> o.done().run());
        });
    }

    private boolean writeDisk(TierState.Demotion d, int hostSlot) {
        try {
            diskStore.write(d.diskSlot(), hostBytes.view(hostSlot), d.seqHash(), d.checksum());
            return true;
        } catch (IOException | RuntimeException e) {
            state.stats(KvTier.KV_TIER_DISK).ioErrors.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "writing a KV block to the disk tier failed: " + e);
            return false;
        }
    }

    private void runOnboarding(Onboarding job, Consumer<Onboarding> whenDone) {
        for (int i = 0; i < job.blocks(); i++) {
            job.verified[i] = copyIn(job, i);
            if (!job.verified[i]) {
                break; // the rest would be recomputed anyway
            }
        }
        owner.apply(() -> finishOnboarding(job, whenDone));
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
            state.stats(KvTier.KV_TIER_DISK).ioErrors.incrementAndGet();
            return false;
        }
    }

    private void finishOnboarding(Onboarding job, Consumer<Onboarding> whenDone) {
        long[] perTier = state.finish(job);
        long nanos = System.nanoTime() - job.startedNanos;
        for (KvTier tier : new KvTier[] {KvTier.KV_TIER_HOST, KvTier.KV_TIER_DISK}) {
            long blocks = perTier[tier.getNumber()];
            if (blocks > 0) {
                observer.onboarded(tier, (int) blocks, nanos);
            }
        }
        whenDone.accept(job);
    }

    private void bumpDiskGeneration() {
        try {
            diskStore.clear();
        } catch (IOException e) {
            state.stats(KvTier.KV_TIER_DISK).ioErrors.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "cannot record the KV disk tier's clear: " + e);
        }
    }

    private int checksum(ByteBuffer block) {
        crc.reset();
        crc.update(block.duplicate());
        return (int) crc.getValue();
    }
}
