package io.flotilla.router.core;

import java.util.List;
import java.util.stream.Collectors;

/** The filters of one policy, applied in order; a worker is eligible when every one admits it. */
public record FilterChain(List<Filter> filters) {

    /** The filters every policy applies: they keep a decision correct, so no configuration removes them. */
    public static final FilterChain STANDARD = new FilterChain(List.of(new EligibleFilter(), new LoraFilter(),
            new TenancyFilter()));

    public FilterChain {
        filters = List.copyOf(filters);
    }

    public boolean admits(RoutingRequest request, WorkerView worker) {
        for (Filter f : filters) {
            if (!f.admits(request, worker)) {
                return false;
            }
        }
        return true;
    }

    public List<String> names() {
        return filters.stream().map(Filter::name).collect(Collectors.toList());
    }
}
