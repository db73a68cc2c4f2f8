package io.recoveryd.client;

/** A tool call overran its hard timeout; the runner stopped waiting for it. */
public class ToolTimeout extends Exception {
    private final long timeoutMs;

    public ToolTimeout(long timeoutMs) {
        super("tool call timed out after " + timeoutMs + " ms");
        this.timeoutMs = timeoutMs;
    }

    public long timeoutMs() {
        return timeoutMs;
    }
}
