package io.recoveryd.client;

/** One tool call. It receives the hard timeout the service returned and should respect it. */
@FunctionalInterface
public interface ToolFunction<T> {
    T call(long timeoutMs) throws Exception;
}
