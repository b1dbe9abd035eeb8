package memhttp_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
)

func TestServesHTTP1AndH2C(t *testing.T) {
	t.Parallel()
	s := memhttp.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	for _, c := range []struct {
		name   string
		client *http.Client
		want   string
	}{{"h2c", s.Client(), "HTTP/2.0"}, {"http1", s.HTTP1Client(), "HTTP/1.1"}} {
		resp, err := c.client.Get(s.URL() + "/")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading the body: %v", c.name, err)
		}
		if string(body) != c.want {
			t.Errorf("%s: served %s, want %s", c.name, body, c.want)
		}
	}
}

func TestCloseEndsServingAndDialing(t *testing.T) {
	t.Parallel()
	s := memhttp.New(t, http.NotFoundHandler())
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Listener().Dial(context.Background(), "", ""); err == nil {
		t.Error("Dial after Close succeeded")
	}
	if _, err := s.Client().Get(s.URL()); err == nil {
		t.Error("a request after Close succeeded")
	}
}
