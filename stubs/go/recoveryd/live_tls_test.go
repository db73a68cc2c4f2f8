package recoveryd

// Dial with TLS and a token against a live recoveryd (the binary named by
// $RECOVERYD; tests/stubs/run_all.sh sets it) configured with mutual TLS and
// server.auth. Certificates are made here with crypto/x509.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/recoveryd/recoveryd/stubs/go/recoveryv1"
)

type pemPair struct{ cert, key string }

func writeCert(t *testing.T, dir, name string, tmpl *x509.Certificate, parent *x509.Certificate,
	parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, pemPair) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, _ := x509.MarshalECPrivateKey(key)
	p := pemPair{filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")}
	os.WriteFile(p.cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(p.key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key, p
}

func template(cn string, serial int64, ca bool) *x509.Certificate {
	t := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if ca {
		t.IsCA, t.BasicConstraintsValid = true, true
		t.KeyUsage |= x509.KeyUsageCertSign
	}
	return t
}

func startSecureRecoveryd(t *testing.T) (addr, dir string, ca, client, otherCA pemPair) {
	t.Helper()
	bin := os.Getenv("RECOVERYD")
	if bin == "" {
		t.Fatal("RECOVERYD must name a recoveryd binary (tests/stubs/run_all.sh builds one)")
	}
	dir = t.TempDir()
	caCert, caKey, ca := writeCert(t, dir, "ca", template("test ca", 1, true), nil, nil)
	srv := template("localhost", 2, false)
	srv.DNSNames, srv.IPAddresses = []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}
	_, _, server := writeCert(t, dir, "server", srv, caCert, caKey)
	_, _, client = writeCert(t, dir, "client", template("client", 3, false), caCert, caKey)
	_, _, otherCA = writeCert(t, dir, "other", template("other ca", 4, true), nil, nil)

	rules, _ := os.ReadFile(filepath.Join("..", "..", "..", "config", "rules.yaml"))
	os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o600)
	os.Mkdir(filepath.Join(dir, "tools.d"), 0o700)
	os.WriteFile(filepath.Join(dir, "token"), []byte("go-secret\n"), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	cfg := fmt.Sprintf(`server:
  listen: "%s"
  tls: {cert_file: %s, key_file: %s, client_ca_file: %s}
  auth: {token_file: %s}
metrics:
  listen: "127.0.0.1:0"
tools:
  directory: tools.d
classification:
  rules_file: rules.yaml
`, addr, server.cert, server.key, ca.cert, filepath.Join(dir, "token"))
	runRecoveryd(t, bin, dir, addr, cfg)
	return addr, dir, ca, client, otherCA
}

func TestDialTLSAndTokenAgainstLiveServer(t *testing.T) {
	addr, _, ca, client, otherCA := startSecureRecoveryd(t)
	port := addr[strings.LastIndex(addr, ":"):]
	classify := func(opts Options) error {
		opts.RPCTimeout = 3 * time.Second
		c, err := Dial("localhost"+port, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		resp, err := c.RPC.Classify(ctx, &recoveryv1.ClassifyRequest{ToolId: "go_tls_tool",
			Error: &recoveryv1.ToolError{Message: "read: connection reset by peer", Code: "ECONNRESET"}})
		if err == nil && resp.GetClassification().GetRetryability() != recoveryv1.Retryability_RETRYABILITY_TRANSIENT {
			t.Fatalf("unexpected classification %v", resp)
		}
		return err
	}
	good, err := LoadTLS(ca.cert, client.cert, client.key, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := classify(Options{TLS: good, Token: "go-secret"}); err != nil {
		t.Fatalf("mutual TLS with the token: %v", err)
	}
	if code := status.Code(classify(Options{TLS: good, Token: "wrong"})); code != codes.Unauthenticated {
		t.Fatalf("wrong token: %v, want Unauthenticated", code)
	}
	if code := status.Code(classify(Options{TLS: good})); code != codes.Unauthenticated {
		t.Fatalf("no token: %v, want Unauthenticated", code)
	}
	noCert, _ := LoadTLS(ca.cert, "", "", "")
	if code := status.Code(classify(Options{TLS: noCert, Token: "go-secret"})); code != codes.Unavailable {
		t.Fatalf("no client certificate: %v, want Unavailable", code)
	}
	other, _ := LoadTLS(otherCA.cert, client.cert, client.key, "")
	if code := status.Code(classify(Options{TLS: other, Token: "go-secret"})); code != codes.Unavailable {
		t.Fatalf("another CA: %v, want Unavailable", code)
	}
	if code := status.Code(classify(Options{Token: "go-secret"})); code != codes.Unavailable {
		t.Fatalf("plaintext: %v, want Unavailable", code)
	}

	// Run over the secured connection: real decisions, not the fallback.
	c, _ := Dial("localhost"+port, Options{TLS: good, Token: "go-secret", RPCTimeout: 3 * time.Second})
	defer c.Close()
	res := c.Run(context.Background(), Call{ToolID: "go_tls_tool", TurnID: "go-tls-turn",
		Tools: map[string]ToolFunc{"go_tls_tool": func(ctx context.Context) (any, error) { return "ok", nil }}})
	if res.Status != StatusSucceeded || res.Fallback || !res.OutcomeRecorded {
		t.Fatalf("run over TLS: %+v", res)
	}
}

func TestLoadTLSErrorsNameTheFile(t *testing.T) {
	if _, err := LoadTLS("/nonexistent/ca.crt", "", "", ""); err == nil || !strings.Contains(err.Error(), "/nonexistent/ca.crt") {
		t.Fatalf("missing CA: %v", err)
	}
	if _, err := LoadTLS("", "client.crt", "", ""); err == nil || !strings.Contains(err.Error(), "both") {
		t.Fatalf("certificate without key: %v", err)
	}
}

func TestVersionMatchesTheProjectVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(b)); Version != want {
		t.Fatalf("recoveryd.Version = %q, VERSION says %q", Version, want)
	}
}

// runRecoveryd writes cfg as dir/recovery.yaml, starts bin on it (logging
// to dir/recoveryd.log), stops it when the test ends, and returns once addr
// accepts connections.
func runRecoveryd(t *testing.T, bin, dir, addr, cfg string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "recovery.yaml"), []byte(cfg), 0o600)
	log, _ := os.Create(filepath.Join(dir, "recoveryd.log"))
	cmd := exec.Command(bin, "--config", filepath.Join(dir, "recovery.yaml"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		log.Close()
	})
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if i > 150 {
			b, _ := os.ReadFile(filepath.Join(dir, "recoveryd.log"))
			t.Fatalf("recoveryd did not start: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
