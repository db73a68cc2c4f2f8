package io.recoveryd.client;

import io.recoveryd.v1.PlanStep;
import java.util.List;
import java.util.Map;

/**
 * Per-run settings.
 *
 * @param turnId the turn the call belongs to ("" for none)
 * @param turnDeadlineEpochMs when &gt; 0, sent as the turn's remaining budget;
 *     otherwise the service keeps the turn clock
 * @param plan the turn's tools for cascade decisions; empty: the manifests' graph
 * @param verifiers answer VERIFY (the effect of a non-idempotent call is
 *     unknown), by the verify tool id the service names
 * @param verifier answers VERIFY for a verify tool without an entry in
 *     {@code verifiers}; with neither the run ends VERIFICATION_REQUIRED
 * @param idempotencyKey sent with Decide, and to the tool in its {@link Attempt}
 */
public record RunOptions(String turnId, long turnDeadlineEpochMs, List<PlanStep> plan,
                         Map<String, Verifier> verifiers, Verifier verifier, String idempotencyKey) {
    public RunOptions {
        turnId = turnId == null ? "" : turnId;
        plan = plan == null ? List.of() : List.copyOf(plan);
        verifiers = verifiers == null ? Map.of() : Map.copyOf(verifiers);
        idempotencyKey = idempotencyKey == null ? "" : idempotencyKey;
    }

    public RunOptions(String turnId, long turnDeadlineEpochMs, List<PlanStep> plan) {
        this(turnId, turnDeadlineEpochMs, plan, Map.of(), null, "");
    }

    public static RunOptions turn(String turnId) {
        return new RunOptions(turnId, 0, List.of());
    }

    /** These options with a verifier per verify tool id. */
    public RunOptions withVerifiers(Map<String, Verifier> byVerifyTool) {
        return new RunOptions(turnId, turnDeadlineEpochMs, plan, byVerifyTool, verifier, idempotencyKey);
    }

    /** These options with one verifier for every verify tool. */
    public RunOptions withVerifier(Verifier any) {
        return new RunOptions(turnId, turnDeadlineEpochMs, plan, verifiers, any, idempotencyKey);
    }

    /** These options with an idempotency key. */
    public RunOptions withIdempotencyKey(String key) {
        return new RunOptions(turnId, turnDeadlineEpochMs, plan, verifiers, verifier, key);
    }
}
