package io.recoveryd.client;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.recoveryd.v1.RecoveryServiceGrpc;
import io.recoveryd.v1.RecoveryServiceGrpc.RecoveryServiceBlockingStub;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A connection to recoveryd: the plain generated stub with a per-call deadline
 * ({@link #stub()}) and {@link #runTool}, a retry loop that follows the
 * service's decisions and falls back to a local policy when the service cannot
 * be reached. Thread-safe.
 */
public final class RecoveryClient implements AutoCloseable {
    public static final Duration DEFAULT_RPC_TIMEOUT = Duration.ofMillis(200);
    /**
     * How long the first service call of a run may wait for the channel's
     * first connection: a cold JVM needs longer than the RPC deadline to set up
     * its transport. A refused connection ends the wait at once.
     */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** The metadata key naming the tenant the admin token acts for. */
    public static final String TENANT_HEADER = "x-recoveryd-tenant";
    /** The longest tenant id the server accepts, in bytes. */
    public static final int TENANT_ID_MAX = 64;
    private static final Pattern TENANT_ID = Pattern.compile("[A-Za-z0-9_.-]+");

    private final ManagedChannel channel;
    private final ManagedChannel ownedChannel;
    private volatile boolean connectedOnce;
    private final RecoveryServiceBlockingStub rawStub;
    final Duration rpcTimeout;
    final String executorId;
    final FallbackPolicy fallback;
    private final String tenant;

    /** Connects to {@code target} ("host:port") without TLS, with the defaults. */
    public RecoveryClient(String target) {
        this(target, DEFAULT_RPC_TIMEOUT, "", FallbackPolicy.DEFAULT);
    }

    public RecoveryClient(String target, Duration rpcTimeout, String executorId, FallbackPolicy fallback) {
        this(ManagedChannelBuilder.forTarget(target).usePlaintext().build(), true, rpcTimeout, executorId, fallback);
    }

    /**
     * Connects without TLS and sends {@code token} on every call as
     * "authorization: Bearer &lt;token&gt;" (server.auth, or a tenant's or the
     * admin token of server.tenants; "" for none) and {@code tenant} as
     * x-recoveryd-tenant (the tenant the admin token acts for; "" or null for
     * none).
     *
     * @throws IllegalArgumentException when tenant is not a tenant id
     *     ({@link #checkTenant})
     */
    public RecoveryClient(String target, Duration rpcTimeout, String executorId, FallbackPolicy fallback,
                          String token, String tenant) {
        this(checkedChannel(target, tenant), true, rpcTimeout, executorId, fallback, token, tenant);
    }

    /** Uses a channel the caller owns (and shuts down). */
    public RecoveryClient(ManagedChannel channel, Duration rpcTimeout, String executorId, FallbackPolicy fallback) {
        this(channel, false, rpcTimeout, executorId, fallback, "", "");
    }

    /** Uses a channel the caller owns, with a token and a tenant as above. */
    public RecoveryClient(ManagedChannel channel, Duration rpcTimeout, String executorId, FallbackPolicy fallback,
                          String token, String tenant) {
        this(channel, false, rpcTimeout, executorId, fallback, token, checkTenant(tenant));
    }

    private RecoveryClient(ManagedChannel channel, boolean owned, Duration rpcTimeout, String executorId,
                           FallbackPolicy fallback) {
        this(channel, owned, rpcTimeout, executorId, fallback, "", "");
    }

    private RecoveryClient(ManagedChannel channel, boolean owned, Duration rpcTimeout, String executorId,
                           FallbackPolicy fallback, String token, String tenant) {
        this.channel = channel;
        this.ownedChannel = owned ? channel : null;
        this.tenant = tenant == null ? "" : tenant;
        Metadata headers = new Metadata();
        if (token != null && !token.isEmpty()) {
            headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        }
        if (!this.tenant.isEmpty()) {
            headers.put(Metadata.Key.of(TENANT_HEADER, Metadata.ASCII_STRING_MARSHALLER), this.tenant);
        }
        this.rawStub = RecoveryServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
        this.rpcTimeout = rpcTimeout;
        this.executorId = executorId == null ? "" : executorId;
        this.fallback = fallback;
    }

    /**
     * The tenant id as the server accepts it: letters, digits, '_', '.' and
     * '-', at most {@value #TENANT_ID_MAX} bytes; null or "" is no tenant.
     *
     * @return the tenant, "" for none
     * @throws IllegalArgumentException naming what is wrong
     */
    public static String checkTenant(String tenant) {
        if (tenant == null || tenant.isEmpty()) {
            return "";
        }
        if (tenant.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > TENANT_ID_MAX) {
            throw new IllegalArgumentException("tenant: longer than " + TENANT_ID_MAX + " bytes");
        }
        if (!TENANT_ID.matcher(tenant).matches()) {
            throw new IllegalArgumentException("tenant: \"" + tenant + "\": only letters, digits, '_', '.' and '-'");
        }
        return tenant;
    }

    /** The tenant sent as x-recoveryd-tenant, "" for none. */
    public String tenant() {
        return tenant;
    }

    /** Checks the tenant before a channel is made, so a bad one leaks no channel. */
    private static ManagedChannel checkedChannel(String target, String tenant) {
        checkTenant(tenant);
        return ManagedChannelBuilder.forTarget(target).usePlaintext().build();
    }

    /** The generated blocking stub with this client's deadline applied; take a fresh one per call. */
    public RecoveryServiceBlockingStub stub() {
        return rawStub.withDeadlineAfter(rpcTimeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Waits (at most {@link #CONNECT_TIMEOUT}) until the channel is connected
     * or has failed to connect; later calls return at once. The runner calls
     * it before its first service call.
     */
    public void awaitConnection() {
        if (connectedOnce) {
            return;
        }
        long deadline = System.nanoTime() + CONNECT_TIMEOUT.toNanos();
        ConnectivityState state = channel.getState(true);
        try {
            while (state != ConnectivityState.READY && state != ConnectivityState.TRANSIENT_FAILURE
                    && state != ConnectivityState.SHUTDOWN) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                CountDownLatch changed = new CountDownLatch(1);
                channel.notifyWhenStateChanged(state, changed::countDown);
                changed.await(left, TimeUnit.NANOSECONDS);
                state = channel.getState(false);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connectedOnce = state == ConnectivityState.READY;
    }

    /**
     * Runs one logical tool call under the service's decisions.
     *
     * @param tools the tool and every alternative the service may name
     */
    public <T> RunResult<T> runTool(String toolId, Map<String, ToolFunction<T>> tools, RunOptions options) {
        return new ToolRun<>(this, toolId, tools, options).run();
    }

    @Override
    public void close() {
        if (ownedChannel == null) {
            return;
        }
        ownedChannel.shutdown();
        try {
            if (!ownedChannel.awaitTermination(1, TimeUnit.SECONDS)) {
                ownedChannel.shutdownNow();
            }
        } catch (InterruptedException e) {
            ownedChannel.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
