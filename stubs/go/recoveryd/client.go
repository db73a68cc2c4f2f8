// Package recoveryd runs tool calls under the decisions of a recoveryd
// service: admission check, call with the returned timeout, Decide on every
// failure, sleep and retry, switch to alternatives, stop with a typed result,
// and report the outcome. When the service cannot be reached it falls back to
// a small local policy instead of failing the executor.
//
// The plain generated client is in package recoveryv1 for callers who want
// their own loop; Client.RPC exposes it on the same connection.
package recoveryd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/recoveryd/recoveryd/stubs/go/recoveryv1"
)

// FallbackPolicy is what Run does on its own when the service is unreachable
// or too slow: every failure counts as retryable, nothing is classified, no
// breaker is kept.
type FallbackPolicy struct {
	MaxAttempts int             // attempts in total for a tool, the first included (default 3)
	Delays      []time.Duration // delay before attempt 2, 3, ...; the last repeats (default 100 ms, 200 ms)
	Timeout     time.Duration   // per-call timeout when the service gave none (default 30 s)
}

// Options tune a Client. The zero value is usable.
type Options struct {
	// RPCTimeout bounds every call to the service (default 200 ms). A call
	// that takes longer puts Run into the local fallback.
	RPCTimeout time.Duration
	// ExecutorID is sent with every Decide and RecordOutcome.
	ExecutorID string
	Fallback   FallbackPolicy
	// Tenant is sent on every call as "x-recoveryd-tenant: <tenant>": the
	// tenant the admin token acts for (server.tenants). Letters, digits,
	// '_', '.', '-', at most 64 bytes (CheckTenant); "" sends none.
	Tenant string

	// Read by Dial only (New takes a connection the caller made).

	// TLS secures the connection (server.tls); nil is plaintext. LoadTLS
	// builds one from PEM files.
	TLS *tls.Config
	// Token is sent on every call as "authorization: Bearer <token>"
	// (server.auth, or a tenant's or the admin token of server.tenants). It
	// is sent over plaintext too: recoveryd accepts a token there on
	// loopback.
	Token string
	// DialOptions go to grpc.NewClient after the ones above, e.g.
	// grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`)
	// with a "dns:///" target naming a headless Service.
	DialOptions []grpc.DialOption
}

// DefaultRPCTimeout is the deadline of each service call when Options leave it 0.
const DefaultRPCTimeout = 200 * time.Millisecond

func (o Options) withDefaults() Options {
	if o.RPCTimeout <= 0 {
		o.RPCTimeout = DefaultRPCTimeout
	}
	if o.Fallback.MaxAttempts <= 0 {
		o.Fallback.MaxAttempts = 3
	}
	if len(o.Fallback.Delays) == 0 {
		o.Fallback.Delays = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
	}
	if o.Fallback.Timeout <= 0 {
		o.Fallback.Timeout = 30 * time.Second
	}
	return o
}

// Client holds a connection to recoveryd. It is safe for concurrent use.
type Client struct {
	// RPC is the generated client, for callers who run their own loop.
	RPC  recoveryv1.RecoveryServiceClient
	conn *grpc.ClientConn // nil when the caller supplied the connection
	opts Options
	// tenantErr is why opts.Tenant is not a tenant id (New), or nil.
	tenantErr error
}

// Dial connects to target ("host:port" or a gRPC target URI such as
// "dns:///recoveryd.ns.svc:50051") with opts.TLS, opts.Token and
// opts.DialOptions. The connection is made lazily; Dial does not block on it.
func Dial(target string, opts Options) (*Client, error) {
	if err := CheckTenant(opts.Tenant); err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if opts.TLS != nil {
		creds = credentials.NewTLS(opts.TLS)
	}
	dial := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if opts.Token != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(bearer{token: opts.Token}))
	}
	conn, err := grpc.NewClient(target, append(dial, opts.DialOptions...)...)
	if err != nil {
		return nil, err
	}
	c := New(conn, opts)
	c.conn = conn
	return c, nil
}

// bearer sends the token as call metadata.
type bearer struct{ token string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false so a plaintext loopback connection may
// carry the token as well.
func (b bearer) RequireTransportSecurity() bool { return false }

// LoadTLS makes the TLS configuration for Dial from PEM files: caFile holds
// the roots that sign the server certificate ("" = the system's roots);
// certFile and keyFile the client certificate for mutual TLS (both or
// neither). serverName overrides the name checked in the server certificate
// ("" = the host of the target).
func LoadTLS(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("recoveryd TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("recoveryd TLS CA: no PEM certificate in %s", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("recoveryd TLS: give both the client certificate and its key, or neither")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("recoveryd TLS client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// New wraps a connection the caller owns (and closes). With an invalid
// opts.Tenant (check it first with CheckTenant) every call fails with
// codes.InvalidArgument and Run ends StatusGiveUp, naming the problem.
func New(conn grpc.ClientConnInterface, opts Options) *Client {
	c := &Client{opts: opts.withDefaults(), tenantErr: CheckTenant(opts.Tenant)}
	if c.tenantErr != nil {
		conn = refused{c.tenantErr}
	} else if opts.Tenant != "" {
		conn = tenantConn{conn, opts.Tenant}
	}
	c.RPC = recoveryv1.NewRecoveryServiceClient(conn)
	return c
}

// TenantHeader is the metadata key naming the tenant the admin token acts for.
const TenantHeader = "x-recoveryd-tenant"

// TenantIDMax is the longest tenant id the server accepts.
const TenantIDMax = 64

// CheckTenant reports whether the server would accept tenant as a tenant
// id: letters, digits, '_', '.' and '-', at most TenantIDMax bytes ("" is
// no tenant).
func CheckTenant(tenant string) error {
	if len(tenant) > TenantIDMax {
		return fmt.Errorf("tenant: longer than %d bytes", TenantIDMax)
	}
	for i := 0; i < len(tenant); i++ {
		ch := tenant[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' ||
			ch == '_' || ch == '.' || ch == '-') {
			return fmt.Errorf("tenant: %q: only letters, digits, '_', '.' and '-'", tenant)
		}
	}
	return nil
}

// tenantConn adds the tenant header to every call on conn.
type tenantConn struct {
	conn   grpc.ClientConnInterface
	tenant string
}

func (t tenantConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return t.conn.Invoke(metadata.AppendToOutgoingContext(ctx, TenantHeader, t.tenant), method, args, reply, opts...)
}

func (t tenantConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string,
	opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return t.conn.NewStream(metadata.AppendToOutgoingContext(ctx, TenantHeader, t.tenant), desc, method, opts...)
}

// refused fails every call: the client was made with an invalid tenant.
type refused struct{ err error }

func (r refused) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	return status.Error(codes.InvalidArgument, r.err.Error())
}

func (r refused) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.InvalidArgument, r.err.Error())
}

// Close closes the connection when Dial made it.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}
