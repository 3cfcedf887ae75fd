package io.flotilla.transfer;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Loads the native library once per class loader: from {@code -Dflotilla.transfer.native.path=<file>}
 * when given, otherwise from the jar resources {@code native/<os>-<arch>/}: first
 * {@code libflotilla_transfer_ucx.so} (present when the build found libucx; needs libucp at run
 * time), then {@code libflotilla_transfer.so} (tcp + shm, no dependencies beyond libc). Each is copied
 * to a temporary file, loaded with {@link System#load} and deleted (the mapping survives the unlink).
 * {@code -Dflotilla.transfer.native=false} skips loading: every AUTO agent then uses the Java engine.
 */
final class NativeLibrary {

    static final String LIBRARY = "libflotilla_transfer.so";
    static final String LIBRARY_UCX = "libflotilla_transfer_ucx.so";
    private static final System.Logger LOG = System.getLogger(NativeLibrary.class.getName());

    private static final Capabilities CAPABILITIES = load();

    private NativeLibrary() {
    }

    static boolean loaded() {
        return CAPABILITIES.nativeLoaded();
    }

    static Capabilities capabilities() {
        return CAPABILITIES;
    }

    static void require() {
        if (!loaded()) {
            throw new TransferException(ErrorCode.UNSUPPORTED, "native transfer library not loaded: " + CAPABILITIES.nativeLoadError().orElse("?"));
        }
    }

    /** The resource directory for this platform, e.g. {@code native/linux-x86_64}. */
    static String platformDirectory() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux") ? "linux" : System.getProperty("os.name");
        String arch = System.getProperty("os.arch", "");
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            arch = "x86_64";
        }
        return "native/" + os + "-" + arch;
    }

    private static Capabilities load() {
        Set<Backend> java = Set.of(Backend.TCP);
        String ucx = "not in this build (libucx-dev was absent when it was built)";
        try {
            if (!Boolean.parseBoolean(System.getProperty("flotilla.transfer.native", "true"))) {
                throw new IllegalStateException("disabled by -Dflotilla.transfer.native=false");
            }
            String explicit = System.getProperty("flotilla.transfer.native.path");
            if (explicit != null) {
                System.load(Path.of(explicit).toAbsolutePath().toString());
                ucx = "loaded from " + explicit;
            } else {
                String dir = platformDirectory() + "/";
                boolean loadedUcx = false;
                if (NativeLibrary.class.getClassLoader().getResource(dir + LIBRARY_UCX) != null) {
                    try {
                        loadFromResource(dir + LIBRARY_UCX);
                        loadedUcx = true;
                        ucx = "built and loaded (" + LIBRARY_UCX + ")";
                    } catch (UnsatisfiedLinkError e) { // libucp missing on this host: use the plain variant
                        ucx = "built, but " + LIBRARY_UCX + " did not load: " + e.getMessage();
                    }
                }
                if (!loadedUcx) {
                    loadFromResource(dir + LIBRARY);
                }
            }
            int abi = NativeBridge.abiVersion();
            if (abi != NativeBridge.ABI_VERSION) {
                throw new IllegalStateException("native ABI " + abi + ", Java expects " + NativeBridge.ABI_VERSION);
            }
            Set<Backend> backends = EnumSet.copyOf(Backend.fromBits(NativeBridge.compiledBackends()));
            LOG.log(Level.DEBUG, "native transfer library loaded: backends {0}, ucx {1}", backends, ucx);
            return new Capabilities(true, Optional.empty(), Set.copyOf(backends), java, ucx);
        } catch (Throwable t) { // UnsatisfiedLinkError, IOException, missing resource: fall back to Java
            String error = t.getClass().getSimpleName() + ": " + t.getMessage();
            LOG.log(Level.INFO, "native transfer library unavailable, using the Java engine: {0}", error);
            return new Capabilities(false, Optional.of(error), Set.of(), java, "native library not loaded");
        }
    }

    private static void loadFromResource(String resource) throws IOException {
        try (InputStream in = NativeLibrary.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("no resource " + resource + " (platform not built into this jar)");
            }
            Path tmp = Files.createTempFile("flotilla_transfer", ".so");
            try {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                System.load(tmp.toAbsolutePath().toString());
            } finally {
                Files.deleteIfExists(tmp);
            }
        }
    }
}
