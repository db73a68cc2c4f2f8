package io.recoveryd.client;

import io.recoveryd.v1.Action;
import io.recoveryd.v1.CascadeStep;
import io.recoveryd.v1.Classification;
import io.recoveryd.v1.TraceEvent;
import java.util.ArrayList;
import java.util.List;

/** The typed end of a run. The runner never throws for tool or service trouble. */
public final class RunResult<T> {
    /** How the run ended. */
    public enum Status {
        SUCCEEDED,
        /** circuit open: the tool was not called (again) */
        FAIL_FAST,
        /** permanent error: a person or the model must act */
        ESCALATE,
        /** attempts or time used up (also: local fallback exhausted) */
        GIVE_UP,
        /** turn deadline reached */
        PARTIAL,
        /** the service named a tool the caller gave no function for */
        NO_ALTERNATIVE,
        /** the calling thread was interrupted */
        INTERRUPTED,
        /**
         * the effect of a non-idempotent call is unknown (VERIFY) and no
         * verifier could tell whether it happened; the tool was not called again
         */
        VERIFICATION_REQUIRED
    }

    /** One answer that steered the run, or a local fallback step. */
    public record Decision(String toolId, Action action, long delayMs, String reason) {}

    Status status = Status.GIVE_UP;
    String toolId;
    T value;
    int attempts;
    String reason = "";
    Throwable error;
    Classification classification;
    List<CascadeStep> cascade = List.of();
    final List<TraceEvent> trace = new ArrayList<>();
    final List<Decision> decisions = new ArrayList<>();
    String permitId = "";
    boolean outcomeRecorded;
    boolean fallback;
    String fallbackReason = "";
    boolean verified;
    String verifyToolId = "";
    String idempotencyKey = "";

    RunResult(String toolId) {
        this.toolId = toolId;
    }

    public boolean ok() { return status == Status.SUCCEEDED; }
    public Status status() { return status; }
    /** The tool that succeeded, or the one the run stopped on. */
    public String toolId() { return toolId; }
    public T value() { return value; }
    /** Tool invocations over the whole run. */
    public int attempts() { return attempts; }
    public String reason() { return reason; }
    /** The last tool error, or null. */
    public Throwable error() { return error; }
    public Classification classification() { return classification; }
    /** Dependents to skip, default or escalate. */
    public List<CascadeStep> cascade() { return cascade; }
    public List<TraceEvent> trace() { return List.copyOf(trace); }
    public List<Decision> decisions() { return List.copyOf(decisions); }
    /** The probe permit the successful call held ("" for none). */
    public String permitId() { return permitId; }
    /** False when a success could not be reported. */
    public boolean outcomeRecorded() { return outcomeRecorded; }
    /** The local policy decided because the service was unreachable. */
    public boolean fallback() { return fallback; }
    public String fallbackReason() { return fallbackReason; }
    /** Succeeded because a verifier said the failed call's effect happened (value is null). */
    public boolean verified() { return verified; }
    /** The verify tool the service named (VERIFY), or "". */
    public String verifyToolId() { return verifyToolId; }
    /** The idempotency key the last call was sent with, or "". */
    public String idempotencyKey() { return idempotencyKey; }
}
