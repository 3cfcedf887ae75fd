package io.flotilla.transfer.bench;

import io.flotilla.transfer.Backend;
import io.flotilla.transfer.Implementation;
import io.flotilla.transfer.Notification;
import io.flotilla.transfer.Registration;
import io.flotilla.transfer.TransferAgent;
import io.flotilla.transfer.TransferConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The far side of a two-process transfer (benchmark and cross-process tests): one agent with one
 * region from {@code allocateShared}, driven by line commands on stdin, one answer line each.
 * <pre>
 * java -cp transfer-native.jar io.flotilla.transfer.bench.PeerProcess NAME ENGINE(native|java|auto) BACKENDS(shm,tcp,ucx|all) REGION_BYTES
 *   prints   READY &lt;base64 metadata&gt; &lt;region id&gt; &lt;engine the agent got&gt;
 *   LOAD b64                    load a remote agent's metadata      OK name
 *   FILL offset length seed     write the test pattern              OK
 *   CRC offset length           CRC32C of a range                   OK hex
 *   NOTIFS                      drain notifications                 OK n agent:b64 ...
 *   NOTIFY agent b64            send a notification                 OK
 *   QUIT
 * </pre>
 * Any failure answers {@code ERR message}.
 */
public final class PeerProcess {

    private PeerProcess() {
    }

    /** Writes the deterministic test pattern: byte i of a fill with {@code seed} is {@link #patternByte}(seed, i). */
    public static void fill(ByteBuffer region, int offset, int length, long seed) {
        ByteBuffer b = region.slice(offset, length).order(ByteOrder.LITTLE_ENDIAN);
        int words = length / 8;
        for (int w = 0; w < words; w++) {
            b.putLong(w * 8, patternWord(seed, w));
        }
        for (int i = words * 8; i < length; i++) {
            b.put(i, patternByte(seed, i));
        }
    }

    public static byte patternByte(long seed, long i) {
        return (byte) (patternWord(seed, i / 8) >>> (8 * (i % 8)));
    }

    private static long patternWord(long seed, long w) {
        long x = (seed + 1) * 0x9E3779B97F4A7C15L + w * 0xBF58476D1CE4E5B9L;
        x ^= x >>> 31;
        x *= 0x94D049BB133111EBL;
        return x ^ (x >>> 29);
    }

    public static long crc(ByteBuffer region, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(region.slice(offset, length));
        return crc.getValue();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: PeerProcess NAME native|java|auto shm,tcp|all REGION_BYTES");
            System.exit(2);
        }
        TransferConfig config = TransferConfig.defaults().withImplementation(Implementation.valueOf(args[1].toUpperCase()));
        List<Backend> list = new ArrayList<>();
        if (args[2].equals("all")) { // every backend this engine has here, ucx included
            Implementation engine = config.implementation() == Implementation.AUTO ? (TransferAgent.nativeLoaded() ? Implementation.NATIVE : Implementation.JAVA) : config.implementation();
            list.addAll(engine == Implementation.NATIVE ? TransferAgent.capabilities().nativeBackends() : TransferAgent.capabilities().javaBackends());
        } else {
            for (String b : args[2].split(",")) {
                list.add(Backend.valueOf(b.trim().toUpperCase()));
            }
        }
        config = config.withBackends(list.get(0), list.subList(1, list.size()).toArray(Backend[]::new));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (TransferAgent agent = TransferAgent.create(args[0], config)) {
            Registration region = agent.allocateShared(Long.parseLong(args[3]));
            ByteBuffer view = region.requireBuffer();
            Base64.Encoder b64 = Base64.getEncoder();
            out.println("READY " + b64.encodeToString(agent.localMetadata()) + " " + region.id() + " " + agent.implementation());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] w = line.trim().split(" ");
                try {
                    switch (w[0]) {
                        case "LOAD" -> out.println("OK " + agent.loadRemoteMetadata(Base64.getDecoder().decode(w[1])));
                        case "FILL" -> {
                            fill(view, Integer.parseInt(w[1]), Integer.parseInt(w[2]), Long.parseLong(w[3]));
                            out.println("OK");
                        }
                        case "CRC" -> out.println("OK " + Long.toHexString(crc(view, Integer.parseInt(w[1]), Integer.parseInt(w[2]))));
                        case "NOTIFS" -> {
                            StringBuilder sb = new StringBuilder();
                            List<Notification> got = agent.pollNotifications();
                            for (Notification n : got) {
                                sb.append(' ').append(n.agent()).append(':').append(b64.encodeToString(n.payload()));
                            }
                            out.println("OK " + got.size() + sb);
                        }
                        case "NOTIFY" -> {
                            agent.sendNotification(w[1], Base64.getDecoder().decode(w[2]));
                            out.println("OK");
                        }
                        case "QUIT" -> {
                            agent.deregister(region);
                            out.println("OK");
                            return;
                        }
                        default -> out.println("ERR unknown command " + w[0]);
                    }
                } catch (RuntimeException e) {
                    out.println("ERR " + String.valueOf(e.getMessage()).replace('\n', ' '));
                }
            }
        }
    }
}
