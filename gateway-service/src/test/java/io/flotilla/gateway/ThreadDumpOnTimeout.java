package io.flotilla.gateway;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;

/**
 * A test that failed on a timeout prints every thread of the JVM first, so a hang seen once on a loaded
 * machine (a blocked event loop, a lock) can be read from the surefire report instead of guessed at.
 */
public final class ThreadDumpOnTimeout implements TestExecutionExceptionHandler {

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        if (timedOut(thrown)) {
            StringBuilder dump = new StringBuilder("threads when " + context.getDisplayName() + " timed out:\n");
            for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
                dump.append(t.toString());
                StackTraceElement[] stack = t.getStackTrace();
                for (int i = 8; i < stack.length; i++) { // ThreadInfo.toString stops at eight frames
                    dump.append("\tat ").append(stack[i]).append('\n');
                }
            }
            System.err.println(dump);
        }
        throw thrown;
    }

    private static boolean timedOut(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof java.util.concurrent.TimeoutException || c.getClass().getSimpleName().contains("Timeout")
                    || String.valueOf(c.getMessage()).contains("Timeout")) {
                return true;
            }
        }
        return false;
    }
}
