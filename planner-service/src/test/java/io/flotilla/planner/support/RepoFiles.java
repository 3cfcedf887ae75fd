package io.flotilla.planner.support;

import java.nio.file.Files;
import java.nio.file.Path;

/** Files of the repository, found from the working directory of a test run (the module's or the root). */
public final class RepoFiles {

    private RepoFiles() {
    }

    public static Path path(String relative) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("planner-service"))) {
                return dir.resolve(relative);
            }
        }
        throw new IllegalStateException("repository root not found above " + Path.of("").toAbsolutePath());
    }
}
