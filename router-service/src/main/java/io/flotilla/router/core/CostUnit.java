package io.flotilla.router.core;

import java.util.List;

/**
 * The unit all costs of one decision are priced in. Costs of different units are never compared:
 * milliseconds are used only when every candidate in the pool advertises timing and capacity.
 */
public enum CostUnit {
    MILLISECONDS,
    BLOCKS;

    public static CostUnit of(List<Candidate> candidates) {
        for (Candidate c : candidates) {
            if (c.worker().timing().isEmpty() || c.worker().totalKvBlocks() == 0) {
                return BLOCKS;
            }
        }
        return MILLISECONDS;
    }
}
