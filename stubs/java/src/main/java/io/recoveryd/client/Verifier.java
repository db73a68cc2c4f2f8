package io.recoveryd.client;

/**
 * Answers VERIFY: did the failed call of {@link VerifyRequest#toolId()} have
 * its effect? {@code true}: it happened, the run succeeds without calling the
 * tool again; {@code false}: it did not, the tool may be called again. Throw
 * when it cannot tell: the run ends {@link RunResult.Status#VERIFICATION_REQUIRED}.
 * It runs under the verify tool's timeout ({@link VerifyRequest#timeoutMs()}).
 */
@FunctionalInterface
public interface Verifier {
    boolean verify(VerifyRequest request) throws Exception;
}
