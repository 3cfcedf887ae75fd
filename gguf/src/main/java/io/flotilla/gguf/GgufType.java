package io.flotilla.gguf;

/**
 * Metadata value types of GGUF v3, with their codes in the file. llama.cpp checks a key's type exactly
 * (a context length written as int32 instead of uint32 fails the load), so a writer states the type of
 * every value; nothing is inferred from the Java value.
 */
public enum GgufType {
    UINT8(0, 1), INT8(1, 1), UINT16(2, 2), INT16(3, 2), UINT32(4, 4), INT32(5, 4), FLOAT32(6, 4), BOOL(7, 1),
    STRING(8, -1), ARRAY(9, -1), UINT64(10, 8), INT64(11, 8), FLOAT64(12, 8);

    private final int code;
    private final int size;

    GgufType(int code, int size) {
        this.code = code;
        this.size = size;
    }

    public int code() {
        return code;
    }

    /** Bytes of one value in the file; -1 for the variable-length string and array. */
    int size() {
        return size;
    }

    boolean isInteger() {
        return this != FLOAT32 && this != FLOAT64 && this != BOOL && this != STRING && this != ARRAY;
    }

    static GgufType ofCode(long code) {
        for (GgufType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown GGUF value type " + code);
    }
}
