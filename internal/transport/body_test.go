package transport_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/transport"
)

// ReadBody answers what it refuses itself, with the status and text the package doc lists, and
// hands over a body it accepts.
func TestReadBody(t *testing.T) {
	t.Parallel()
	rules := transport.BodyRules{
		Limit: 8, Usage: "use POST", TooLarge: "too large",
		AcceptType: func(ct string) bool { return ct == "application/json" },
		Logger:     slog.New(slog.DiscardHandler),
	}
	cases := []struct {
		name, method, contentType, encoding, body string
		unknownLength                             bool
		length                                    int64 // a declared Content-Length other than the body's
		status                                    int
		text                                      string
	}{
		{name: "accepted", method: "POST", contentType: "application/json", body: "{}", status: 200},
		{name: "GET", method: "GET", contentType: "application/json", status: 405, text: "method not allowed: use POST"},
		{name: "compressed", method: "POST", contentType: "application/json", encoding: "gzip", body: "{}", status: 415, text: "unsupported Content-Encoding: send the body uncompressed"},
		{name: "media type", method: "POST", contentType: "text/plain", body: "{}", status: 415, text: "unsupported media type: want Content-Type: application/json"},
		{name: "declared too large", method: "POST", contentType: "application/json", body: "[1,2,3,4,5]", status: 413, text: "request body is over the 8-byte limit"},
		{name: "read too large", method: "POST", contentType: "application/json", body: "[1,2,3,4,5]", unknownLength: true, status: 413, text: "request body is over the 8-byte limit"},
		{name: "accepted, unknown length", method: "POST", contentType: "application/json", body: "[1,2]", unknownLength: true, status: 200},
		{name: "shorter than declared", method: "POST", contentType: "application/json", body: "{}", length: 5, status: 400, text: "request body could not be read"},
		{name: "longer than declared", method: "POST", contentType: "application/json", body: "[1,2,3]", length: 3, status: 400, text: "request body could not be read"},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, "/", strings.NewReader(c.body))
		req.Header.Set("Content-Type", c.contentType)
		if c.encoding != "" {
			req.Header.Set("Content-Encoding", c.encoding)
		}
		if c.unknownLength {
			req.ContentLength = -1
		}
		if c.length != 0 {
			req.ContentLength = c.length
		}
		rec := httptest.NewRecorder()
		body, ok := transport.ReadBody(rec, req, rules)
		if c.status == 200 {
			if !ok || string(body) != c.body {
				t.Errorf("%s: ReadBody = %q, %v; want %q, true", c.name, body, ok, c.body)
			}
			continue
		}
		if ok {
			t.Errorf("%s: accepted %q", c.name, body)
			continue
		}
		if rec.Code != c.status {
			t.Errorf("%s: status %d, want %d", c.name, rec.Code, c.status)
		}
		if got := strings.TrimSpace(rec.Body.String()); got != c.text {
			t.Errorf("%s: text %q, want %q", c.name, got, c.text)
		}
	}
	rec := httptest.NewRecorder()
	transport.ReadBody(rec, httptest.NewRequest("PUT", "/", nil), rules)
	if got := rec.Header().Get("Allow"); got != "POST" {
		t.Errorf("405 Allow header %q, want POST", got)
	}
}

// BenchmarkReadBody reads a 600-byte body with a Content-Length, as an Agent Hooks POST has.
func BenchmarkReadBody(b *testing.B) {
	rules := transport.BodyRules{
		Limit: 1 << 20, Usage: "use POST", TooLarge: "too large",
		AcceptType: func(ct string) bool { return ct == "application/json" },
		Logger:     slog.New(slog.DiscardHandler),
	}
	payload := `{"x":"` + strings.Repeat("a", 592) + `"}`
	rd := strings.NewReader(payload)
	req := httptest.NewRequest("POST", "/", rd)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(payload)
		req.Body = io.NopCloser(rd)
		if body, ok := transport.ReadBody(rec, req, rules); !ok || len(body) != len(payload) {
			b.Fatal("not read")
		}
	}
}
