package io.recoveryd.client;

import java.util.List;

/**
 * What the runner does alone while the service is unreachable or slow: every
 * failure counts as retryable, nothing is classified, no breaker is kept.
 *
 * @param maxAttempts attempts in total for a tool, the first included
 * @param delaysMs delay before attempt 2, 3, ...; the last repeats
 * @param timeoutMs per-call timeout when the service gave none
 */
public record FallbackPolicy(int maxAttempts, List<Long> delaysMs, long timeoutMs) {
    public static final FallbackPolicy DEFAULT = new FallbackPolicy(3, List.of(100L, 200L), 30_000L);

    public FallbackPolicy {
        delaysMs = delaysMs.isEmpty() ? List.of(0L) : List.copyOf(delaysMs);
    }

    long delayBefore(int attempt) {
        return delaysMs.get(Math.min(attempt - 2, delaysMs.size() - 1));
    }
}
