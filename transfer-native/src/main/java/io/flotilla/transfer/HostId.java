package io.flotilla.transfer;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/** Same-host identity as the native library computes it: "boot id/host name". */
final class HostId {

    private static final String VALUE = compute();

    private HostId() {
    }

    static String get() {
        return VALUE;
    }

    private static String compute() {
        String boot = "unknown-boot";
        String host = "unknown-host";
        try {
            boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException ignored) {
            // unknown
        }
        return boot + "/" + host;
    }
}
