package io.flotilla.worker.kvbm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The bytes of the disk tier: fixed-slot segment files in one directory, written and read by the tier
 * thread with positional I/O (page cache; never on the engine's step thread or a request's thread).
 *
 * <pre>
 * kvbm.lock                 held (FileLock) while a worker uses the directory
 * kvbm-disk.meta            64 bytes: magic, version, namespace seed, payload bytes, slots per segment,
 *                           generation, CRC32C; written to a temp file and renamed
 * seg-00000.kvbm, ...       [slot headers: slotsPerSegment × 64 bytes, padded to 4 KiB][payloads]
 * slot header (LE, 64 B)    0 magic "FKVB" | 4 version | 8 seq_hash | 16 namespace seed | 24 generation
 *                           | 32 write seq | 40 payload length | 44 payload CRC32C | 60 header CRC32C
 * </pre>
 *
 * A block is written payload first, header second. A torn or interrupted write leaves a header whose
 * CRC fails (the slot is free at the next start) or a payload whose CRC fails its header (a miss when
 * onboarded, and the slot is dropped): never KV under the wrong name. Segments are created (sparse)
 * when their first slot is written. {@link #clear()} bumps the generation in the meta file, so every
 * slot written before it is ignored from then on, across restarts too.
 */
final class DiskStore implements AutoCloseable {

    static final int HEADER_BYTES = 64;
    private static final int MAGIC = 0x42564b46; // "FKVB" little-endian
    private static final int META_MAGIC = 0x4d564b46; // "FKVM"
    private static final short VERSION = 1;
    private static final int SEGMENT_PAYLOAD_BYTES = 256 << 20;

    /** A block found intact at start-up. */
    record Found(int slot, long seqHash, int checksum, long writeSeq) {
    }

    private final Path dir;
    private final int bytesPerBlock;
    private final long namespaceSeed;
    private final int slots;
    private final int slotsPerSegment;
    private final long headerRegion;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final FileChannel[] segments;
    private final ByteBuffer header = ByteBuffer.allocateDirect(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final CRC32C crc = new CRC32C();
    private long generation;
    private long writeSeq;

    /**
     * Opens (creating it if needed) the disk tier in {@code dir}, sized for {@code slots} blocks.
     *
     * @throws IllegalStateException when another process holds the directory
     */
    DiskStore(Path dir, int slots, int bytesPerBlock, long namespaceSeed) {
        this.dir = dir;
        this.slots = slots;
        this.bytesPerBlock = bytesPerBlock;
        this.namespaceSeed = namespaceSeed;
        this.slotsPerSegment = Math.max(1, Math.min(slots, SEGMENT_PAYLOAD_BYTES / bytesPerBlock));
        this.headerRegion = roundUp((long) slotsPerSegment * HEADER_BYTES, 4096);
        this.segments = new FileChannel[(slots + slotsPerSegment - 1) / slotsPerSegment];
        try {
            Files.createDirectories(dir);
            lockChannel = FileChannel.open(dir.resolve("kvbm.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock l;
            try {
                l = lockChannel.tryLock();
            } catch (OverlappingFileLockException e) {
                l = null;
            }
            if (l == null) {
                lockChannel.close();
                throw new IllegalStateException("the KV disk tier directory " + dir + " is in use by another worker;"
                        + " give every worker its own flotilla.worker.kvbm.disk-dir");
            }
            lock = l;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the KV disk tier in " + dir + ": " + e.getMessage(), e);
        }
    }

    int slotsPerSegment() {
        return slotsPerSegment;
    }

    long generation() {
        return generation;
    }

    /**
     * Reads the meta file and every segment's slot headers and returns the intact blocks of this
     * namespace, payload size and generation (one per seq hash: the newest write). A missing or
     * foreign meta file starts an empty tier: the segments are deleted.
     */
    List<Found> rebuild() throws IOException {
        List<Found> found = new ArrayList<>();
        if (!readMeta()) {
            deleteSegments();
            generation = 1;
            writeMeta();
            return found;
        }
        ByteBuffer region = ByteBuffer.allocateDirect((int) headerRegion).order(ByteOrder.LITTLE_ENDIAN);
        for (int s = 0; s < segments.length; s++) {
            Path file = segmentPath(s);
            if (!Files.exists(file)) {
                continue;
            }
            FileChannel ch = segment(s);
            region.clear();
            while (region.hasRemaining() && ch.read(region, region.position()) > 0) {
                // positional reads until the region is full or the file ends
            }
            int n = Math.min(slotsPerSegment, slots - s * slotsPerSegment);
            for (int i = 0; i < n && (i + 1) * HEADER_BYTES <= region.position(); i++) {
                ByteBuffer h = region.slice(i * HEADER_BYTES, HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
                if (validHeader(h)) {
                    found.add(new Found(s * slotsPerSegment + i, h.getLong(8), h.getInt(44), h.getLong(32)));
                    writeSeq = Math.max(writeSeq, h.getLong(32));
                }
            }
        }
        return found;
    }

    /** Writes {@code src} (one block, from its position) into {@code slot} under {@code seqHash}. */
    void write(int slot, ByteBuffer src, long seqHash, int checksum) throws IOException {
        FileChannel ch = segment(slot / slotsPerSegment);
        int local = slot % slotsPerSegment;
        ByteBuffer payload = src.duplicate();
        long at = headerRegion + (long) local * bytesPerBlock;
        while (payload.hasRemaining()) {
            at += ch.write(payload, at);
        }
        header.clear();
        header.putInt(0, MAGIC).putShort(4, VERSION).putShort(6, (short) 0).putLong(8, seqHash)
                .putLong(16, namespaceSeed).putLong(24, generation).putLong(32, ++writeSeq)
                .putInt(40, bytesPerBlock).putInt(44, checksum).putLong(48, 0).putInt(56, 0);
        header.putInt(60, crcOf(header, 60));
        header.clear();
        long h = (long) local * HEADER_BYTES;
        while (header.hasRemaining()) {
            h += ch.write(header, h);
        }
    }

    /**
     * Reads {@code slot}'s payload into {@code dst} (one block from its position; the position is not
     * moved) and checks that its header names {@code seqHash} in this namespace and generation and that
     * the payload's CRC32C is the header's and {@code checksum}.
     *
     * @return false when anything does not verify (a torn write, a foreign or stale slot, corruption)
     */
    boolean read(int slot, long seqHash, int checksum, ByteBuffer dst) throws IOException {
        FileChannel ch = segment(slot / slotsPerSegment);
        int local = slot % slotsPerSegment;
        header.clear();
        long h = (long) local * HEADER_BYTES;
        while (header.hasRemaining()) {
            int r = ch.read(header, h);
            if (r < 0) {
                return false;
            }
            h += r;
        }
        if (!validHeader(header) || header.getLong(8) != seqHash || header.getInt(44) != checksum) {
            return false;
        }
        ByteBuffer into = dst.duplicate();
        into.limit(into.position() + bytesPerBlock);
        long at = headerRegion + (long) local * bytesPerBlock;
        while (into.hasRemaining()) {
            int r = ch.read(into, at);
            if (r < 0) {
                return false;
            }
            at += r;
        }
        ByteBuffer check = dst.duplicate();
        check.limit(check.position() + bytesPerBlock);
        crc.reset();
        crc.update(check);
        return (int) crc.getValue() == checksum;
    }

    /** Every slot written so far stops counting, now and after a restart. */
    void clear() throws IOException {
        generation++;
        writeMeta();
    }

    /** The segment file of {@code slot} and the byte offset of its payload, for fault injection in tests. */
    Path fileOf(int slot) {
        return segmentPath(slot / slotsPerSegment);
    }

    long payloadOffset(int slot) {
        return headerRegion + (long) (slot % slotsPerSegment) * bytesPerBlock;
    }

    long headerOffset(int slot) {
        return (long) (slot % slotsPerSegment) * HEADER_BYTES;
    }

    /** Bytes the segment files take on disk so far (their lengths; they are sparse where never written). */
    long fileBytes() {
        long n = 0;
        for (int s = 0; s < segments.length; s++) {
            try {
                n += Files.exists(segmentPath(s)) ? Files.size(segmentPath(s)) : 0;
            } catch (IOException e) {
                // a vanished segment counts as empty
            }
        }
        return n;
    }

    @Override
    public void close() {
        for (FileChannel ch : segments) {
            closeQuietly(ch);
        }
        try {
            lock.release();
        } catch (IOException e) {
            // the lock goes with the channel
        }
        closeQuietly(lockChannel);
    }

    private boolean validHeader(ByteBuffer h) {
        return h.getInt(0) == MAGIC && h.getShort(4) == VERSION && h.getLong(16) == namespaceSeed
                && h.getLong(24) == generation && h.getInt(40) == bytesPerBlock && h.getInt(60) == crcOf(h, 60);
    }

    private int crcOf(ByteBuffer b, int length) {
        ByteBuffer view = b.duplicate();
        view.position(0).limit(length);
        crc.reset();
        crc.update(view);
        return (int) crc.getValue();
    }

    private boolean readMeta() throws IOException {
        Path meta = dir.resolve("kvbm-disk.meta");
        if (!Files.exists(meta)) {
            return false;
        }
        byte[] bytes = Files.readAllBytes(meta);
        if (bytes.length != 64) {
            return false;
        }
        ByteBuffer m = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (m.getInt(0) != META_MAGIC || m.getShort(4) != VERSION || m.getLong(8) != namespaceSeed
                || m.getInt(16) != bytesPerBlock || m.getInt(20) != slotsPerSegment || m.getInt(60) != crcOf(m, 60)) {
            return false;
        }
        generation = m.getLong(24);
        return true;
    }

    private void writeMeta() throws IOException {
        ByteBuffer m = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(0, META_MAGIC).putShort(4, VERSION).putLong(8, namespaceSeed).putInt(16, bytesPerBlock)
                .putInt(20, slotsPerSegment).putLong(24, generation);
        m.putInt(60, crcOf(m, 60));
        Path tmp = dir.resolve("kvbm-disk.meta.tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(m, 0);
            ch.force(true);
        }
        Files.move(tmp, dir.resolve("kvbm-disk.meta"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private void deleteSegments() throws IOException {
        for (int s = 0; s < segments.length; s++) {
            closeQuietly(segments[s]);
            segments[s] = null;
            Files.deleteIfExists(segmentPath(s));
        }
    }

    private FileChannel segment(int s) throws IOException {
        FileChannel ch = segments[s];
        if (ch == null) {
            ch = FileChannel.open(segmentPath(s), StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            int n = Math.min(slotsPerSegment, slots - s * slotsPerSegment);
            long size = headerRegion + (long) n * bytesPerBlock;
            if (ch.size() < size) {
                try (var raf = new java.io.RandomAccessFile(segmentPath(s).toFile(), "rw")) {
                    raf.setLength(size); // sparse: blocks take disk space as they are written
                }
            }
            segments[s] = ch;
        }
        return ch;
    }

    private Path segmentPath(int s) {
        return dir.resolve(String.format("seg-%05d.kvbm", s));
    }

    private static long roundUp(long v, long to) {
        return (v + to - 1) / to * to;
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // nothing left to do
            }
        }
    }
}
