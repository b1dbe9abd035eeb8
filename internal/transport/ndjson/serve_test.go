package ndjson_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
	tt "github.com/ahp-gateway/ahp/internal/transport/transporttest"
)

// serve runs ndjson.Serve over in and returns what it wrote, failing the test if it takes too long.
func serve(t *testing.T, in string, opts ndjson.Options) []string {
	t.Helper()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- ndjson.Serve(context.Background(), strings.NewReader(in), &out, &tt.Handler{}, bridge.TransportStdio, opts)
	}()
	if err := testkit.Receive(t, done, "Serve did not return at EOF"); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		t.Fatalf("output does not end with a newline: %q", out.String())
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

func ids(t *testing.T, lines []string) []string {
	t.Helper()
	var got []string
	for _, l := range lines {
		if l == "" {
			continue
		}
		r, err := tt.Decode([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		id := string(r.ID)
		if r.Error != nil {
			id += "!" + r.Error.Message
		}
		got = append(got, id)
	}
	return got
}

func TestServeAnswersRequestsInOrderAndNeverNotifications(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		tt.Request(`"1"`, "echo", ""),
		tt.Notification("echo", ""),
		"",
		tt.Request(`2`, "echo", "") + "\r",
		tt.Notification("sleep", `{"ms":10}`),
		tt.Request(`"3"`, "echo", ""),
	}, "\n") + "\n"
	got := ids(t, serve(t, in, ndjson.Options{}))
	if strings.Join(got, " ") != `"1" 2 "3"` {
		t.Fatalf("answers %q", got)
	}
}

func TestServeOversizeLineDoesNotEndTheStream(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("x", 5000)
	in := strings.Join([]string{
		tt.Request(`"big"`, "echo", `{"pad":"`+pad+`"}`), // id readable: answered with an error
		tt.Request(`"after"`, "echo", ""),
		tt.Notification("echo", `{"pad":"`+pad+`"}`),   // no id: not answered
		`{"params":{"pad":"` + pad + `"},"id":"late"}`, // id after the cut: not answered
		tt.Request(`"last"`, "echo", ""),
	}, "\n") + "\n"
	got := ids(t, serve(t, in, ndjson.Options{MaxMessageBytes: 1000}))
	want := `"big"!Invalid Request: message is over the 1000-byte limit|"after"|"last"`
	if strings.Join(got, "|") != want {
		t.Fatalf("answers %q", got)
	}
}

func TestServeHandsGarbageToTheHandler(t *testing.T) {
	t.Parallel()
	// The fake answers what it cannot parse with -32700; the transport passes everything on.
	in := "\xff\xfe\xfd\n{\"id\":\n" + tt.Request(`"ok"`, "echo", "") + "\n[1,2]"
	got := ids(t, serve(t, in, ndjson.Options{}))
	want := `null!Parse error|null!Parse error|"ok"|null!Parse error`
	if strings.Join(got, "|") != want {
		t.Fatalf("answers %q", got)
	}
}

func TestServeHandlesAnUnterminatedLastLine(t *testing.T) {
	t.Parallel()
	got := ids(t, serve(t, tt.Request(`"a"`, "echo", "")+"\n"+tt.Request(`"b"`, "echo", ""), ndjson.Options{}))
	if strings.Join(got, " ") != `"a" "b"` {
		t.Fatalf("answers %q", got)
	}
	// A last line cut off mid-message is handed over too: the Handler answers or drops it.
	got = ids(t, serve(t, tt.Request(`"a"`, "echo", "")+"\n"+`{"jsonrpc":"2.0","id":"b","meth`, ndjson.Options{}))
	if strings.Join(got, " ") != `"a" null!Parse error` {
		t.Fatalf("answers %q", got)
	}
}

func TestServeRepliesAreSingleLines(t *testing.T) {
	t.Parallel()
	in := tt.Request(`"p"`, "pretty", "") + "\n" + tt.Request(`"m"`, "malformed", "") + "\n" +
		tt.Request(`"h"`, "huge", `{"bytes":9000000}`) + "\n" + tt.Request(`"e"`, "echo", "") + "\n"
	lines := serve(t, in, ndjson.Options{})
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (pretty compacted, malformed dropped, huge, echo)", len(lines))
	}
	if lines[0] != `{"jsonrpc":"2.0","id":"p","result":{"text":"a\nb"}}` {
		t.Fatalf("pretty reply written as %q", lines[0])
	}
	if len(lines[1]) < 9000000 {
		t.Fatalf("huge reply cut to %d bytes", len(lines[1]))
	}
	if got := ids(t, lines[2:]); got[0] != `"e"` {
		t.Fatalf("last answer %q", got)
	}
}

func TestServeIsSequentialByDefault(t *testing.T) {
	t.Parallel()
	h := &tt.Handler{}
	var in strings.Builder
	for _, id := range []string{`"1"`, `"2"`, `"3"`} {
		in.WriteString(tt.Request(id, "sleep", `{"ms":30}`) + "\n")
	}
	var out bytes.Buffer
	if err := ndjson.Serve(context.Background(), strings.NewReader(in.String()), &out, h, bridge.TransportStdio, ndjson.Options{}); err != nil {
		t.Fatal(err)
	}
	if h.MaxInFlight() != 1 {
		t.Fatalf("%d messages in flight at once", h.MaxInFlight())
	}
	if got := ids(t, strings.Split(strings.TrimSpace(out.String()), "\n")); strings.Join(got, " ") != `"1" "2" "3"` {
		t.Fatalf("answers %q", got)
	}
}

func TestServeConcurrencyAnswersAsReady(t *testing.T) {
	t.Parallel()
	in := tt.Request(`"slow"`, "sleep", `{"ms":400}`) + "\n" + tt.Request(`"fast"`, "echo", "") + "\n"
	got := ids(t, serve(t, in, ndjson.Options{Concurrency: 4}))
	if strings.Join(got, " ") != `"fast" "slow"` {
		t.Fatalf("answers %q: the fast one should not wait for the slow one", got)
	}
}

func TestServeFinishesInFlightMessagesOnCancel(t *testing.T) {
	t.Parallel()
	// In the bubble, synctest.Wait returns once every other goroutine of it has exited or is
	// blocked: that is when the reading goroutine Serve left behind has dealt with the message
	// written after Serve returned, dropping it or (wrongly) handling it.
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		h := &tt.Handler{}
		var out testkit.LogBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ndjson.Serve(ctx, pr, &out, h, bridge.TransportUnix, ndjson.Options{}) }()
		io.WriteString(pw, tt.Request(`"inflight"`, tt.MethodBlock, "")+"\n")
		h.AwaitCalls(t, 1)
		cancel()
		h.Unblock()
		if err := testkit.Receive(t, done, "Serve did not return after cancel"); err != nil {
			t.Fatal(err)
		}
		if got := ids(t, []string{strings.TrimSpace(out.String())}); len(got) != 1 || got[0] != `"inflight"` {
			t.Fatalf("answers %q", got)
		}
		// Nothing more is taken after the stop. The write returns once the reading goroutine has
		// the message.
		io.WriteString(pw, tt.Request(`"later"`, "echo", "")+"\n")
		synctest.Wait()
		if h.Calls() != 1 {
			t.Fatal("a message was handled after Serve returned")
		}
	})
}

func TestServeTakesNothingOnceCancelled(t *testing.T) {
	t.Parallel()
	// Sequentially, a message read after ctx is done is never handled, whoever notices ctx first.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := &tt.Handler{}
	var out bytes.Buffer
	in := strings.Repeat(tt.Request(`"1"`, "echo", "")+"\n", 3)
	for range 50 {
		if err := ndjson.Serve(ctx, strings.NewReader(in), &out, h, bridge.TransportStdio, ndjson.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if h.Calls() != 0 || out.Len() != 0 {
		t.Fatalf("%d messages handled after cancel; wrote %q", h.Calls(), out.String())
	}
}

func TestServeReportsAFailedAnswerInFlightAtCancel(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close()
	boom := errors.New("stdout closed")
	h := &tt.Handler{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ndjson.Serve(ctx, pr, failingWriter{boom}, h, bridge.TransportStdio, ndjson.Options{}) }()
	io.WriteString(pw, tt.Request(`"inflight"`, "sleep", `{"ms":100}`)+"\n")
	h.AwaitCalls(t, 1)
	cancel()
	if err := testkit.Receive(t, done, "Serve did not return after cancel"); !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
}

func TestServeReturnsWriteErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("stdout closed")
	in := strings.Repeat(tt.Request(`"1"`, "echo", "")+"\n", 10)
	err := ndjson.Serve(context.Background(), strings.NewReader(in), failingWriter{boom}, &tt.Handler{}, bridge.TransportStdio, ndjson.Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
}

func TestServeCopesWithASlowReader(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	const n = 200
	var in strings.Builder
	for range n {
		in.WriteString(tt.Request(`"r"`, "huge", `{"bytes":2000}`) + "\n")
	}
	const concurrency = 8
	h := &tt.Handler{}
	done := make(chan error, 1)
	go func() {
		done <- ndjson.Serve(context.Background(), strings.NewReader(in.String()), pw, h, bridge.TransportStdio, ndjson.Options{Concurrency: concurrency})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	got := 0
	for sc.Scan() {
		if got%50 == 0 {
			// A reader that keeps falling behind: it pauses until every slot has taken a message
			// beyond what it read, so answers pile up behind a blocked write.
			h.AwaitCalls(t, min(int64(got+concurrency), n))
		}
		if _, err := tt.Decode(sc.Bytes()); err != nil {
			t.Fatal(err)
		}
		got++
	}
	if err := <-done; err != nil || got != n {
		t.Fatalf("Serve: %v; %d answers, want %d", err, got, n)
	}
}
