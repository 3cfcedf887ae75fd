package io.flotilla.gguf;

import java.util.List;
import java.util.Objects;

/**
 * One metadata value with its exact GGUF type. Java representation: every integer type as {@link Long}
 * (uint64 above {@code Long.MAX_VALUE} wraps, as in the file), {@code FLOAT32} as {@link Float},
 * {@code FLOAT64} as {@link Double}, {@code BOOL} as {@link Boolean}, {@code STRING} as {@link String}
 * (UTF-8 in the file), {@code ARRAY} as an unmodifiable {@link List} of its elements in that same
 * representation ({@link GgufValue} for nested arrays), with {@link #elementType()} saying their type.
 *
 * @param type        the value's type
 * @param elementType the elements' type for an array, else null
 * @param value       the Java value, as above
 */
public record GgufValue(GgufType type, GgufType elementType, Object value) {

    public GgufValue {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(value, "value");
        if ((type == GgufType.ARRAY) != (elementType != null)) {
            throw new IllegalArgumentException("an element type goes with ARRAY and only with it");
        }
        if (type == GgufType.ARRAY) {
            List<?> items = List.copyOf((List<?>) value);
            for (Object item : items) {
                check(elementType, item);
            }
            value = items;
        } else {
            check(type, value);
        }
    }

    public static GgufValue uint8(int v) {
        return new GgufValue(GgufType.UINT8, null, (long) v);
    }

    public static GgufValue int8(int v) {
        return new GgufValue(GgufType.INT8, null, (long) v);
    }

    public static GgufValue uint16(int v) {
        return new GgufValue(GgufType.UINT16, null, (long) v);
    }

    public static GgufValue int16(int v) {
        return new GgufValue(GgufType.INT16, null, (long) v);
    }

    public static GgufValue uint32(long v) {
        return new GgufValue(GgufType.UINT32, null, v);
    }

    public static GgufValue int32(int v) {
        return new GgufValue(GgufType.INT32, null, (long) v);
    }

    public static GgufValue uint64(long v) {
        return new GgufValue(GgufType.UINT64, null, v);
    }

    public static GgufValue int64(long v) {
        return new GgufValue(GgufType.INT64, null, v);
    }

    public static GgufValue float32(float v) {
        return new GgufValue(GgufType.FLOAT32, null, v);
    }

    public static GgufValue float64(double v) {
        return new GgufValue(GgufType.FLOAT64, null, v);
    }

    public static GgufValue bool(boolean v) {
        return new GgufValue(GgufType.BOOL, null, v);
    }

    public static GgufValue string(String v) {
        return new GgufValue(GgufType.STRING, null, v);
    }

    public static GgufValue array(GgufType elementType, List<?> items) {
        return new GgufValue(GgufType.ARRAY, Objects.requireNonNull(elementType, "elementType"), items);
    }

    public static GgufValue strings(List<String> items) {
        return array(GgufType.STRING, items);
    }

    /** An array of int32 (token types, for example). */
    public static GgufValue int32s(int[] items) {
        return array(GgufType.INT32, java.util.Arrays.stream(items).mapToObj(i -> (long) i).toList());
    }

    /** An array of float32 (token scores, for example). */
    public static GgufValue float32s(float[] items) {
        Float[] boxed = new Float[items.length];
        for (int i = 0; i < items.length; i++) {
            boxed[i] = items[i];
        }
        return array(GgufType.FLOAT32, List.of(boxed));
    }

    /** An integer of any integer type. */
    public long asLong() {
        if (!type.isInteger()) {
            throw new IllegalStateException("a " + type + " is not an integer");
        }
        return (Long) value;
    }

    /** A FLOAT32 or FLOAT64. */
    public double asDouble() {
        if (type != GgufType.FLOAT32 && type != GgufType.FLOAT64) {
            throw new IllegalStateException("a " + type + " is not a float");
        }
        return ((Number) value).doubleValue();
    }

    public boolean asBoolean() {
        if (type != GgufType.BOOL) {
            throw new IllegalStateException("a " + type + " is not a bool");
        }
        return (Boolean) value;
    }

    public String asString() {
        if (type != GgufType.STRING) {
            throw new IllegalStateException("a " + type + " is not a string");
        }
        return (String) value;
    }

    public List<?> asList() {
        if (type != GgufType.ARRAY) {
            throw new IllegalStateException("a " + type + " is not an array");
        }
        return (List<?>) value;
    }

    /** An array of strings. */
    @SuppressWarnings("unchecked")
    public List<String> asStrings() {
        if (elementType != GgufType.STRING) {
            throw new IllegalStateException("not an array of strings but " + (elementType == null ? type : elementType));
        }
        return (List<String>) value;
    }

    /** An array of any integer type. */
    public int[] asInts() {
        if (elementType == null || !elementType.isInteger()) {
            throw new IllegalStateException("not an array of integers but " + (elementType == null ? type : elementType));
        }
        List<?> items = asList();
        int[] ints = new int[items.size()];
        for (int i = 0; i < ints.length; i++) {
            ints[i] = Math.toIntExact((Long) items.get(i));
        }
        return ints;
    }

    private static void check(GgufType type, Object v) {
        boolean ok = switch (type) {
            case FLOAT32 -> v instanceof Float;
            case FLOAT64 -> v instanceof Double;
            case BOOL -> v instanceof Boolean;
            case STRING -> v instanceof String;
            case ARRAY -> v instanceof GgufValue g && g.type == GgufType.ARRAY;
            default -> v instanceof Long l && inRange(type, l);
        };
        if (!ok) {
            throw new IllegalArgumentException("not a " + type + ": " + v + " (" + v.getClass().getSimpleName() + ")");
        }
    }

    private static boolean inRange(GgufType type, long v) {
        return switch (type) {
            case UINT8 -> v >= 0 && v <= 0xFF;
            case INT8 -> v >= Byte.MIN_VALUE && v <= Byte.MAX_VALUE;
            case UINT16 -> v >= 0 && v <= 0xFFFF;
            case INT16 -> v >= Short.MIN_VALUE && v <= Short.MAX_VALUE;
            case UINT32 -> v >= 0 && v <= 0xFFFF_FFFFL;
            case INT32 -> v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE;
            default -> true;
        };
    }
}
