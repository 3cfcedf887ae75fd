package io.flotilla.transfer.bench;

import io.flotilla.transfer.Backend;
import io.flotilla.transfer.Implementation;
import io.flotilla.transfer.MemcpyBaseline;
import io.flotilla.transfer.MemoryRegion;
import io.flotilla.transfer.Registration;
import io.flotilla.transfer.TransferAgent;
import io.flotilla.transfer.TransferConfig;
import io.flotilla.transfer.TransferRequest;
import io.flotilla.transfer.XferDescList;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.List;
import java.util.Locale;

/**
 * Transfer bandwidth between two processes on this machine, per backend and block size, next to a
 * single-thread memcpy measured in the same run. Not a test: numbers go to stdout.
 * <pre>
 * ./mvnw -q -pl transfer-native package -DskipTests
 * java -cp transfer-native/target/transfer-native-0.1.0-SNAPSHOT.jar io.flotilla.transfer.bench.TransferBandwidth [seconds-per-trial [trials]]
 * </pre>
 * The peer is a {@link PeerProcess} child JVM holding a 64 MiB shared region. "batched": each request
 * moves the whole 64 MiB as descriptors of the block size (how KV blocks move); "per-block": one
 * descriptor per request, 4 requests in flight. GB/s is 10^9 bytes per second.
 */
public final class TransferBandwidth {

    private static final int REGION = 64 << 20;
    private static final int[] BLOCKS = {16 << 10, 256 << 10, 4 << 20};
    private static final int IN_FLIGHT = 4;

    private TransferBandwidth() {
    }

    private record Child(Process process, PrintStream in, BufferedReader out, byte[] metadata, long region) {
        static Child start(String name, String engine) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"), PeerProcess.class.getName(),
                    name, engine, engine.equals("java") ? "tcp" : "all", Integer.toString(REGION)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String[] ready = out.readLine().split(" ");
            return new Child(p, new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8), out, Base64.getDecoder().decode(ready[1]),
                    Long.parseLong(ready[2]));
        }

        void stop() throws Exception {
            in.println("QUIT");
            out.readLine();
            process.waitFor();
        }
    }

    /** One measured line of the table: an agent and a direction. */
    private record Case(String label, TransferAgent agent, String peer, Registration local, long remoteRegion, boolean write, boolean shm) {
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 0.3;
        int trials = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        System.out.printf(Locale.ROOT, "flotilla transfer bandwidth: two processes, %d MiB region, JDK %s, native=%s, backends=%s, %d CPUs%n",
                REGION >> 20, Runtime.version(), TransferAgent.nativeLoaded(), TransferAgent.backends(), Runtime.getRuntime().availableProcessors());
        System.out.printf(Locale.ROOT, "each cell: best of %d trials of >= %.2f s; memcpy: best of the trials taken before every cell of its block size%n", trials, seconds);
        // page-aligned, as KV pools are: a malloc'd direct buffer starts 16 bytes into a page, and a copy
        // whose destination sits just ahead of its source modulo 4 KiB pays the CPU's 4K-aliasing penalty
        ByteBuffer a = ByteBuffer.allocateDirect(REGION + 4096).alignedSlice(4096), b = ByteBuffer.allocateDirect(REGION + 4096).alignedSlice(4096);
        PeerProcess.fill(a, 0, REGION, 1);
        PeerProcess.fill(b, 0, REGION, 2);

        Child nativePeer = TransferAgent.nativeLoaded() ? Child.start("bench-peer-native", "native") : null;
        Child javaPeer = Child.start("bench-peer-java", "java");
        List<TransferAgent> agents = new ArrayList<>();
        List<Case> cases = new ArrayList<>();
        List<Object[]> setups = new ArrayList<>();
        if (nativePeer != null) {
            for (Backend backend : List.of(Backend.SHM, Backend.UCX, Backend.TCP)) {
                if (TransferAgent.backends().contains(backend)) {
                    setups.add(new Object[] {backend.name().toLowerCase(Locale.ROOT) + " (native)", Implementation.NATIVE, backend, nativePeer});
                }
            }
        }
        setups.add(new Object[] {"tcp (Java engine, both sides)", Implementation.JAVA, Backend.TCP, javaPeer});
        for (Object[] c : setups) {
            Child peer = (Child) c[3];
            TransferConfig config = TransferConfig.defaults().withImplementation((Implementation) c[1]).withBackends((Backend) c[2]).withWorkerThreads(IN_FLIGHT);
            TransferAgent agent = TransferAgent.create("bench-" + agents.size(), config);
            agents.add(agent);
            String peerName = agent.loadRemoteMetadata(peer.metadata());
            Registration local = agent.register(MemoryRegion.of(a));
            for (boolean write : new boolean[] {true, false}) {
                cases.add(new Case(c[0] + (write ? " write" : " read"), agent, peerName, local, peer.region(), write, c[2] == Backend.SHM));
            }
        }

        double[] memcpy = new double[BLOCKS.length];
        double[][][] best = new double[cases.size()][BLOCKS.length][2];
        for (int i = 0; i < BLOCKS.length; i++) {
            for (int t = 0; t < trials; t++) {
                for (int k = 0; k < cases.size(); k++) {
                    Case c = cases.get(k);
                    memcpy[i] = Math.max(memcpy[i], memcpyTrial(a, b, BLOCKS[i], seconds)); // next to every case, same conditions
                    for (int mode = 0; mode < 2; mode++) {
                        best[k][i][mode] = Math.max(best[k][i][mode], measure(c.agent(), c.peer(), c.local(), c.remoteRegion(), BLOCKS[i], c.write(), mode == 0, seconds));
                    }
                }
            }
        }
        for (TransferAgent agent : agents) {
            agent.close();
        }
        if (nativePeer != null) {
            nativePeer.stop();
        }
        javaPeer.stop();

        List<String[]> rows = new ArrayList<>();
        String[] m = new String[1 + 2 * BLOCKS.length];
        m[0] = "memcpy (" + MemcpyBaseline.implementation() + ", 1 thread, same process)";
        for (int i = 0; i < BLOCKS.length; i++) {
            m[1 + 2 * i] = fmt(memcpy[i]);
            m[2 + 2 * i] = "";
        }
        rows.add(m);
        for (int k = 0; k < cases.size(); k++) {
            String[] r = new String[1 + 2 * BLOCKS.length];
            r[0] = cases.get(k).label();
            for (int i = 0; i < BLOCKS.length; i++) {
                double batched = best[k][i][0];
                r[1 + 2 * i] = fmt(batched) + (cases.get(k).shm() ? String.format(Locale.ROOT, " (%.0f%%)", 100 * batched / memcpy[i]) : "");
                r[2 + 2 * i] = fmt(best[k][i][1]);
            }
            rows.add(r);
        }
        print(rows);
    }

    private static double memcpyTrial(ByteBuffer src, ByteBuffer dst, int block, double seconds) {
        MemcpyBaseline.nanos(dst, src, block, 1);
        long ns = 0;
        int iters = 0;
        while (ns < seconds * 1e9 || iters < 3) {
            ns += MemcpyBaseline.nanos(dst, src, block, 1);
            iters++;
        }
        return (double) REGION * iters / ns;
    }

    /** GB/s over at least {@code seconds} (and 2 rounds) after one warm-up round. */
    private static double measure(TransferAgent agent, String peer, Registration local, long remoteRegion, int block, boolean write,
            boolean batched, double seconds) throws Exception {
        int blocks = REGION / block;
        List<XferDescList[]> requests = new ArrayList<>();
        if (batched) {
            XferDescList l = XferDescList.of(), r = XferDescList.of();
            for (int k = 0; k < blocks; k++) {
                l.add(local, (long) k * block, block);
                r.add(remoteRegion, (long) k * block, block);
            }
            requests.add(new XferDescList[] {l, r});
        } else {
            for (int k = 0; k < blocks; k++) {
                requests.add(new XferDescList[] {XferDescList.of().add(local, (long) k * block, block), XferDescList.of().add(remoteRegion, (long) k * block, block)});
            }
        }
        round(agent, peer, requests, write); // warm-up: connections, page faults
        long bytes = 0, t0 = System.nanoTime();
        int rounds = 0;
        while (System.nanoTime() - t0 < seconds * 1e9 || rounds < 2) {
            round(agent, peer, requests, write);
            bytes += REGION;
            rounds++;
        }
        return bytes / (double) (System.nanoTime() - t0);
    }

    /** Posts every request of one pass over the region, at most {@link #IN_FLIGHT} outstanding. */
    private static void round(TransferAgent agent, String peer, List<XferDescList[]> requests, boolean write) throws Exception {
        Deque<TransferRequest> inFlight = new ArrayDeque<>();
        for (XferDescList[] q : requests) {
            if (inFlight.size() == IN_FLIGHT) {
                finish(inFlight.removeFirst());
            }
            inFlight.addLast(write ? agent.write(peer, q[0], q[1], null) : agent.read(peer, q[0], q[1], null));
        }
        while (!inFlight.isEmpty()) {
            finish(inFlight.removeFirst());
        }
    }

    private static void finish(TransferRequest r) throws InterruptedException {
        try (r) {
            r.awaitDone(Duration.ofSeconds(60));
        }
    }

    private static String fmt(double gbPerSecond) {
        return String.format(Locale.ROOT, "%.2f", gbPerSecond);
    }

    private static void print(List<String[]> rows) {
        String[] head = {"GB/s", "16 KiB batched", "16 KiB per-block", "256 KiB batched", "256 KiB per-block", "4 MiB batched", "4 MiB per-block"};
        int[] width = new int[head.length];
        for (int i = 0; i < head.length; i++) {
            width[i] = head[i].length();
            for (String[] r : rows) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : prepend(head, rows)) {
            for (int i = 0; i < r.length; i++) {
                sb.append(i == 0 ? String.format("%-" + width[i] + "s", r[i]) : String.format("  %" + width[i] + "s", r[i]));
            }
            sb.append('\n');
        }
        System.out.print(sb);
        System.out.println("shm percentages are of the single-thread memcpy in the same column; per-block keeps " + IN_FLIGHT + " requests in flight.");
    }

    private static List<String[]> prepend(String[] head, List<String[]> rows) {
        List<String[]> all = new ArrayList<>();
        all.add(head);
        all.addAll(rows);
        return all;
    }
}
