package io.flotilla.planner.connector;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.PoolCounts;

import java.util.Optional;

/** Records only (the default): decisions are published and served, nothing is scaled. */
public final class ShadowConnector implements ScalingConnector {

    @Override
    public String name() {
        return "shadow";
    }

    @Override
    public ConnectorView observe(Fleet fleet) {
        return ConnectorView.UNKNOWN;
    }

    @Override
    public Optional<PoolCounts> apply(PoolCounts targets, Fleet fleet) {
        return Optional.empty();
    }
}
