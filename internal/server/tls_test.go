package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// selfSigned writes a certificate and key for 127.0.0.1 and returns their paths and a pool that
// trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ahp-server test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestServeTLSAndGracefulShutdown(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t)
	addr, cancel, done := serveOn(t, server.Config{TLSCertFile: certFile, TLSKeyFile: keyFile, Logger: testkit.Discard()})

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	url := "https://" + addr
	for _, opts := range [][]connect.ClientOption{nil, {connect.WithGRPC()}} {
		h := ahpv1connect.NewHarnessServiceClient(client, url, opts...)
		resp, err := h.GetCapabilities(context.Background(), connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Msg.GetHarnessProtocolVersion() != "2.4" {
			t.Fatalf("capabilities = %v", resp.Msg)
		}
	}
	cancel()
	if err := testkit.Receive(t, done, "Serve did not return after cancel"); err != nil {
		t.Fatalf("Serve returned %v after shutdown", err)
	}
}

// clientCert makes a self-signed client certificate and returns it with its PEM file path.
func clientCert(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "agent"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "client-ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, path
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t)
	cert, caFile := clientCert(t)
	addr, cancel, _ := serveOn(t, server.Config{TLSCertFile: certFile, TLSKeyFile: keyFile, TLSClientCAFile: caFile, Logger: testkit.Discard()})
	defer cancel()
	url := "https://" + addr
	call := func(certs []tls.Certificate) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}, ForceAttemptHTTP2: true}}
		_, err := ahpv1connect.NewHarnessServiceClient(c, url).GetCapabilities(context.Background(), connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}))
		return err
	}
	if err := call(nil); err == nil {
		t.Fatal("a client without a certificate was accepted")
	}
	if err := call([]tls.Certificate{cert}); err != nil {
		t.Fatalf("a client with a trusted certificate was refused: %v", err)
	}
}
