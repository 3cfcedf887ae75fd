package io.flotilla.indexer.core;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary form of an {@link IndexSnapshot}, about 8 bytes a resident (block, worker, tier) triple:
 * <pre>
 * magic "FLXI" | version u32 = 2 | takenAtMs i64 | workers u32
 * per worker: id (modified UTF-8) | epoch i64 | lastSeq i64 | lastTs i64 | verified u8
 *             | then per tier (device, host, disk): n u32 | n x i64 (little-endian)
 * </pre>
 * Version 1 (before tiers: the device tier only) is still read.
 * Big-endian header fields (DataOutput), hashes as one little-endian block each. The caller
 * buffers the streams and writes to a temporary file it renames when done.
 */
public final class IndexSnapshotCodec {

    private static final int MAGIC = 0x464C5849; // "FLXI"
    private static final int VERSION = 2;
    private static final int CHUNK = 8192; // longs per copy

    private IndexSnapshotCodec() {
    }

    public static void write(IndexSnapshot snapshot, OutputStream out) throws IOException {
        DataOutputStream data = new DataOutputStream(out);
        data.writeInt(MAGIC);
        data.writeInt(VERSION);
        data.writeLong(snapshot.takenAtMs());
        data.writeInt(snapshot.workers().size());
        byte[] bytes = new byte[CHUNK * Long.BYTES];
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        for (WorkerSnapshot w : snapshot.workers()) {
            data.writeUTF(w.workerId());
            data.writeLong(w.epoch());
            data.writeLong(w.lastSeq());
            data.writeLong(w.lastTs());
            data.writeBoolean(w.verified());
            for (int tier = 0; tier < Tiers.COUNT; tier++) {
                long[] hashes = w.tier(tier);
                data.writeInt(hashes.length);
                for (int off = 0; off < hashes.length; off += CHUNK) {
                    int n = Math.min(CHUNK, hashes.length - off);
                    buf.clear();
                    buf.asLongBuffer().put(hashes, off, n);
                    data.write(bytes, 0, n * Long.BYTES);
                }
            }
        }
        data.flush();
    }

    public static IndexSnapshot read(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        if (data.readInt() != MAGIC) {
            throw new IOException("not an index snapshot");
        }
        int version = data.readInt();
        if (version != VERSION && version != 1) {
            throw new IOException("unsupported index snapshot version " + version);
        }
        long takenAtMs = data.readLong();
        int count = data.readInt();
        if (count < 0) {
            throw new IOException("corrupt index snapshot: " + count + " workers");
        }
        byte[] bytes = new byte[CHUNK * Long.BYTES];
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        List<WorkerSnapshot> workers = new ArrayList<>(Math.min(count, 1 << 16));
        for (int i = 0; i < count; i++) {
            String id = data.readUTF();
            long epoch = data.readLong();
            long lastSeq = data.readLong();
            long lastTs = data.readLong();
            boolean verified = data.readBoolean();
            long[][] tiers = new long[Tiers.COUNT][];
            for (int tier = 0; tier < Tiers.COUNT; tier++) {
                tiers[tier] = version == 1 && tier > Tiers.DEVICE ? new long[0] : readHashes(data, bytes, buf, id);
            }
            workers.add(new WorkerSnapshot(id, epoch, lastSeq, lastTs, verified, tiers[0], tiers[1], tiers[2]));
        }
        if (data.read() != -1) {
            throw new IOException("corrupt index snapshot: trailing bytes");
        }
        return new IndexSnapshot(takenAtMs, workers);
    }

    private static long[] readHashes(DataInputStream data, byte[] bytes, ByteBuffer buf, String id) throws IOException {
        int n = data.readInt();
        if (n < 0) {
            throw new IOException("corrupt index snapshot: " + n + " blocks for " + id);
        }
        long[] hashes = new long[n];
        for (int off = 0; off < n; off += CHUNK) {
            int len = Math.min(CHUNK, n - off);
            data.readFully(bytes, 0, len * Long.BYTES);
            buf.clear();
            buf.asLongBuffer().get(hashes, off, len);
        }
        return hashes;
    }
}
