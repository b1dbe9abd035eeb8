package stdio_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
	"github.com/ahp-gateway/ahp/internal/transport/stdio"
	tt "github.com/ahp-gateway/ahp/internal/transport/transporttest"
)

func within(t *testing.T, what string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	if err := testkit.Receive(t, done, what+" did not return"); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestServeRunsUntilEOFWithStdioTransport(t *testing.T) {
	t.Parallel()
	in := tt.Request(`"a"`, "echo", "") + "\n" + tt.Notification("echo", "") + "\n" + tt.Request(`"b"`, "echo", "") + "\n"
	var out bytes.Buffer
	within(t, "Serve", func() error {
		return stdio.Serve(context.Background(), strings.NewReader(in), &out, &tt.Handler{}, ndjson.Options{})
	})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout %q", out.String())
	}
	for _, l := range lines {
		r, err := tt.Decode([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := r.Echo(); e.Transport != int(bridge.TransportStdio) {
			t.Fatalf("handler saw transport %d", e.Transport)
		}
	}
}

func TestServeOnceAnswersTheFirstMessageOnly(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string // want "" means no answer
	}{
		{"one request", tt.Request(`"e1"`, "echo", "") + "\n", `"e1"`},
		{"no final newline", tt.Request(`"e1"`, "echo", ""), `"e1"`},
		{"CRLF", tt.Request(`"e1"`, "echo", "") + "\r\n", `"e1"`},
		{"leading blank lines", "\n \r\n" + tt.Request(`"e1"`, "echo", "") + "\n", `"e1"`},
		{"only the first of two", tt.Request(`"e1"`, "echo", "") + "\n" + tt.Request(`"e2"`, "echo", "") + "\n", `"e1"`},
		{"notification", tt.Notification("echo", "") + "\n", ""},
		{"empty input", "", ""},
		{"garbage", "\xff garbage\n", `null`},
		{"over the limit with an id", tt.Request(`"big"`, "echo", `{"p":"`+strings.Repeat("x", 300)+`"}`), `"big"`},
		{"over the limit without an id", tt.Notification("echo", `{"p":"`+strings.Repeat("x", 300)+`"}`), ""},
	}
	for _, tc := range cases {
		h := &tt.Handler{}
		var out bytes.Buffer
		within(t, tc.name, func() error {
			return stdio.ServeOnce(context.Background(), strings.NewReader(tc.in), &out, h, ndjson.Options{MaxMessageBytes: 200})
		})
		if tc.want == "" {
			if out.Len() != 0 {
				t.Errorf("%s: wrote %q, want nothing", tc.name, out.String())
			}
			continue
		}
		if strings.Count(out.String(), "\n") != 1 || !strings.HasSuffix(out.String(), "\n") {
			t.Errorf("%s: wrote %q, want exactly one line", tc.name, out.String())
			continue
		}
		r, err := tt.Decode(out.Bytes())
		if err != nil || string(r.ID) != tc.want {
			t.Errorf("%s: answer %q (%v), want id %s", tc.name, out.String(), err, tc.want)
		}
		if h.Calls() > 1 {
			t.Errorf("%s: handler called %d times", tc.name, h.Calls())
		}
	}
}

func TestServeOnceDoesNotWaitForEOF(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close()
	go io.WriteString(pw, tt.Request(`"e1"`, "echo", "")+"\n")
	var out bytes.Buffer
	within(t, "ServeOnce", func() error {
		return stdio.ServeOnce(context.Background(), pr, &out, &tt.Handler{}, ndjson.Options{})
	})
	if !strings.Contains(out.String(), `"e1"`) {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestServeOnceStopsWaitingOnCancel(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	within(t, "ServeOnce", func() error { return stdio.ServeOnce(ctx, pr, &out, &tt.Handler{}, ndjson.Options{}) })
	if out.Len() != 0 {
		t.Fatalf("stdout %q", out.String())
	}
}
