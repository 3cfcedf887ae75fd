package io.flotilla.transfer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What an agent publishes about itself, in the byte format the native library writes and reads
 * (src/main/c/wire.c, ft_meta_encode): little-endian;
 * u32 magic "FLTM", u16 version, str16 name, u64 instance, str16 host id, u32 backend bits,
 * str16 tcp host, u16 tcp port, u32+bytes UCX worker address, u32 region count, and per region
 * u64 id, u64 base, u64 length, u8 kind, u8 shared, str16 shm name, u32+bytes UCX rkey.
 * str16 is a u16 byte count and UTF-8 bytes.
 *
 * @param instance random per agent start: a restarted agent with the same name is another agent
 */
record AgentMetadata(String name, long instance, String hostId, int backends, String tcpHost, int tcpPort,
        byte[] ucxAddress, List<Region> regions) {

    static final int MAGIC = 0x4D544C46;
    static final int VERSION = 1;

    record Region(long id, long base, long length, int kind, boolean shared, String shmName, byte[] rkey) {

        /** Whether [offset, offset + length) lies inside this region (no overflow). */
        boolean contains(long offset, long len) {
            return len > 0 && offset >= 0 && len <= length && offset <= length - len;
        }
    }

    AgentMetadata {
        regions = List.copyOf(regions);
    }

    Region region(long id) {
        for (Region r : regions) {
            if (r.id == id) {
                return r;
            }
        }
        return null;
    }

    byte[] encode() {
        Out out = new Out();
        out.u32(MAGIC).u16(VERSION).str(name).u64(instance).str(hostId).u32(backends).str(tcpHost).u16(tcpPort).bytes(ucxAddress);
        out.u32(regions.size());
        for (Region r : regions) {
            out.u64(r.id).u64(r.base).u64(r.length).u8(r.kind).u8(r.shared ? 1 : 0).str(r.shmName).bytes(r.rkey);
        }
        return out.toArray();
    }

    static AgentMetadata decode(byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        try {
            if (in.getInt() != MAGIC) {
                throw malformed("not Flotilla transfer metadata");
            }
            int version = Short.toUnsignedInt(in.getShort());
            if (version != VERSION) {
                throw malformed("metadata version " + version + ", expected " + VERSION);
            }
            String name = str(in, 127);
            long instance = in.getLong();
            String host = str(in, 159);
            int backends = in.getInt();
            String tcpHost = str(in, 63);
            int port = Short.toUnsignedInt(in.getShort());
            byte[] ucx = bytes(in);
            long count = Integer.toUnsignedLong(in.getInt());
            if (count > in.remaining() / 32) {
                throw malformed("region count " + count + " does not fit");
            }
            List<Region> regions = new ArrayList<>();
            for (long i = 0; i < count; i++) {
                Region r = new Region(in.getLong(), in.getLong(), in.getLong(), Byte.toUnsignedInt(in.get()), in.get() != 0, str(in, 63), bytes(in));
                if (r.id == 0 || r.length < 0) {
                    throw malformed("region id " + r.id + " length " + r.length);
                }
                regions.add(r);
            }
            if (in.hasRemaining() || name.isEmpty()) {
                throw malformed(in.remaining() + " trailing bytes or empty name");
            }
            return new AgentMetadata(name, instance, host, backends, tcpHost, port, ucx, regions);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw malformed("truncated");
        }
    }

    private static TransferException malformed(String why) {
        return new TransferException(ErrorCode.PROTOCOL, "malformed agent metadata: " + why);
    }

    private static String str(ByteBuffer in, int max) {
        int n = Short.toUnsignedInt(in.getShort());
        if (n > max) {
            throw malformed("string of " + n + " bytes");
        }
        byte[] b = new byte[n];
        in.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static byte[] bytes(ByteBuffer in) {
        long n = Integer.toUnsignedLong(in.getInt());
        if (n > in.remaining()) {
            throw new BufferUnderflowException();
        }
        byte[] b = new byte[(int) n];
        in.get(b);
        return b;
    }

    /** Little-endian growable output, shared with {@link Wire}. */
    static final class Out {
        private ByteBuffer buf = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);

        private Out need(int n) {
            if (buf.remaining() < n) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + n)).order(ByteOrder.LITTLE_ENDIAN);
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
            return this;
        }

        Out u8(int v) {
            need(1).buf.put((byte) v);
            return this;
        }

        Out u16(int v) {
            need(2).buf.putShort((short) v);
            return this;
        }

        Out u32(long v) {
            need(4).buf.putInt((int) v);
            return this;
        }

        Out u64(long v) {
            need(8).buf.putLong(v);
            return this;
        }

        Out raw(byte[] b) {
            need(b.length).buf.put(b);
            return this;
        }

        Out str(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            return u16(b.length).raw(b);
        }

        Out bytes(byte[] b) {
            return u32(b.length).raw(b);
        }

        byte[] toArray() {
            byte[] out = new byte[buf.position()];
            buf.flip();
            buf.get(out);
            return out;
        }

        ByteBuffer toBuffer() {
            return ByteBuffer.wrap(toArray());
        }
    }
}
