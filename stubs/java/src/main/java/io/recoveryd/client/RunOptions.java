package io.recoveryd.client;

import io.recoveryd.v1.PlanStep;
import java.util.List;

/**
 * Per-run settings.
 *
 * @param turnId the turn the call belongs to ("" for none)
 * @param turnDeadlineEpochMs when &gt; 0, sent as the turn's remaining budget;
 *     otherwise the service keeps the turn clock
 * @param plan the turn's tools for cascade decisions; empty: the manifests' graph
 */
public record RunOptions(String turnId, long turnDeadlineEpochMs, List<PlanStep> plan) {
    public RunOptions {
        turnId = turnId == null ? "" : turnId;
        plan = plan == null ? List.of() : List.copyOf(plan);
    }

    public static RunOptions turn(String turnId) {
        return new RunOptions(turnId, 0, List.of());
    }
}
