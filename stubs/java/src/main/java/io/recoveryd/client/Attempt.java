package io.recoveryd.client;

/**
 * The call a tool function is running ({@link ToolFunction#call(Attempt)}).
 *
 * @param toolId the tool this call runs (the run's tool or an alternative)
 * @param number 1 for the first call of this tool in the run
 * @param idempotencyKey the key to send with the call (an Idempotency-Key
 *     header, a client reference): {@link RunOptions#idempotencyKey()}, or on a
 *     retry the key the service repeated; "" without one
 * @param timeoutMs the hard timeout of this call
 */
public record Attempt(String toolId, int number, String idempotencyKey, long timeoutMs) {}
