package io.recoveryd.client;

/** One tool call. It receives the hard timeout the service returned and should respect it. */
@FunctionalInterface
public interface ToolFunction<T> {
    T call(long timeoutMs) throws Exception;

    /**
     * The call the runner makes: by default {@link #call(long)} with the
     * attempt's timeout. A tool that needs the attempt (its idempotency key)
     * is made with {@link #withAttempt}.
     */
    default T call(Attempt attempt) throws Exception {
        return call(attempt.timeoutMs());
    }

    /** A tool function that receives the whole {@link Attempt}. */
    @FunctionalInterface
    interface WithAttempt<T> {
        T call(Attempt attempt) throws Exception;
    }

    /** A ToolFunction made from one that takes the {@link Attempt}. */
    static <T> ToolFunction<T> withAttempt(WithAttempt<T> fn) {
        return new ToolFunction<>() {
            @Override
            public T call(long timeoutMs) throws Exception {
                return fn.call(new Attempt("", 1, "", timeoutMs));
            }

            @Override
            public T call(Attempt attempt) throws Exception {
                return fn.call(attempt);
            }
        };
    }
}
