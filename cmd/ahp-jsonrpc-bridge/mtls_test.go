package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// writeCert writes a self-signed certificate (a CA of its own) and its key as PEM files.
func writeCert(t *testing.T, dir, name string, usage x509.ExtKeyUsage, ip net.IP) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true, IsCA: true,
	}
	if ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestUpstreamMutualTLS: the bridge reaches an ahp-server in mTLS mode with a private CA
// (-upstream-ca) and a client certificate (-upstream-cert, -upstream-key); without the
// certificate the server refuses it and the failure policy answers.
func TestUpstreamMutualTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serverCert, serverKey := writeCert(t, dir, "server", x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	clientCert, clientKey := writeCert(t, dir, "client", x509.ExtKeyUsageClientAuth, nil)
	srv, err := server.New(server.Config{TLSCertFile: serverCert, TLSKeyFile: serverKey, TLSClientCAFile: clientCert, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _ := testkit.ServeTCP(t, srv.Serve)
	once := func(extra ...string) (string, string) {
		args := append([]string{"-once", "-upstream", "https://" + addr, "-failure-policy", "fail-closed", "-upstream-ca", serverCert}, extra...)
		c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
			return run(ctx, args, strings.NewReader(hooksIntercept("e1", "rm -rf /")+"\n"), stdout, stderr, noEnv)
		})
		if code := c.Wait(t); code != 0 {
			t.Fatalf("exit %d: %s", code, c.Stderr.String())
		}
		return c.Stdout.String(), c.Stderr.String()
	}
	out, logs := once("-upstream-cert", clientCert, "-upstream-key", clientKey)
	if !strings.Contains(out, "Refusing to recursively delete") || strings.Contains(out, `"synthetic":true`) {
		t.Fatalf("with the client certificate: %s\n%s", out, logs)
	}
	out, _ = once()
	if !strings.Contains(out, `"synthetic":true`) || !strings.Contains(out, `"type":"deny"`) {
		t.Fatalf("without the client certificate: %s, want the fail-closed answer", out)
	}
	r := runBridge([]string{"-once", "-upstream", "http://" + addr, "-failure-policy", "fail-closed", "-upstream-cert", clientCert}, nil, "")
	r.Expect(t, "-upstream-cert without -upstream-key on http://", 2, "go together")
}
