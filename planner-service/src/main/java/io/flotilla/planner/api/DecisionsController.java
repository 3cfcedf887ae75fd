package io.flotilla.planner.api;

import io.flotilla.planner.service.DecisionHistory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;
import java.util.Map;

/** {@code GET /planner/decisions[?limit=N]}: {@code {"decisions": [...]}}, newest first. */
@RestController
public class DecisionsController {

    private final DecisionHistory history;

    public DecisionsController(DecisionHistory history) {
        this.history = history;
    }

    @GetMapping(path = "/planner/decisions", produces = "application/json")
    public Map<String, Object> decisions(@RequestParam(name = "limit", defaultValue = "100") int limit) {
        List<Map<String, Object>> out = history.newest(Math.max(0, limit)).stream().map(DecisionJson::of).toList();
        return Map.of("decisions", out);
    }
}
