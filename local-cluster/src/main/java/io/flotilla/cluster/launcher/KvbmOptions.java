package io.flotilla.cluster.launcher;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The simulated workers' KV tiers below the device ({@code bin/flotilla up --kvbm-host SIZE --kvbm-disk SIZE
 * --kv-blocks N}): host memory and disk per worker, and the device pool's size in blocks. Each worker's
 * disk tier lives in {@code <state dir>/kvbm/<worker id>} and survives a {@code start-worker}.
 *
 * @param hostBytes    host-memory tier per worker (0: none)
 * @param diskBytes    disk tier per worker (0: none; needs a host tier)
 * @param deviceBlocks device KV blocks per worker, or 0 for the workers' default
 */
public record KvbmOptions(long hostBytes, long diskBytes, int deviceBlocks) {

    public static final KvbmOptions NONE = new KvbmOptions(0, 0, 0);
    /** The device pool's payload per block (flotilla.worker.sim.kv-bytes-per-block's default). */
    static final long PAYLOAD_BYTES_PER_BLOCK = 16 * 1024;
    static final int DEFAULT_DEVICE_BLOCKS = 8192;
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([kmgt]i?b?|b)?", Pattern.CASE_INSENSITIVE);

    public KvbmOptions {
        if (hostBytes < 0 || diskBytes < 0 || deviceBlocks < 0) {
            throw new LauncherException("--kvbm-host, --kvbm-disk and --kv-blocks must not be negative");
        }
        if (diskBytes > 0 && hostBytes == 0) {
            throw new LauncherException("--kvbm-disk needs --kvbm-host: the disk tier is filled from host memory");
        }
    }

    /** From the command line; sizes like 2GiB, 512MiB, 8G, 1.5g or plain bytes (binary units either way). */
    public static KvbmOptions parse(String host, String disk, Integer deviceBlocks) {
        return new KvbmOptions(host == null ? 0 : bytes("--kvbm-host", host), disk == null ? 0 : bytes("--kvbm-disk", disk),
                deviceBlocks == null ? 0 : deviceBlocks);
    }

    static long bytes(String flag, String size) {
        Matcher m = SIZE.matcher(size.trim());
        if (!m.matches()) {
            throw new LauncherException(flag + " " + size + ": not a size (e.g. 2GiB, 512MiB, 8G)");
        }
        String unit = m.group(2) == null ? "b" : m.group(2).toLowerCase(Locale.ROOT);
        long scale = switch (unit.charAt(0)) {
            case 'k' -> 1L << 10;
            case 'm' -> 1L << 20;
            case 'g' -> 1L << 30;
            case 't' -> 1L << 40;
            default -> 1;
        };
        return (long) (Double.parseDouble(m.group(1)) * scale);
    }

    /** Worker {@code workerId}'s arguments. */
    public List<String> workerArgs(String workerId, Path stateDir) {
        List<String> args = new ArrayList<>();
        if (deviceBlocks > 0) {
            args.add("--flotilla.worker.sim.total-blocks=" + deviceBlocks);
        }
        if (hostBytes > 0) {
            args.add("--flotilla.worker.kvbm.host-bytes=" + hostBytes);
            args.add("--flotilla.worker.kvbm.disk-bytes=" + diskBytes);
            args.add("--flotilla.worker.kvbm.disk-dir=" + stateDir.resolve("kvbm"));
        }
        return args;
    }

    /** {@code -XX:MaxDirectMemorySize} of a worker: the host tier, the device pool and 256 MiB for everything else. */
    public String workerDirectMemory() {
        long device = (deviceBlocks > 0 ? deviceBlocks : DEFAULT_DEVICE_BLOCKS) * PAYLOAD_BYTES_PER_BLOCK;
        long mib = Math.max(512, (hostBytes + device >> 20) + 256);
        return mib + "m";
    }

    void save(ClusterState state) {
        state.setLayout("kvbm-host-bytes", Long.toString(hostBytes));
        state.setLayout("kvbm-disk-bytes", Long.toString(diskBytes));
        state.setLayout("kv-blocks", Integer.toString(deviceBlocks));
    }

    static KvbmOptions load(ClusterState state) {
        return new KvbmOptions(Long.parseLong(state.layout("kvbm-host-bytes", "0")),
                Long.parseLong(state.layout("kvbm-disk-bytes", "0")), Integer.parseInt(state.layout("kv-blocks", "0")));
    }
}
