package transport_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/transport"
)

func TestOversizeReplyEchoesALeadingID(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 100)
	cases := []struct {
		name, head, want string // want "" means no answer
	}{
		{"string id first", `{"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept","params":{"a":"` + big, `"evt_1"`},
		{"integer id", `{"jsonrpc":"2.0","id":42,"method":"m","params":{"a":"` + big, `42`},
		{"id after small members", `{"method":"m","extra":{"k":[1,2]},"id":"r1","params":{"a":"` + big, `"r1"`},
		{"spaces kept out", `{ "id" : "r 1" , "params":"` + big, `"r 1"`},
		{"id after a cut-off params", `{"jsonrpc":"2.0","method":"m","params":{"a":"` + big, ``},
		{"no id: maybe a notification", `{"jsonrpc":"2.0","method":"m","params":{"a":"` + big, ``},
		{"null id", `{"jsonrpc":"2.0","id":null,"params":"` + big, ``},
		{"object id", `{"id":{"x":1},"params":"` + big, ``},
		{"number cut at the end", `{"id":12`, ``},
		{"string cut at the end", `{"id":"abc`, ``},
		{"not an object", `[{"id":"a"},` + big, ``},
		{"garbage", "\xff\xfe" + big, ``},
		{"invalid UTF-8 in id", "{\"id\":\"a\xffb\",\"params\":\"" + big, ``},
	}
	for _, tc := range cases {
		got := transport.OversizeReply([]byte(tc.head), 4194304)
		if tc.want == "" {
			if got != nil {
				t.Errorf("%s: got %s, want no answer", tc.name, got)
			}
			continue
		}
		want := `{"jsonrpc":"2.0","id":` + tc.want + `,"error":{"code":-32600,"message":"Invalid Request: message is over the 4194304-byte limit"}}`
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, want)
		}
	}
}

func TestServeHTTPFinishesInFlightRequestsOnCancel(t *testing.T) {
	t.Parallel()
	started, release, shuttingDown := make(chan struct{}), make(chan struct{}), make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release // until the shutdown has begun
		io.WriteString(w, "done")
	})}
	srv.RegisterOnShutdown(func() { close(shuttingDown) })
	addr, cancel, served := testkit.ServeTCP(t, func(ctx context.Context, ln net.Listener) error {
		return transport.ServeHTTP(ctx, srv, ln, 5*time.Second)
	})

	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + addr)
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-started
	cancel()
	testkit.Receive(t, shuttingDown, "ServeHTTP did not start shutting down")
	close(release)
	if body := testkit.Receive(t, got, "no answer"); body != "done" {
		t.Fatalf("in-flight request got %q", body)
	}
	if err := testkit.Receive(t, served, "ServeHTTP did not return"); err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("still accepting after shutdown")
	}
}
