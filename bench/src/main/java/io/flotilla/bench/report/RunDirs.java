package io.flotilla.bench.report;

/** Where {@code bench compare} puts each run: {@code <out>/<label with / replaced by ->}. */
public final class RunDirs {

    private RunDirs() {
    }

    public static String dirName(String label) {
        return label.replaceAll("[^A-Za-z0-9._-]", "-");
    }
}
