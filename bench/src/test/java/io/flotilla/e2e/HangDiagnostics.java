package io.flotilla.e2e;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What every Flotilla JVM on this machine was doing when a test ran past its JUnit timeout
 * ({@code junit-platform.properties}: a whole-cluster test that hangs fails instead of holding the build until
 * CI gives up, which says nothing about where it hung). Each service's full {@code jcmd Thread.print} goes to a
 * file under the system temporary directory, and a digest to the test's output: any deadlock the JVM found, and
 * every thread that is blocked on a monitor or inside Flotilla code and not waiting for work, with its top frames.
 *
 * <p>Registered for every test of this module by JUnit's extension autodetection
 * ({@code META-INF/services/org.junit.jupiter.api.extension.Extension}); it acts on timeouts only and rethrows
 * what it is given.
 */
public final class HangDiagnostics implements TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {

    /** Frames printed of each thread in the digest. */
    private static final int FRAMES = 14;
    /** A thread is inside Flotilla code when one of its top frames is. */
    private static final int OWN_FRAMES = 7;
    /** Frames of a thread waiting for work, not stuck: left out of the digest unless it is blocked on a monitor. */
    private static final List<String> IDLE = List.of("EPoll.wait", "ThreadPoolExecutor.getTask", "BlockingQueue.poll",
            "BlockingQueue.take", "java.lang.Thread.sleep", "ServerSocketChannelImpl.accept");

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable error) throws Throwable {
        dumpOnTimeout(context, error);
        throw error;
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable error) throws Throwable {
        dumpOnTimeout(context, error);
        throw error;
    }

    @Override
    public void handleAfterAllMethodExecutionException(ExtensionContext context, Throwable error) throws Throwable {
        dumpOnTimeout(context, error);
        throw error;
    }

    private static void dumpOnTimeout(ExtensionContext context, Throwable error) {
        if (!(error instanceof TimeoutException)) {
            return;
        }
        try {
            Path dir = Files.createTempDirectory("flotilla-hang-");
            System.out.printf("%n%s timed out: thread dumps of every Flotilla JVM in %s%n", context.getDisplayName(), dir);
            for (ProcessHandle service : services()) {
                String name = serviceName(service);
                Path file = dir.resolve(name + "-" + service.pid() + ".txt");
                threadDump(service.pid(), file);
                System.out.printf("---- %s (pid %d)%n%s", name, service.pid(), digest(Files.readString(file)));
            }
        } catch (Exception e) { // the diagnosis must not replace the failure it diagnoses
            System.out.println("thread dumps failed: " + e);
        }
    }

    /** The service JVMs the launcher starts: each runs a Flotilla exec jar. */
    private static List<ProcessHandle> services() {
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != ProcessHandle.current().pid())
                .filter(p -> p.info().arguments().map(args -> List.of(args).stream()
                        .anyMatch(a -> a.endsWith("-exec.jar") || a.contains("io.flotilla."))).orElse(false))
                .toList();
    }

    private static String serviceName(ProcessHandle p) {
        Optional<String[]> args = p.info().arguments();
        if (args.isPresent()) {
            for (String a : args.get()) {
                if (a.endsWith("-exec.jar")) {
                    return Path.of(a).getFileName().toString().replace("-exec.jar", "");
                }
                if (a.startsWith("io.flotilla.")) { // a main class: the broker's launcher
                    return a.substring(a.lastIndexOf('.') + 1);
                }
            }
        }
        return "jvm";
    }

    /** {@code jcmd PID Thread.print} into {@code file}; given up after 30 s (attaching to a stuck JVM can hang too). */
    private static void threadDump(long pid, Path file) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(Files.isExecutable(jcmd) ? jcmd.toString() : "jcmd", Long.toString(pid),
                "Thread.print", "-l").redirectErrorStream(true).redirectOutput(file.toFile()).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
    }

    /** Deadlocks, and the threads that are blocked or inside Flotilla code, each cut to its top frames. */
    static String digest(String dump) {
        StringBuilder out = new StringBuilder();
        int deadlock = dump.indexOf("Found one Java-level deadlock");
        if (deadlock >= 0) {
            out.append(dump, deadlock, Math.min(dump.length(), deadlock + 4000)).append('\n');
        }
        for (String thread : dump.split("\n\n")) {
            if (!thread.startsWith("\"")) {
                continue;
            }
            List<String> lines = List.of(thread.split("\n"));
            List<String> top = lines.subList(0, Math.min(lines.size(), OWN_FRAMES + 2));
            boolean blocked = thread.contains("java.lang.Thread.State: BLOCKED");
            boolean inFlotilla = top.stream().anyMatch(l -> l.contains("at io.flotilla."));
            boolean idle = IDLE.stream().anyMatch(thread::contains);
            if (!blocked && (!inFlotilla || idle)) {
                continue;
            }
            out.append(String.join("\n", lines.subList(0, Math.min(lines.size(), FRAMES + 2)))).append("\n\n");
        }
        return out.toString();
    }
}
