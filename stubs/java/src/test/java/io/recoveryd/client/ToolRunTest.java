package io.recoveryd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.recoveryd.v1.Action;
import io.recoveryd.v1.DecideRequest;
import io.recoveryd.v1.DecideResponse;
import io.recoveryd.v1.ErrorKind;
import io.recoveryd.v1.RecordOutcomeRequest;
import io.recoveryd.v1.RecordOutcomeResponse;
import io.recoveryd.v1.RecoveryServiceGrpc;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ToolRunTest {
    /** Answers Decide from a script and records every request. */
    static final class Fake extends RecoveryServiceGrpc.RecoveryServiceImplBase {
        final Deque<DecideResponse> script = new ArrayDeque<>();
        final List<DecideRequest> decides = new ArrayList<>();
        final List<RecordOutcomeRequest> outcomes = new ArrayList<>();

        @Override
        public synchronized void decide(DecideRequest req, StreamObserver<DecideResponse> out) {
            decides.add(req);
            out.onNext(script.removeFirst());
            out.onCompleted();
        }

        @Override
        public synchronized void recordOutcome(RecordOutcomeRequest req, StreamObserver<RecordOutcomeResponse> out) {
            outcomes.add(req);
            out.onNext(RecordOutcomeResponse.getDefaultInstance());
            out.onCompleted();
        }
    }

    private Server server;
    private ManagedChannel channel;

    private RecoveryClient serve(Fake fake) throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor().addService(fake).build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        return new RecoveryClient(channel, Duration.ofMillis(500), "test", FallbackPolicy.DEFAULT);
    }

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
        }
    }

    private static DecideResponse.Builder resp(Action a) {
        return DecideResponse.newBuilder().setAction(a).setTimeoutMs(1000);
    }

    @Test
    void retryThenSuccessReportsOutcomeWithPermit() throws Exception {
        Fake fake = new Fake();
        fake.script.add(resp(Action.ACTION_PROCEED).setPermitId("1:7").build());
        fake.script.add(resp(Action.ACTION_RETRY).setDelayMs(10).setPermitId("1:8").build());
        RecoveryClient client = serve(fake);
        int[] calls = {0};
        ToolFunction<String> search = timeoutMs -> {
            if (++calls[0] == 1) {
                throw ToolFailure.http("503 Service Unavailable", 503);
            }
            return "ok";
        };
        RunResult<String> res = client.runTool("search", Map.of("search", search), RunOptions.turn("t1"));
        assertEquals(RunResult.Status.SUCCEEDED, res.status());
        assertEquals("ok", res.value());
        assertTrue(res.outcomeRecorded());
        DecideRequest failed = fake.decides.get(1);
        assertEquals(503, failed.getError().getHttpStatus());
        assertEquals(1, failed.getAttempt());
        assertEquals("1:7", failed.getPermitId());
        assertEquals("t1", failed.getTurnId());
        RecordOutcomeRequest rec = fake.outcomes.get(0);
        assertEquals(2, rec.getAttempt());
        assertEquals("1:8", rec.getPermitId());
        assertNotEquals(failed.getOutcomeId(), rec.getOutcomeId());
    }

    /** One failure answered by `retry`, then a success; returns the ms waited between the calls. */
    private long runWithOneRetry(DecideResponse retry) throws Exception {
        Fake fake = new Fake();
        fake.script.add(resp(Action.ACTION_PROCEED).build());
        fake.script.add(retry);
        RecoveryClient client = serve(fake);
        List<Long> starts = new ArrayList<>();
        ToolFunction<String> search = timeoutMs -> {
            starts.add(System.nanoTime());
            if (starts.size() == 1) {
                throw ToolFailure.http("503 Service Unavailable", 503);
            }
            return "ok";
        };
        RunResult<String> res = client.runTool("search", Map.of("search", search), RunOptions.turn(""));
        assertEquals(RunResult.Status.SUCCEEDED, res.status());
        assertEquals(2, starts.size());
        return (starts.get(1) - starts.get(0)) / 1_000_000;
    }

    @Test
    void retrySleepsDelayUsWhenSent() throws Exception {
        long waited = runWithOneRetry(resp(Action.ACTION_RETRY).setDelayMs(2000).setDelayUs(30_000).build());
        assertTrue(waited >= 30 && waited < 1000, "waited " + waited + " ms");
    }

    @Test
    void retrySleepsDelayMsFromAnOlderServer() throws Exception {
        long waited = runWithOneRetry(resp(Action.ACTION_RETRY).setDelayMs(200).build());
        assertTrue(waited >= 200, "waited " + waited + " ms");
    }

    @Test
    void timeoutIsReportedAsTimeoutKind() throws Exception {
        Fake fake = new Fake();
        fake.script.add(resp(Action.ACTION_PROCEED).setTimeoutMs(50).build());
        fake.script.add(resp(Action.ACTION_GIVE_UP).setReason("max attempts (5) reached").build());
        RecoveryClient client = serve(fake);
        long start = System.nanoTime();
        RunResult<String> res = client.runTool("slow", Map.<String, ToolFunction<String>>of("slow", t -> {
            Thread.sleep(5_000);
            return "late";
        }), RunOptions.turn(""));
        assertEquals(RunResult.Status.GIVE_UP, res.status());
        assertTrue((System.nanoTime() - start) / 1_000_000 < 1_000);
        assertEquals(ErrorKind.ERROR_KIND_TIMEOUT, fake.decides.get(1).getError().getKind());
    }

    @Test
    void unreachableServiceFallsBackLocally() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        int[] calls = {0};
        long start = System.nanoTime();
        RunResult<String> res;
        try (RecoveryClient client = new RecoveryClient("127.0.0.1:" + port)) {
            res = client.runTool("search", Map.<String, ToolFunction<String>>of("search", t -> {
                calls[0]++;
                throw new IllegalStateException("boom");
            }), RunOptions.turn(""));
        }
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertEquals(RunResult.Status.GIVE_UP, res.status());
        assertTrue(res.fallback());
        assertEquals(3, calls[0]);
        assertTrue(tookMs >= 300 && tookMs < 5_000, "took " + tookMs + " ms");
    }
}
