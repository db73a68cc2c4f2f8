package io.recoveryd.client;

import io.recoveryd.v1.ErrorKind;
import io.recoveryd.v1.ErrorSource;
import io.recoveryd.v1.ToolError;

/**
 * Throw from a tool to hand the service structured signals beside the message.
 * Any other exception is sent as its message and class name.
 */
public class ToolFailure extends Exception {
    private final ToolError error;

    public ToolFailure(ToolError error) {
        super(error.getMessage());
        this.error = error;
    }

    public ToolFailure(String message, ErrorKind kind) {
        this(ToolError.newBuilder().setMessage(message).setKind(kind).build());
    }

    public static ToolFailure http(String message, int httpStatus) {
        return new ToolFailure(ToolError.newBuilder().setMessage(message).setHttpStatus(httpStatus).build());
    }

    public static ToolFailure code(String message, String code, ErrorKind kind) {
        return new ToolFailure(ToolError.newBuilder().setMessage(message).setCode(code).setKind(kind).build());
    }

    public ToolFailure withSource(ErrorSource source) {
        return new ToolFailure(error.toBuilder().setSource(source).build());
    }

    public ToolError toolError() {
        return error;
    }
}
