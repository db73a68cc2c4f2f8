package io.recoveryd.client;

import io.grpc.StatusRuntimeException;
import io.recoveryd.v1.Action;
import io.recoveryd.v1.DecideRequest;
import io.recoveryd.v1.DecideResponse;
import io.recoveryd.v1.ErrorKind;
import io.recoveryd.v1.RecordOutcomeRequest;
import io.recoveryd.v1.ToolError;
import java.net.SocketTimeoutException;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** One run of {@link RecoveryClient#runTool}; not reused. */
final class ToolRun<T> {
    /** Tool calls run here so a call that overruns can be abandoned. */
    private static final ExecutorService TOOL_THREADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "recoveryd-tool");
        t.setDaemon(true);
        return t;
    });

    /** A failed service call: unreachable, deadline, refused. */
    private static final class ServiceUnusable extends Exception {
        ServiceUnusable(String message) {
            super(message, null, false, false);
        }
    }

    /** The call was interrupted; the run ends at once. */
    private static final class Interrupted extends Exception {
        Interrupted() {
            super("interrupted", null, false, false);
        }
    }

    private final RecoveryClient client;
    private final Map<String, ToolFunction<T>> tools;
    private final RunOptions options;
    private final RunResult<T> res;

    ToolRun(RecoveryClient client, String toolId, Map<String, ToolFunction<T>> tools, RunOptions options) {
        this.client = client;
        this.tools = tools == null ? Map.of() : tools;
        this.options = options == null ? RunOptions.turn("") : options;
        this.res = new RunResult<>(toolId);
    }

    RunResult<T> run() {
        try {
            loop();
        } catch (Interrupted e) {
            Thread.currentThread().interrupt();
            end(RunResult.Status.INTERRUPTED, res.toolId, "interrupted");
        } catch (RuntimeException e) {
            // Only a bug in this loop gets here; the executor still gets a result.
            end(RunResult.Status.GIVE_UP, res.toolId, "internal error: " + e);
        }
        return res;
    }

    private void loop() throws Interrupted {
        String tool = res.toolId;
        Set<String> visited = new HashSet<>(Set.of(tool));
        String key = options.idempotencyKey();
        client.awaitConnection();
        DecideResponse resp;
        try {
            resp = decide(tool, null, 0, 0, "", "", key);
        } catch (ServiceUnusable e) {
            fallback(tool, 0, 0, e.getMessage());
            return;
        }
        String permit = resp.getPermitId();
        long timeoutMs = resp.getTimeoutMs();
        if (resp.getAction() == Action.ACTION_USE_ALTERNATIVE) {
            tool = resp.getAlternativeToolId();
            if (!switchTo(tool, visited)) {
                return;
            }
        } else if (resp.getAction() != Action.ACTION_PROCEED) {
            stop(tool, resp);
            return;
        }

        int attempt = 0;
        long toolStart = System.nanoTime();
        RetryClock clock = new RetryClock();
        while (true) {
            ToolFunction<T> fn = tools.get(tool);
            if (fn == null) {
                end(RunResult.Status.NO_ALTERNATIVE, tool, "no function for tool " + tool);
                return;
            }
            attempt++;
            String outcomeId = UUID.randomUUID().toString();
            long attemptStart = System.nanoTime();
            if (invoke(fn, tool, attempt, key, timeoutMs)) {
                succeed(tool, attempt, millisSince(toolStart), outcomeId, permit);
                return;
            }
            long elapsedMs = clock.failed(attemptStart, res.error instanceof ToolTimeout);
            try {
                resp = decide(tool, toProto(res.error), attempt, elapsedMs, outcomeId, permit, key);
            } catch (ServiceUnusable e) {
                fallback(tool, attempt, timeoutMs, e.getMessage());
                return;
            }
            res.classification = resp.getClassification();
            permit = resp.getPermitId();
            timeoutMs = resp.getTimeoutMs();
            switch (resp.getAction()) {
                case ACTION_RETRY -> {
                    if (!resp.getIdempotencyKey().isEmpty()) {
                        key = resp.getIdempotencyKey();
                    }
                    sleepMicros(retryWaitMicros(resp));
                }
                case ACTION_VERIFY -> {
                    Boolean happened = verify(tool, resp, attempt, key);
                    if (happened == null) {
                        verificationRequired(tool, resp);
                        return;
                    }
                    if (happened) {
                        succeedVerified(tool, attempt, permit);
                        return;
                    }
                    // It did not happen: calling the tool again is safe, once
                    // admission allows it (the breaker may have opened meanwhile).
                    try {
                        resp = decide(tool, null, attempt, 0, "", "", key);
                    } catch (ServiceUnusable e) {
                        fallback(tool, attempt, timeoutMs, e.getMessage());
                        return;
                    }
                    permit = resp.getPermitId();
                    timeoutMs = resp.getTimeoutMs();
                    if (resp.getAction() == Action.ACTION_USE_ALTERNATIVE) {
                        tool = resp.getAlternativeToolId();
                        if (!switchTo(tool, visited)) {
                            return;
                        }
                        attempt = 0;
                        toolStart = System.nanoTime();
                        clock = new RetryClock();
                    } else if (resp.getAction() != Action.ACTION_PROCEED) {
                        stop(tool, resp);
                        return;
                    }
                }
                case ACTION_USE_ALTERNATIVE -> {
                    tool = resp.getAlternativeToolId();
                    if (!switchTo(tool, visited)) {
                        return;
                    }
                    attempt = 0;
                    toolStart = System.nanoTime();
                    clock = new RetryClock();
                }
                default -> {
                    stop(tool, resp);
                    return;
                }
            }
        }
    }

    /** Two tools failing over to each other would otherwise loop. */
    private boolean switchTo(String tool, Set<String> visited) {
        if (!visited.add(tool)) {
            end(RunResult.Status.GIVE_UP, tool, "alternative " + tool + " was already tried in this run");
            return false;
        }
        return true;
    }

    private void end(RunResult.Status status, String tool, String reason) {
        res.status = status;
        res.toolId = tool;
        res.reason = reason;
    }

    private void stop(String tool, DecideResponse resp) {
        res.cascade = resp.getCascadeList();
        if (resp.hasClassification()) {
            res.classification = resp.getClassification();
        }
        RunResult.Status status = switch (resp.getAction()) {
            case ACTION_FAIL_FAST -> RunResult.Status.FAIL_FAST;
            case ACTION_ESCALATE -> RunResult.Status.ESCALATE;
            case ACTION_GIVE_UP -> RunResult.Status.GIVE_UP;
            case ACTION_PARTIAL -> RunResult.Status.PARTIAL;
            default -> null;
        };
        if (status == null) {
            end(RunResult.Status.GIVE_UP, tool, "unexpected action " + resp.getAction());
        } else {
            end(status, tool, resp.getReason());
        }
    }

    /**
     * Asks the caller's verifier whether the failed call had its effect: true,
     * false, or null when there is no verifier or it could not tell (the run
     * then stops: never a blind retry).
     */
    private Boolean verify(String tool, DecideResponse resp, int attempt, String key) throws Interrupted {
        String verifyTool = resp.getVerifyToolId();
        res.verifyToolId = verifyTool;
        Verifier v = options.verifiers().getOrDefault(verifyTool, options.verifier());
        if (v == null) {
            return null;
        }
        long timeout = resp.getTimeoutMs() > 0 ? resp.getTimeoutMs() : client.fallback.timeoutMs();
        VerifyRequest req = new VerifyRequest(tool, verifyTool, attempt, res.error, resp.getReason(),
                resp.getClassification(), key, options.turnId(), timeout);
        Future<Boolean> future = TOOL_THREADS.submit(() -> v.verify(req));
        try {
            return future.get(timeout, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            future.cancel(true);
            return null;
        } catch (InterruptedException e) {
            future.cancel(true);
            throw new Interrupted();
        }
    }

    private void verificationRequired(String tool, DecideResponse resp) {
        res.cascade = resp.getCascadeList();
        if (resp.hasClassification()) {
            res.classification = resp.getClassification();
        }
        end(RunResult.Status.VERIFICATION_REQUIRED, tool, resp.getReason());
    }

    /** The failed call did have its effect: a success of the tool, so the breaker and the trace count it. */
    private void succeedVerified(String tool, int attempt, String permit) {
        Throwable failed = res.error; // kept: the failure the verifier judged
        res.value = null;
        res.verified = true;
        succeed(tool, attempt, 0, UUID.randomUUID().toString(), permit);
        res.error = failed;
        res.reason = "verified by " + res.verifyToolId + ": the effect happened";
    }

    private DecideResponse decide(String tool, ToolError error, int attempt, long elapsedMs, String outcomeId,
                                  String permit, String key) throws ServiceUnusable {
        DecideRequest.Builder req = DecideRequest.newBuilder()
                .setToolId(tool).setAttempt(attempt).setElapsedMs(elapsedMs)
                .setTurnId(options.turnId()).addAllPlan(options.plan())
                .setExecutorId(client.executorId).setOutcomeId(outcomeId).setPermitId(permit)
                .setIdempotencyKey(key);
        if (error != null) {
            req.setError(error);
        }
        if (options.turnDeadlineEpochMs() > 0) {
            req.setTurnRemainingMs(options.turnDeadlineEpochMs() - System.currentTimeMillis());
        }
        DecideResponse resp;
        try {
            resp = client.stub().decide(req.build());
        } catch (StatusRuntimeException e) {
            throw new ServiceUnusable("Decide: " + e.getStatus().getCode() + ": " + e.getStatus().getDescription());
        }
        res.trace.addAll(resp.getTraceList());
        res.decisions.add(new RunResult.Decision(tool, resp.getAction(), resp.getDelayMs(), resp.getReason()));
        return resp;
    }

    private void succeed(String tool, int attempt, long latencyMs, String outcomeId, String permit) {
        res.permitId = permit;
        res.error = null;
        end(RunResult.Status.SUCCEEDED, tool, "");
        RecordOutcomeRequest req = RecordOutcomeRequest.newBuilder()
                .setToolId(tool).setSuccess(true).setLatencyMs(latencyMs).setAttempt(attempt)
                .setTurnId(options.turnId()).setOutcomeId(outcomeId).setPermitId(permit)
                .setExecutorId(client.executorId).build();
        try {
            client.stub().recordOutcome(req);
            res.outcomeRecorded = true;
        } catch (StatusRuntimeException e) {
            res.outcomeRecorded = false; // the tool succeeded; a lost report must not undo that
        }
    }

    private void fallback(String tool, int attemptsMade, long timeoutMs, String cause) throws Interrupted {
        FallbackPolicy p = client.fallback;
        res.fallback = true;
        res.fallbackReason = cause;
        ToolFunction<T> fn = tools.get(tool);
        if (fn == null) {
            end(RunResult.Status.NO_ALTERNATIVE, tool, "no function for tool " + tool);
            return;
        }
        long timeout = timeoutMs > 0 ? timeoutMs : p.timeoutMs();
        for (int attempt = attemptsMade + 1; attempt <= p.maxAttempts(); attempt++) {
            if (attempt > 1) {
                long delay = p.delayBefore(attempt);
                res.decisions.add(new RunResult.Decision(tool, Action.ACTION_RETRY, delay, "local fallback"));
                sleepMicros(msToMicros(delay));
            }
            if (invoke(fn, tool, attempt, options.idempotencyKey(), timeout)) {
                end(RunResult.Status.SUCCEEDED, tool, "local fallback");
                return;
            }
        }
        end(RunResult.Status.GIVE_UP, tool, "local fallback: " + p.maxAttempts() + " attempts failed");
    }

    /** Calls fn under a hard timeout; a call that overruns is interrupted and abandoned. */
    private boolean invoke(ToolFunction<T> fn, String tool, int attempt, String key, long timeoutMs)
            throws Interrupted {
        long timeout = timeoutMs > 0 ? timeoutMs : client.fallback.timeoutMs();
        res.attempts++;
        res.idempotencyKey = key;
        Attempt a = new Attempt(tool, attempt, key, timeout);
        Future<T> future = TOOL_THREADS.submit(() -> fn.call(a));
        try {
            res.value = future.get(timeout, TimeUnit.MILLISECONDS);
            res.error = null;
            return true;
        } catch (TimeoutException e) {
            future.cancel(true);
            res.error = new ToolTimeout(timeout);
        } catch (ExecutionException e) {
            res.error = e.getCause() == null ? e : e.getCause();
        } catch (InterruptedException e) {
            future.cancel(true);
            throw new Interrupted();
        }
        res.value = null;
        return false;
    }

    /** The wait a RETRY asks for: delay_us, the delay to the microsecond, or
     *  delay_ms from a server that predates delay_us (it sends 0). */
    static long retryWaitMicros(DecideResponse resp) {
        return resp.getDelayUs() > 0 ? resp.getDelayUs() : msToMicros(resp.getDelayMs());
    }

    /** Saturating, so an absurd delay sleeps long instead of wrapping negative. */
    private static long msToMicros(long ms) {
        return ms > Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : ms * 1000;
    }

    private static void sleepMicros(long us) throws Interrupted {
        try {
            if (us > 0) {
                Thread.sleep(us / 1000, (int) (us % 1000) * 1000);
            }
        } catch (InterruptedException e) {
            throw new Interrupted();
        }
    }

    /**
     * The retry time DecideRequest.elapsed_ms carries: wall time since the first
     * attempt failed, without the attempts that ran into their timeout (the
     * service bounds those by the tool timeout and the turn deadline, so counting
     * them would spend the retry budget on one timeout).
     */
    private static final class RetryClock {
        private long firstFailed;
        private boolean failedOnce;
        private long timedOutNanos;

        long failed(long attemptStart, boolean timedOut) {
            long now = System.nanoTime();
            if (!failedOnce) {
                failedOnce = true;
                firstFailed = now;
                return 0;
            }
            if (timedOut) {
                timedOutNanos += now - attemptStart;
            }
            return Math.max(0, (now - firstFailed - timedOutNanos) / 1_000_000);
        }
    }

    private static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** The wire form of a tool's exception. */
    /**
     * The most of an error message sent, in UTF-8 bytes: its head and tail (a
     * traceback's cause is its last line) with a marker for the middle. The
     * service reads 8 KiB of each end and accepts up to its receive limit.
     */
    static final int MESSAGE_SEND_MAX = 32 * 1024;

    static String cutMessage(String text) {
        byte[] data = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (data.length <= MESSAGE_SEND_MAX) {
            return text;
        }
        int room = MESSAGE_SEND_MAX - 48;
        int h = room / 2;
        int t = data.length - (room - h);
        while (h > 0 && (data[h] & 0xC0) == 0x80) {
            h--;
        }
        while (t < data.length && (data[t] & 0xC0) == 0x80) {
            t++;
        }
        var utf8 = java.nio.charset.StandardCharsets.UTF_8;
        return new String(data, 0, h, utf8) + "\n[... " + (t - h) + " bytes cut ...]\n"
                + new String(data, t, data.length - t, utf8);
    }

    static ToolError toProto(Throwable e) {
        ToolError err = toolError(e);
        String cut = cutMessage(err.getMessage());
        return cut.equals(err.getMessage()) ? err : err.toBuilder().setMessage(cut).build();
    }

    private static ToolError toolError(Throwable e) {
        if (e instanceof ToolFailure tf) {
            return tf.toolError();
        }
        if (e == null) {
            return ToolError.newBuilder().setMessage("tool failed").build();
        }
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        ToolError.Builder b = ToolError.newBuilder().setMessage(message).setExceptionType(e.getClass().getName());
        if (e instanceof ToolTimeout || e instanceof SocketTimeoutException || e instanceof TimeoutException) {
            b.setKind(ErrorKind.ERROR_KIND_TIMEOUT);
        }
        return b.build();
    }
}
