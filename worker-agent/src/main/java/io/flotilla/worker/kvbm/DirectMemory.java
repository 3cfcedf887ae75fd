package io.flotilla.worker.kvbm;

import java.lang.management.ManagementFactory;
import java.util.List;

/** The JVM's limit on direct (off-heap) buffers, which the host-memory tier and the device pool share. */
public final class DirectMemory {

    private DirectMemory() {
    }

    /** {@code -XX:MaxDirectMemorySize}, or the heap limit the JVM defaults it to. */
    public static long limit() {
        return limit(ManagementFactory.getRuntimeMXBean().getInputArguments(), Runtime.getRuntime().maxMemory());
    }

    static long limit(List<String> jvmArgs, long maxHeap) {
        long limit = maxHeap;
        for (String a : jvmArgs) {
            if (a.startsWith("-XX:MaxDirectMemorySize=")) {
                limit = parse(a.substring("-XX:MaxDirectMemorySize=".length()));
            }
        }
        return limit;
    }

    static long parse(String v) {
        String s = v.trim().toLowerCase(java.util.Locale.ROOT);
        long unit = 1;
        char last = s.charAt(s.length() - 1);
        switch (last) {
            case 'k' -> unit = 1L << 10;
            case 'm' -> unit = 1L << 20;
            case 'g' -> unit = 1L << 30;
            case 't' -> unit = 1L << 40;
            default -> { }
        }
        return Long.parseLong(unit == 1 ? s : s.substring(0, s.length() - 1)) * unit;
    }

    /**
     * Fails fast, with the flag to set, when {@code needed} bytes of direct memory cannot fit.
     *
     * @throws IllegalStateException naming {@code -XX:MaxDirectMemorySize}
     */
    public static void require(long needed, String what) {
        long limit = limit();
        if (needed > limit) {
            throw new IllegalStateException(what + " need " + needed + " bytes of direct memory, but the JVM allows "
                    + limit + "; start it with -XX:MaxDirectMemorySize=" + ((needed >> 20) + 64) + "m or more");
        }
    }
}
