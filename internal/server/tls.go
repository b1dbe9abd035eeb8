package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// tlsFiles serves a certificate and an optional client CA bundle from files, re-reading them when
// they change (certificate rotation without a restart). A change is noticed on the next handshake,
// at most once per second; a broken new file keeps the old certificate and is logged.
type tlsFiles struct {
	certFile, keyFile, caFile string
	log                       *slog.Logger

	mu        sync.Mutex
	checked   time.Time
	certStamp string
	cert      *tls.Certificate
	caStamp   string
	pool      *x509.CertPool
}

func newTLSFiles(certFile, keyFile, caFile string, log *slog.Logger) (*tlsFiles, error) {
	t := &tlsFiles{certFile: certFile, keyFile: keyFile, caFile: caFile, log: log}
	if err := t.load(true); err != nil {
		return nil, err
	}
	return t, nil
}

// stamp identifies a file version by size and modification time.
func stamp(paths ...string) (string, error) {
	out := ""
	for _, p := range paths {
		if p == "" {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		out += fmt.Sprintf("%s:%d:%d;", p, st.Size(), st.ModTime().UnixNano())
	}
	return out, nil
}

// load re-reads changed files; the first load must succeed, later failures keep what works.
func (t *tlsFiles) load(first bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !first && time.Since(t.checked) < time.Second {
		return nil
	}
	t.checked = time.Now()
	if cs, err := stamp(t.certFile, t.keyFile); err == nil && cs != t.certStamp {
		cert, err := tls.LoadX509KeyPair(t.certFile, t.keyFile)
		switch {
		case err == nil:
			t.cert, t.certStamp = &cert, cs
			if !first {
				t.log.Info("TLS certificate reloaded")
			}
		case first:
			return fmt.Errorf("load TLS key pair: %w", err)
		default:
			t.log.Error("TLS certificate reload failed; the previous certificate stays in use", "error", err)
		}
	} else if err != nil && first {
		return fmt.Errorf("load TLS key pair: %w", err)
	}
	if t.caFile == "" {
		return nil
	}
	if cs, err := stamp(t.caFile); err == nil && cs != t.caStamp {
		pem, err := os.ReadFile(t.caFile)
		pool := x509.NewCertPool()
		if err == nil && !pool.AppendCertsFromPEM(pem) {
			err = errors.New("no certificates found")
		}
		switch {
		case err == nil:
			t.pool, t.caStamp = pool, cs
			if !first {
				t.log.Info("TLS client CA reloaded")
			}
		case first:
			return fmt.Errorf("load TLS client CA %s: %w", t.caFile, err)
		default:
			t.log.Error("TLS client CA reload failed; the previous CAs stay in use", "error", err)
		}
	} else if err != nil && first {
		return fmt.Errorf("load TLS client CA: %w", err)
	}
	return nil
}

// config returns a tls.Config that picks up changed files at handshake time.
func (t *tlsFiles) config() *tls.Config {
	base := &tls.Config{MinVersion: tls.VersionTLS12}
	base.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		_ = t.load(false)
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.cert, nil
	}
	if t.caFile != "" {
		base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			_ = t.load(false)
			t.mu.Lock()
			pool := t.pool
			t.mu.Unlock()
			c := base.Clone()
			c.GetConfigForClient = nil
			c.ClientAuth = tls.RequireAndVerifyClientCert
			c.ClientCAs = pool
			return c, nil
		}
	}
	return base
}
