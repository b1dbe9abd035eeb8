package testkit

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// H2CProtocols are HTTP/1.1 and HTTP/2 without TLS (h2c), what ahp-server serves in cleartext.
func H2CProtocols() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}

// H2CClient is an HTTP client that speaks HTTP/2 with prior knowledge to http:// URLs, which
// gRPC and bidirectional streams need.
func H2CClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

// ServeLoopback serves s on a loopback TCP port until the test ends and returns its http:// URL.
// A nil s.Protocols becomes H2CProtocols. Use it where the code under test dials a URL itself;
// where the test makes the client, memhttp needs no port.
func ServeLoopback(t testing.TB, s *http.Server) string {
	t.Helper()
	if s.Protocols == nil {
		s.Protocols = H2CProtocols()
	}
	hs := httptest.NewUnstartedServer(s.Handler)
	hs.Config = s
	hs.Start()
	t.Cleanup(hs.Close)
	return hs.URL
}

// StartLoopback serves h with ServeLoopback and default server settings.
func StartLoopback(t testing.TB, h http.Handler) string {
	t.Helper()
	return ServeLoopback(t, &http.Server{Handler: h})
}

// DownURL returns an http:// URL of a loopback port held for the whole test whose every
// connection is closed at once, unread: an upstream that is down. (A port merely closed again
// could be taken by a parallel test's server meanwhile, which would then answer.)
func DownURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, not an orderly close
			}
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}
