package io.flotilla.cluster.launcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Keeps two bin/flotilla commands from changing the same cluster at once. */
final class LauncherLock implements AutoCloseable {

    private final FileChannel channel;
    private final FileLock lock;

    private LauncherLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    static LauncherLock acquire(Path file) {
        try {
            Files.createDirectories(file.getParent());
            FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = ch.tryLock();
            if (lock == null) {
                ch.close();
                throw new LauncherException("another bin/flotilla command is running on " + file.getParent());
            }
            return new LauncherLock(ch, lock);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** As {@link #acquire(Path)}, retrying for up to {@code wait} while another command holds the lock. */
    static LauncherLock acquire(Path file, java.time.Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            try {
                return acquire(file);
            } catch (LauncherException busy) {
                if (System.nanoTime() >= deadline) {
                    throw busy;
                }
                ProcessControl.sleep(100);
            }
        }
    }

    @Override
    public void close() {
        try {
            lock.release();
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
