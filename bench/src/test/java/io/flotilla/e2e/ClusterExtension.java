package io.flotilla.e2e;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@link ClusterUnderTest} for one test class, as a JUnit extension: started before the class's
 * first test, closed (every process stopped, and checked) after its last.
 *
 * <pre>
 * &#64;RegisterExtension
 * static final ClusterExtension cluster = new ClusterExtension("flotilla-e2e-flow-", c -> c.up(…));
 * </pre>
 */
final class ClusterExtension implements BeforeAllCallback, AfterAllCallback {

    private final String stateDirPrefix;
    private final ClusterUnderTest.Up up;
    private ClusterUnderTest cluster;

    ClusterExtension(String stateDirPrefix, ClusterUnderTest.Up up) {
        this.stateDirPrefix = stateDirPrefix;
        this.up = up;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        cluster = ClusterUnderTest.start(stateDirPrefix, up);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (cluster != null) {
            cluster.close();
        }
    }

    ClusterUnderTest get() {
        if (cluster == null) {
            throw new IllegalStateException("the cluster is not up (beforeAll failed)");
        }
        return cluster;
    }
}
