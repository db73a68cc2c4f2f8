package io.recoveryd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.recoveryd.v1.Action;
import io.recoveryd.v1.Classification;
import io.recoveryd.v1.DecideRequest;
import io.recoveryd.v1.DecideResponse;
import io.recoveryd.v1.ErrorKind;
import io.recoveryd.v1.RecordOutcomeRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** VERIFY, idempotency keys and the tenant option, against a scripted in-process service. */
class VerifyTenantTest {
    private Server server;
    private ManagedChannel channel;
    private final List<Metadata> headers = new ArrayList<>();

    private ManagedChannel serve(ToolRunTest.Fake fake) throws Exception {
        String name = InProcessServerBuilder.generateName();
        ServerInterceptor capture = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata md,
                                                                ServerCallHandler<Q, R> next) {
                synchronized (headers) {
                    headers.add(md);
                }
                return next.startCall(call, md);
            }
        };
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(ServerInterceptors.intercept(fake, capture)).build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        return channel;
    }

    private RecoveryClient client(ToolRunTest.Fake fake) throws Exception {
        return new RecoveryClient(serve(fake), Duration.ofMillis(500), "test", FallbackPolicy.DEFAULT);
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

    /** PROCEED, then VERIFY for the first failure (as recoveryd answers a reset of send_email). */
    private static ToolRunTest.Fake verifyScript() {
        ToolRunTest.Fake fake = new ToolRunTest.Fake();
        fake.script.add(DecideResponse.newBuilder().setAction(Action.ACTION_PROCEED).setTimeoutMs(1000)
                .setPermitId("1:7").build());
        fake.script.add(DecideResponse.newBuilder().setAction(Action.ACTION_VERIFY).setTimeoutMs(700)
                .setVerifyToolId("find_sent_email").setPermitId("1:7")
                .setReason("effect unknown (reset after sending): call find_sent_email")
                .setClassification(Classification.newBuilder()
                        .setLlmMessage("Do not call it again: first call find_sent_email.")).build());
        return fake;
    }

    /** send_email reset after sending on its first call, then "sent"; records each Attempt. */
    private static ToolFunction<String> resetThenSent(List<Attempt> calls) {
        return ToolFunction.withAttempt(a -> {
            calls.add(a);
            if (calls.size() == 1) {
                throw ToolFailure.code("read ECONNRESET", "ECONNRESET", ErrorKind.ERROR_KIND_UNSPECIFIED);
            }
            return "sent";
        });
    }

    @Test
    void verifierSayingItHappenedRecordsASuccess() throws Exception {
        ToolRunTest.Fake fake = verifyScript();
        RecoveryClient client = client(fake);
        List<Attempt> calls = new ArrayList<>();
        List<VerifyRequest> asked = new ArrayList<>();
        RunResult<String> res = client.runTool("send_email", Map.of("send_email", resetThenSent(calls)),
                RunOptions.turn("t1").withVerifiers(Map.of("find_sent_email", req -> {
                    asked.add(req);
                    return true;
                })));
        assertEquals(RunResult.Status.SUCCEEDED, res.status());
        assertTrue(res.verified());
        assertNull(res.value());
        assertEquals(1, calls.size());
        assertEquals("find_sent_email", res.verifyToolId());
        VerifyRequest req = asked.get(0);
        assertEquals("send_email", req.toolId());
        assertEquals("find_sent_email", req.verifyToolId());
        assertEquals(1, req.attempt());
        assertEquals(700, req.timeoutMs());
        assertEquals("t1", req.turnId());
        assertTrue(req.error() instanceof ToolFailure);
        // The success is reported, with the permit held, under a fresh outcome id.
        RecordOutcomeRequest rec = fake.outcomes.get(0);
        assertTrue(rec.getSuccess());
        assertEquals("send_email", rec.getToolId());
        assertEquals("1:7", rec.getPermitId());
        assertFalse(rec.getOutcomeId().equals(fake.decides.get(1).getOutcomeId()));
        assertTrue(res.outcomeRecorded());
    }

    @Test
    void verifierSayingItDidNotHappenCallsTheToolAgainAfterAdmission() throws Exception {
        ToolRunTest.Fake fake = verifyScript();
        fake.script.add(DecideResponse.newBuilder().setAction(Action.ACTION_PROCEED).setTimeoutMs(900).build());
        RecoveryClient client = client(fake);
        List<Attempt> calls = new ArrayList<>();
        RunResult<String> res = client.runTool("send_email", Map.of("send_email", resetThenSent(calls)),
                RunOptions.turn("t1").withVerifier(req -> false));
        assertEquals(RunResult.Status.SUCCEEDED, res.status());
        assertFalse(res.verified());
        assertEquals("sent", res.value());
        assertEquals(2, calls.size());
        assertEquals(new Attempt("send_email", 2, "", 900), calls.get(1));
        DecideRequest admission = fake.decides.get(2);
        assertFalse(admission.hasError());
        assertEquals("send_email", admission.getToolId());
    }

    @Test
    void withoutAVerifierOrWhenItFailsTheRunStopsVerificationRequired() throws Exception {
        for (RunOptions opts : List.of(RunOptions.turn("t1"),
                RunOptions.turn("t1").withVerifiers(Map.of("other_tool", req -> true)),
                RunOptions.turn("t1").withVerifier(req -> {
                    throw new IllegalStateException("mail API down");
                }),
                RunOptions.turn("t1").withVerifier(req -> {
                    Thread.sleep(5000); // past the verify tool's 700 ms
                    return true;
                }))) {
            ToolRunTest.Fake fake = verifyScript();
            RecoveryClient client = client(fake);
            List<Attempt> calls = new ArrayList<>();
            RunResult<String> res = client.runTool("send_email", Map.of("send_email", resetThenSent(calls)), opts);
            assertEquals(RunResult.Status.VERIFICATION_REQUIRED, res.status());
            assertEquals(1, calls.size());
            assertEquals("find_sent_email", res.verifyToolId());
            assertTrue(res.reason().startsWith("effect unknown"));
            assertTrue(res.classification().getLlmMessage().contains("find_sent_email"));
            assertTrue(fake.outcomes.isEmpty());
            stop();
        }
    }

    @Test
    void idempotencyKeyIsSentAndPassedToTheToolOnTheRetry() throws Exception {
        ToolRunTest.Fake fake = new ToolRunTest.Fake();
        fake.script.add(DecideResponse.newBuilder().setAction(Action.ACTION_PROCEED).setTimeoutMs(1000).build());
        fake.script.add(DecideResponse.newBuilder().setAction(Action.ACTION_RETRY).setDelayMs(5)
                .setTimeoutMs(1000).setIdempotencyKey("order-7731").build());
        RecoveryClient client = client(fake);
        List<Attempt> calls = new ArrayList<>();
        RunResult<String> res = client.runTool("charge_card", Map.of("charge_card", resetThenSent(calls)),
                RunOptions.turn("t1").withIdempotencyKey("order-7731"));
        assertEquals(RunResult.Status.SUCCEEDED, res.status());
        assertEquals(List.of(new Attempt("charge_card", 1, "order-7731", 1000),
                new Attempt("charge_card", 2, "order-7731", 1000)), calls);
        assertEquals("order-7731", fake.decides.get(1).getIdempotencyKey());
        assertEquals("order-7731", res.idempotencyKey());
    }

    @Test
    void tenantAndTokenReachTheServerOnEveryCall() throws Exception {
        ToolRunTest.Fake fake = new ToolRunTest.Fake();
        fake.script.add(DecideResponse.newBuilder().setAction(Action.ACTION_PROCEED).setTimeoutMs(1000).build());
        RecoveryClient client = new RecoveryClient(serve(fake), Duration.ofMillis(500), "test",
                FallbackPolicy.DEFAULT, "admin-token", "team-b");
        assertEquals("team-b", client.tenant());
        RunResult<String> res = client.runTool("search", Map.of("search", t -> "ok"), RunOptions.turn("t1"));
        assertEquals(RunResult.Status.SUCCEEDED, res.status());
        assertEquals(2, headers.size()); // Decide and RecordOutcome
        for (Metadata md : headers) {
            assertEquals("team-b", md.get(Metadata.Key.of("x-recoveryd-tenant", Metadata.ASCII_STRING_MARSHALLER)));
            assertEquals("Bearer admin-token",
                    md.get(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)));
        }
    }

    @Test
    void badTenantIsRefusedLocally() {
        for (String[] c : new String[][] {{"a b", "only letters"}, {"x".repeat(65), "longer than 64"},
                {"é", "only letters"}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new RecoveryClient("127.0.0.1:1", Duration.ofMillis(200), "", FallbackPolicy.DEFAULT,
                            "", c[0]));
            assertTrue(e.getMessage().startsWith("tenant: ") && e.getMessage().contains(c[1]), e.getMessage());
        }
        assertEquals("team-a.b_c", RecoveryClient.checkTenant("team-a.b_c"));
        assertEquals("", RecoveryClient.checkTenant(null));
    }
}
