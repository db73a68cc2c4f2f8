package io.recoveryd.client;

import io.recoveryd.v1.Classification;

/**
 * What a {@link Verifier} is asked.
 *
 * @param toolId the tool whose effect is unknown
 * @param verifyToolId the read-only tool the manifest names
 * @param attempt the failed attempt
 * @param error what the failed attempt threw
 * @param reason the service's reason
 * @param classification the service's classification of the failure
 * @param idempotencyKey the key the failed call was sent with ("" for none)
 * @param turnId the run's turn
 * @param timeoutMs the verify tool's timeout
 */
public record VerifyRequest(String toolId, String verifyToolId, int attempt, Throwable error, String reason,
                            Classification classification, String idempotencyKey, String turnId,
                            long timeoutMs) {}
