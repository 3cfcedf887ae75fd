package io.flotilla.transfer;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The framed protocol of the tcp backend / control channel, as the native library speaks it
 * (src/main/c/wire.c and tcp.c). All integers little-endian.
 * <pre>
 * hello    u32 "FLTH", u16 version, str16 initiator, str16 target, u64 target instance
 * request  u32 "FLTR", u8 op, u8 flags, u16 0, u32 ndesc, u32 notif_len, u64 lease, u64 0,
 *          ndesc x (u64 region, u64 offset, u64 length), notification bytes, [WRITE: payload]
 * response u32 "FLTA", i32 code, u64 lease, u32 msg_len, u32 0, message bytes, [READ ok: payload]
 * </pre>
 * A hello is answered with a response. READ with a notification gets a second response after the
 * payload, once the notification is queued. WRITE's response follows the payload; an invalid WRITE's
 * payload is drained, never stored.
 */
final class Wire {

    static final int MAGIC_HELLO = 0x48544C46;
    static final int MAGIC_REQUEST = 0x52544C46;
    static final int MAGIC_RESPONSE = 0x41544C46;
    static final int VERSION = 1;
    static final int OP_READ = 1;
    static final int OP_WRITE = 2;
    static final int OP_NOTIF = 3;
    static final int OP_LEASE = 4;
    static final int OP_RELEASE = 5;
    static final int REQUEST_HEADER = 32;
    static final int RESPONSE_HEADER = 24;
    static final int DESC_BYTES = 24;
    static final int MAX_DESCS = 1 << 20;
    static final int MAX_NOTIFICATION = 1 << 20;
    static final int MAX_MESSAGE = 256;
    static final int CHUNK = 256 * 1024;

    private Wire() {
    }

    record Header(int op, int flags, int descs, int notificationLength, long lease) {
    }

    record Response(int code, long lease, String message) {
        TransferException toException() {
            return new TransferException(ErrorCode.fromCode(code), "target: " + message);
        }
    }

    static byte[] hello(String initiator, String target, long instance) {
        return new AgentMetadata.Out().u32(MAGIC_HELLO).u16(VERSION).str(initiator).str(target).u64(instance).toArray();
    }

    static byte[] request(int op, int flags, long lease, long[] triples, byte[] notification) {
        AgentMetadata.Out out = new AgentMetadata.Out();
        int n = triples.length / 3;
        out.u32(MAGIC_REQUEST).u8(op).u8(flags).u16(0).u32(n).u32(notification.length).u64(lease).u64(0);
        for (long v : triples) {
            out.u64(v);
        }
        return out.raw(notification).toArray();
    }

    static byte[] response(int code, long lease, String message) {
        byte[] m = message.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(m.length, MAX_MESSAGE);
        AgentMetadata.Out out = new AgentMetadata.Out().u32(MAGIC_RESPONSE).u32(code).u64(lease).u32(n).u32(0);
        byte[] head = out.toArray();
        byte[] all = new byte[head.length + n];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(m, 0, all, head.length, n);
        return all;
    }

    static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Parses a 32-byte request header. */
    static Header parseHeader(byte[] h) throws IOException {
        ByteBuffer b = le(h);
        if (b.getInt() != MAGIC_REQUEST) {
            throw new IOException("not a request frame");
        }
        int op = Byte.toUnsignedInt(b.get());
        int flags = Byte.toUnsignedInt(b.get());
        b.getShort();
        long n = Integer.toUnsignedLong(b.getInt());
        long notif = Integer.toUnsignedLong(b.getInt());
        long lease = b.getLong();
        if (n > MAX_DESCS || notif > MAX_NOTIFICATION) {
            throw new IOException("request frame exceeds limits");
        }
        return new Header(op, flags, (int) n, (int) notif, lease);
    }

    static long[] readDescs(DataInputStream in, int n) throws IOException {
        byte[] raw = new byte[n * DESC_BYTES];
        in.readFully(raw);
        ByteBuffer b = le(raw);
        long[] triples = new long[3 * n];
        for (int i = 0; i < triples.length; i++) {
            triples[i] = b.getLong();
        }
        return triples;
    }

    static Response readResponse(DataInputStream in) throws IOException {
        byte[] h = new byte[RESPONSE_HEADER];
        in.readFully(h);
        ByteBuffer b = le(h);
        if (b.getInt() != MAGIC_RESPONSE) {
            throw new IOException("peer sent a malformed response");
        }
        int code = b.getInt();
        long lease = b.getLong();
        long len = Integer.toUnsignedLong(b.getInt());
        if (len > 65536) {
            throw new IOException("peer sent a " + len + "-byte message");
        }
        byte[] m = new byte[(int) len];
        in.readFully(m);
        return new Response(code, lease, new String(m, StandardCharsets.UTF_8));
    }

    /** Writes the buffer's remaining bytes (it may be direct) through a reusable chunk. */
    static void send(OutputStream out, ByteBuffer src, byte[] chunk) throws IOException {
        ByteBuffer s = src.duplicate();
        while (s.hasRemaining()) {
            int n = Math.min(chunk.length, s.remaining());
            s.get(chunk, 0, n);
            out.write(chunk, 0, n);
        }
    }

    /** Fills the buffer's remaining bytes from the stream. */
    static void receive(DataInputStream in, ByteBuffer dst, byte[] chunk) throws IOException {
        ByteBuffer d = dst.duplicate();
        while (d.hasRemaining()) {
            int n = in.read(chunk, 0, Math.min(chunk.length, d.remaining()));
            if (n < 0) {
                throw new EOFException("connection closed by peer");
            }
            d.put(chunk, 0, n);
        }
    }

    static void drain(DataInputStream in, long n, byte[] chunk) throws IOException {
        while (n > 0) {
            int k = in.read(chunk, 0, (int) Math.min(chunk.length, n));
            if (k < 0) {
                throw new EOFException("connection closed by peer");
            }
            n -= k;
        }
    }
}
