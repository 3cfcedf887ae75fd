package io.flotilla.worker.engine.vllm;

import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Decodes the msgpack payload of one vLLM KV event message into a {@link VllmEventBatch}.
 *
 * <p>Accepts every wire form vLLM has shipped for {@code KVEventBatch} and its events (msgspec
 * structs with {@code omit_defaults=True}, tagged by class name):
 * <ul>
 *   <li>positional arrays ({@code array_like=True}): batch {@code [ts, events, data_parallel_rank?]},
 *       event {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id,
 *       medium, lora_name, extra_keys, ...]}, {@code ["BlockRemoved", block_hashes, medium]}, {@code ["AllBlocksCleared"]};
 *       trailing fields equal to their defaults may be missing;</li>
 *   <li>maps keyed by field name with the class name under {@code "type"}; fields equal to their
 *       defaults may be missing and unknown fields are ignored.</li>
 * </ul>
 * A block hash is an integer (uint64 values at or above 2^63 keep their 64 bits in the long) or a
 * raw digest (bytes, of which the last 8 are read big-endian, as vLLM does when it converts a digest
 * to an integer). Fields added by newer engines are ignored; an unknown event type decodes to
 * {@link VllmKvEvent.Unknown}. Stateless and thread-safe.
 */
public final class VllmEventDecoder {

    /** The payload is not a KV event batch in any known form. */
    public static final class FormatException extends RuntimeException {
        FormatException(String message) {
            super(message);
        }
    }

    private static final int[] NO_TOKENS = new int[0];
    private static final long[] NO_HASHES = new long[0];

    private VllmEventDecoder() {
    }

    /** @throws FormatException when the payload is not a KV event batch in a known form */
    public static VllmEventBatch decode(byte[] payload) {
        Value root;
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload)) {
            root = unpacker.unpackValue();
        } catch (IOException | RuntimeException e) {
            throw new FormatException("not msgpack: " + e.getMessage());
        }
        try {
            return batch(root);
        } catch (FormatException e) {
            throw e;
        } catch (RuntimeException e) { // a field of the wrong msgpack type, an int out of range
            throw new FormatException(e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static VllmEventBatch batch(Value root) {
        if (root.isArrayValue()) {
            ArrayValue a = root.asArrayValue();
            if (a.size() < 2) {
                throw new FormatException("batch array has " + a.size() + " elements");
            }
            return new VllmEventBatch(number(a.get(0)), events(a.get(1)), a.size() > 2 ? optInt(a.get(2)) : null);
        }
        if (root.isMapValue()) {
            Map<Value, Value> m = root.asMapValue().map();
            Value ts = field(m, "ts");
            Value events = field(m, "events");
            if (events == null) {
                throw new FormatException("batch map without events");
            }
            return new VllmEventBatch(ts == null ? 0 : number(ts), events(events), optInt(field(m, "data_parallel_rank")));
        }
        throw new FormatException("batch is a " + root.getValueType());
    }

    private static List<VllmKvEvent> events(Value v) {
        if (!v.isArrayValue()) {
            throw new FormatException("events is a " + v.getValueType());
        }
        List<VllmKvEvent> out = new ArrayList<>(v.asArrayValue().size());
        for (Value e : v.asArrayValue()) {
            out.add(event(e));
        }
        return out;
    }

    static VllmKvEvent event(Value v) {
        if (v.isArrayValue()) {
            List<Value> a = v.asArrayValue().list();
            if (a.isEmpty() || !a.get(0).isStringValue()) {
                throw new FormatException("event array without a type tag");
            }
            String type = a.get(0).asStringValue().asString();
            return switch (type) {
                case "BlockStored" -> new VllmKvEvent.BlockStored(hashes(at(a, 1)), optHash(at(a, 2)), tokens(at(a, 3)),
                        optIntOr(at(a, 4), 0), optInt(at(a, 5)), optString(at(a, 6)), optString(at(a, 7)),
                        extraKeys(at(a, 8)));
                case "BlockRemoved" -> new VllmKvEvent.BlockRemoved(hashes(at(a, 1)), optString(at(a, 2)));
                case "AllBlocksCleared" -> new VllmKvEvent.AllBlocksCleared();
                default -> new VllmKvEvent.Unknown(type);
            };
        }
        if (v.isMapValue()) {
            Map<Value, Value> m = v.asMapValue().map();
            Value tag = field(m, "type");
            if (tag == null || !tag.isStringValue()) {
                throw new FormatException("event map without a type tag");
            }
            String type = tag.asStringValue().asString();
            return switch (type) {
                case "BlockStored" -> new VllmKvEvent.BlockStored(hashes(field(m, "block_hashes")),
                        optHash(field(m, "parent_block_hash")), tokens(field(m, "token_ids")),
                        optIntOr(field(m, "block_size"), 0), optInt(field(m, "lora_id")), optString(field(m, "medium")),
                        optString(field(m, "lora_name")), extraKeys(field(m, "extra_keys")));
                case "BlockRemoved" -> new VllmKvEvent.BlockRemoved(hashes(field(m, "block_hashes")),
                        optString(field(m, "medium")));
                case "AllBlocksCleared" -> new VllmKvEvent.AllBlocksCleared();
                default -> new VllmKvEvent.Unknown(type);
            };
        }
        throw new FormatException("event is a " + v.getValueType());
    }

    /** A block hash: an integer's 64 bits, or the last 8 bytes (big-endian) of a raw digest. */
    static long hash(Value v) {
        if (v.isIntegerValue()) {
            return v.asIntegerValue().asBigInteger().longValue();
        }
        if (v.isBinaryValue()) {
            byte[] b = v.asBinaryValue().asByteArray();
            long h = 0;
            for (int i = Math.max(0, b.length - 8); i < b.length; i++) {
                h = (h << 8) | (b[i] & 0xFF);
            }
            return h;
        }
        throw new FormatException("block hash is a " + v.getValueType());
    }

    private static long[] hashes(Value v) {
        if (v == null || v.isNilValue()) {
            return NO_HASHES;
        }
        if (!v.isArrayValue()) {
            throw new FormatException("block_hashes is a " + v.getValueType());
        }
        ArrayValue a = v.asArrayValue();
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = hash(a.get(i));
        }
        return out;
    }

    private static Long optHash(Value v) {
        return v == null || v.isNilValue() ? null : hash(v);
    }

    private static int[] tokens(Value v) {
        if (v == null || v.isNilValue()) {
            return NO_TOKENS;
        }
        if (!v.isArrayValue()) {
            throw new FormatException("token_ids is a " + v.getValueType());
        }
        ArrayValue a = v.asArrayValue();
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i).asIntegerValue().toInt();
        }
        return out;
    }

    /** {@code extra_keys}: null when absent or nil; else one entry per block (nil: no keys). */
    private static List<VllmKvEvent.ExtraKeys> extraKeys(Value v) {
        if (v == null || v.isNilValue()) {
            return null;
        }
        if (!v.isArrayValue()) {
            throw new FormatException("extra_keys is a " + v.getValueType());
        }
        List<VllmKvEvent.ExtraKeys> out = new ArrayList<>(v.asArrayValue().size());
        for (Value block : v.asArrayValue()) {
            if (block.isNilValue()) {
                out.add(VllmKvEvent.ExtraKeys.NONE);
                continue;
            }
            if (!block.isArrayValue()) {
                throw new FormatException("an extra_keys entry is a " + block.getValueType());
            }
            List<String> strings = new ArrayList<>();
            boolean opaque = false;
            for (Value key : block.asArrayValue()) {
                if (key.isStringValue()) {
                    strings.add(key.asStringValue().asString());
                } else {
                    opaque = true;
                }
            }
            out.add(new VllmKvEvent.ExtraKeys(strings, opaque));
        }
        return out;
    }

    private static Integer optInt(Value v) {
        return v == null || v.isNilValue() ? null : v.asIntegerValue().toInt();
    }

    private static int optIntOr(Value v, int fallback) {
        Integer i = optInt(v);
        return i == null ? fallback : i;
    }

    private static String optString(Value v) {
        return v == null || v.isNilValue() ? null : v.asStringValue().asString();
    }

    private static double number(Value v) {
        if (v.isFloatValue()) {
            return v.asFloatValue().toDouble();
        }
        if (v.isIntegerValue()) {
            return v.asIntegerValue().toLong();
        }
        throw new FormatException("ts is a " + v.getValueType());
    }

    private static Value at(List<Value> a, int i) {
        return i < a.size() ? a.get(i) : null;
    }

    private static Value field(Map<Value, Value> m, String name) {
        return m.get(ValueFactory.newString(name));
    }
}
