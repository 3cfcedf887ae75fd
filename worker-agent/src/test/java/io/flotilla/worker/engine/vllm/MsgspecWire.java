package io.flotilla.worker.engine.vllm;

import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds vLLM KV event payloads the way msgspec encodes them, in both wire forms vLLM has shipped:
 * positional arrays ({@code array_like=True, tag=True}: the class name first) and maps keyed by field
 * name with the class name under {@code "type"}. Like msgspec, integers take the smallest msgpack
 * format (uint64 for hashes at or above 2^63), floats are float64, {@code None} is nil, and with
 * {@code omit_defaults} trailing (array) or any (map) fields equal to their defaults are left out.
 */
public final class MsgspecWire {

    private MsgspecWire() {
    }

    /** A block hash as Python sees it: an unsigned 64-bit int. */
    public static BigInteger u64(long h) {
        BigInteger v = BigInteger.valueOf(h & Long.MAX_VALUE);
        return h < 0 ? v.setBit(63) : v;
    }

    public static List<Object> hashes(long... hs) {
        List<Object> out = new ArrayList<>();
        for (long h : hs) {
            out.add(u64(h));
        }
        return out;
    }

    public static List<Object> ints(int... xs) {
        List<Object> out = new ArrayList<>();
        for (int x : xs) {
            out.add((long) x);
        }
        return out;
    }

    /** {@code BlockStored} in array form; {@code lora} and {@code medium} are dropped from the end when null and {@code omitTrailingNones}. */
    public static List<Object> storedArray(Object hashes, Object parent, int[] tokens, int blockSize, Integer lora,
                                           String medium, boolean omitTrailingNones) {
        List<Object> e = new ArrayList<>(Arrays.asList("BlockStored", hashes, parent, ints(tokens), (long) blockSize,
                lora == null ? null : (long) lora, medium));
        if (omitTrailingNones) {
            while (e.get(e.size() - 1) == null) {
                e.remove(e.size() - 1);
            }
        }
        return e;
    }

    /** {@code BlockStored} in map form; null {@code parent}, {@code lora} and {@code medium} are omitted (defaults). */
    public static Map<String, Object> storedMap(Object hashes, Object parent, int[] tokens, int blockSize, Integer lora,
                                                String medium) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("type", "BlockStored");
        e.put("block_hashes", hashes);
        if (parent != null) {
            e.put("parent_block_hash", parent);
        }
        e.put("token_ids", ints(tokens));
        e.put("block_size", (long) blockSize);
        if (lora != null) {
            e.put("lora_id", (long) lora);
        }
        if (medium != null) {
            e.put("medium", medium);
        }
        return e;
    }

    public static List<Object> removedArray(Object hashes, String medium) {
        return medium == null ? List.of("BlockRemoved", hashes) : List.of("BlockRemoved", hashes, medium);
    }

    public static Map<String, Object> removedMap(Object hashes, String medium) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("type", "BlockRemoved");
        e.put("block_hashes", hashes);
        if (medium != null) {
            e.put("medium", medium);
        }
        return e;
    }

    public static List<Object> clearedArray() {
        return List.of("AllBlocksCleared");
    }

    public static Map<String, Object> clearedMap() {
        return Map.of("type", "AllBlocksCleared");
    }

    /** {@code KVEventBatch} in array form: {@code [ts, events]} or {@code [ts, events, dp_rank]}. */
    public static byte[] batchArray(double ts, List<?> events, Integer dpRank) {
        List<Object> b = new ArrayList<>(Arrays.asList(ts, events));
        if (dpRank != null) {
            b.add((long) dpRank);
        }
        return pack(b);
    }

    /** {@code KVEventBatch} in map form. */
    public static byte[] batchMap(double ts, List<?> events, Integer dpRank) {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("ts", ts);
        b.put("events", events);
        if (dpRank != null) {
            b.put("data_parallel_rank", (long) dpRank);
        }
        return pack(b);
    }

    public static byte[] pack(Object value) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            write(p, value);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(MessageBufferPacker p, Object v) throws IOException {
        if (v == null) {
            p.packNil();
        } else if (v instanceof String s) {
            p.packString(s);
        } else if (v instanceof BigInteger b) {
            p.packBigInteger(b);
        } else if (v instanceof Long l) {
            p.packLong(l);
        } else if (v instanceof Integer i) {
            p.packLong(i);
        } else if (v instanceof Double d) {
            p.packDouble(d);
        } else if (v instanceof byte[] bytes) {
            p.packBinaryHeader(bytes.length);
            p.writePayload(bytes);
        } else if (v instanceof List<?> list) {
            p.packArrayHeader(list.size());
            for (Object o : list) {
                write(p, o);
            }
        } else if (v instanceof Map<?, ?> map) {
            p.packMapHeader(map.size());
            for (Map.Entry<?, ?> e : map.entrySet()) {
                write(p, e.getKey());
                write(p, e.getValue());
            }
        } else {
            throw new IllegalArgumentException("cannot pack " + v.getClass());
        }
    }
}
