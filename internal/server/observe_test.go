package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func observation(id string) *ahpv1.Event {
	return testkit.Event(id, ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, testkit.Session("batch"))
}

// auditedEventIDs reads the event ids of the audit log's observation records, in order.
func auditedEventIDs(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Kind    string `json:"kind"`
			EventID string `json:"event_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Kind == "observation" {
			ids = append(ids, rec.EventID)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestObserveStreamBatches(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(audit.Config{Path: path, Required: true, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close(context.Background()) })
	ts := start(t, basePolicy, func(c *server.Config) { c.Audit = log })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			client := ts.observe(proto.opts...)
			id := func(s string) string { return proto.name + "-" + s }

			// A single event, a batch in order, a batch repeating one earlier event (a retry).
			sum := observeStream(t, ctx, client,
				&ahpv1.ObserveStreamRequest{Event: observation(id("a"))},
				&ahpv1.ObserveStreamRequest{Events: []*ahpv1.Event{observation(id("b")), observation(id("c")), observation(id("d"))}},
				&ahpv1.ObserveStreamRequest{Events: []*ahpv1.Event{observation(id("c")), observation(id("e"))}},
			)
			if sum.GetAccepted() != 5 {
				t.Fatalf("sum.GetAccepted() = %v, want 5", sum.GetAccepted())
			}
			if sum.GetDuplicates() != 1 {
				t.Fatalf("sum.GetDuplicates() = %v, want 1", sum.GetDuplicates())
			}

			// An invalid batch records none of its events, names the event at fault and ends the
			// stream; the message before it is recorded.
			cs := client.ObserveStream(ctx)
			bad := observation("")
			_ = cs.Send(&ahpv1.ObserveStreamRequest{Event: observation(id("f"))})
			_ = cs.Send(&ahpv1.ObserveStreamRequest{Events: []*ahpv1.Event{observation(id("g")), bad}})
			_, err = cs.CloseAndReceive()
			if connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("invalid batch: %v, want invalid_argument", err)
			}
			for _, want := range []string{"message 1 (after 1 accepted)", "events[1].id"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}

			if err := log.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range auditedEventIDs(t, path) {
				if strings.HasPrefix(e, proto.name+"-") {
					got = append(got, e)
				}
			}
			want := []string{id("a"), id("b"), id("c"), id("d"), id("e"), id("f")}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("audited %v, want %v (in order; g belongs to the rejected batch)", got, want)
			}
		})
	}
}

func TestObserveStreamRejectsMalformedMessages(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	client := ts.observe()
	tooMany := make([]*ahpv1.Event, 1001)
	for i := range tooMany {
		tooMany[i] = observation(fmt.Sprintf("many-%d", i))
	}
	for name, c := range map[string]struct {
		msg  *ahpv1.ObserveStreamRequest
		want string
	}{
		"neither event nor events": {&ahpv1.ObserveStreamRequest{}, "validation error: one of event, events must be set"},
		"both event and events":    {&ahpv1.ObserveStreamRequest{Event: observation("x1"), Events: []*ahpv1.Event{observation("x2")}}, "only one of event, events can be set"},
		"batch over 1000 events":   {&ahpv1.ObserveStreamRequest{Events: tooMany}, "events: must contain no more than 1000 item(s)"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs := client.ObserveStream(ctx)
			_ = cs.Send(c.msg)
			_, err := cs.CloseAndReceive()
			if connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("connect.CodeOf(err) = %v, want connect.CodeInvalidArgument: %v", connect.CodeOf(err), err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("strings.Contains(err.Error(), c.want) is false: %v", err)
			}
		})
	}
}
