package io.flotilla.gateway.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The accepted API keys. Keys are kept only as SHA-256 digests and compared in constant time; a key
 * is known to the rest of the gateway by its id {@code key-<first 12 hex digits of its digest>}
 * (rate limiting, tenant accounting), never by its value. Empty means the API is open.
 */
public final class ApiKeys {

    private final List<byte[]> digests;

    public ApiKeys(List<String> keys) {
        List<byte[]> d = new ArrayList<>();
        for (String k : keys) {
            if (k != null && !k.isBlank()) {
                d.add(digest(k.strip()));
            }
        }
        this.digests = List.copyOf(d);
    }

    /** The configured keys plus those of {@code file} (one per line, {@code #} comments), when given. */
    public static ApiKeys load(List<String> keys, String file) {
        List<String> all = new ArrayList<>(keys);
        if (file != null && !file.isBlank()) {
            try {
                for (String line : Files.readAllLines(Path.of(file), StandardCharsets.UTF_8)) {
                    String k = line.strip();
                    if (!k.isEmpty() && !k.startsWith("#")) {
                        all.add(k);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the API keys file " + file + ": " + e.getMessage(), e);
            }
        }
        return new ApiKeys(all);
    }

    public boolean open() {
        return digests.isEmpty();
    }

    /** The id of {@code presented} when it is an accepted key. */
    public Optional<String> identify(String presented) {
        byte[] d = digest(presented);
        boolean match = false;
        for (byte[] known : digests) {
            match |= MessageDigest.isEqual(known, d); // no early exit: time does not depend on which key matched
        }
        return match ? Optional.of("key-" + HexFormat.of().formatHex(d, 0, 6)) : Optional.empty();
    }

    private static byte[] digest(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
