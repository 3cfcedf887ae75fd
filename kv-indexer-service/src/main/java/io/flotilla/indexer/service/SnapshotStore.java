package io.flotilla.indexer.service;

import io.flotilla.indexer.core.IndexSnapshot;
import io.flotilla.indexer.core.IndexSnapshotCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Index snapshots on disk: {@code index-<millis>.snap}, written to a temporary file, forced to disk
 * and renamed atomically, so a crash leaves either the old or the new file, never half of one.
 *
 * <pre>
 * magic "FLXSNAP1" | u32 crc32c(payload) | u64 payload length | payload
 * payload = u32 partitions | (u32 partition, u64 next offset)* | IndexSnapshotCodec bytes
 * </pre>
 *
 * A file whose magic, length or checksum is wrong is reported, counted and skipped: the next older
 * one is tried, and with none the index is rebuilt from Kafka.
 */
public final class SnapshotStore {

    private static final Logger log = LoggerFactory.getLogger(SnapshotStore.class);
    private static final byte[] MAGIC = "FLXSNAP1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** A snapshot with the kv-events offsets (next offset to read, per partition) it corresponds to. */
    public record Stored(Path file, IndexSnapshot index, Map<Integer, Long> offsets) {
    }

    private final Path dir;
    private final int keep;
    private long corrupt;

    public SnapshotStore(Path dir, int keep) {
        this.dir = dir;
        this.keep = keep;
    }

    public synchronized long corruptSnapshots() {
        return corrupt;
    }

    public synchronized Path write(IndexSnapshot index, Map<Integer, Long> offsets) throws IOException {
        Files.createDirectories(dir);
        ByteArrayOutputStream payload = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(payload)) {
            out.writeInt(offsets.size());
            for (var e : offsets.entrySet()) {
                out.writeInt(e.getKey());
                out.writeLong(e.getValue());
            }
            IndexSnapshotCodec.write(index, out);
        }
        byte[] bytes = payload.toByteArray();
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        Path file = dir.resolve("index-" + index.takenAtMs() + ".snap");
        Path tmp = dir.resolve(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE); OutputStream os = java.nio.channels.Channels.newOutputStream(ch);
             DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(os, 1 << 16))) {
            out.write(MAGIC);
            out.writeInt((int) crc.getValue());
            out.writeLong(bytes.length);
            out.write(bytes);
            out.flush();
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        prune();
        return file;
    }

    /** The newest snapshot that reads back intact, if any. */
    public synchronized Optional<Stored> loadNewest() {
        for (Path f : files()) {
            try {
                return Optional.of(read(f));
            } catch (IOException | RuntimeException e) {
                corrupt++;
                log.error("index snapshot {} is unreadable ({}); skipping it", f, e.getMessage());
            }
        }
        return Optional.empty();
    }

    static Stored read(Path f) throws IOException {
        byte[] all = Files.readAllBytes(f);
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(all));
        byte[] magic = new byte[MAGIC.length];
        in.readFully(magic);
        if (!java.util.Arrays.equals(magic, MAGIC)) {
            throw new IOException("not a Flotilla index snapshot (bad magic)");
        }
        int expectedCrc = in.readInt();
        long length = in.readLong();
        int header = MAGIC.length + 12;
        if (length != all.length - header) {
            throw new IOException("truncated: header says " + length + " payload bytes, file has " + (all.length - header));
        }
        CRC32C crc = new CRC32C();
        crc.update(all, header, (int) length);
        if ((int) crc.getValue() != expectedCrc) {
            throw new IOException("checksum mismatch");
        }
        DataInputStream payload = new DataInputStream(new ByteArrayInputStream(all, header, (int) length));
        int n = payload.readInt();
        Map<Integer, Long> offsets = new HashMap<>();
        for (int i = 0; i < n; i++) {
            offsets.put(payload.readInt(), payload.readLong());
        }
        return new Stored(f, IndexSnapshotCodec.read(payload), offsets);
    }

    /** Snapshot files, newest first. */
    public List<Path> files() {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().matches("index-\\d+\\.snap"))
                    .sorted(Comparator.comparingLong(SnapshotStore::takenAt).reversed())
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private void prune() throws IOException {
        List<Path> all = new ArrayList<>(files());
        for (int i = keep; i < all.size(); i++) {
            Files.deleteIfExists(all.get(i));
        }
    }

    private static long takenAt(Path p) {
        String n = p.getFileName().toString();
        return Long.parseLong(n.substring("index-".length(), n.length() - ".snap".length()));
    }
}
