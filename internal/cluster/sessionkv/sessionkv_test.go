package sessionkv_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/cluster/sessionkv"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func open(t *testing.T, url, name string, opts session.Options) *sessionkv.Store {
	t.Helper()
	conn, err := cluster.Connect(cluster.Config{Servers: []string{url}, Name: name, LookupBudget: 10 * time.Second}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	s, err := sessionkv.Open(context.Background(), conn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Concurrent updates from two replicas lose nothing (compare-and-set), and the rings keep the
// in-memory bounds.
func TestConcurrentUpdatesFromTwoStoresAllCount(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	opts := session.Options{RecentEvents: 4}
	stores := []*sessionkv.Store{open(t, srv.URL(), "a", opts), open(t, srv.URL(), "b", opts)}
	const perStore = 15
	var wg sync.WaitGroup
	at := time.Unix(1700000000, 0)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perStore {
				ev := testkit.ShellEvent(fmt.Sprintf("e-%d-%d", i, j), "rm x", testkit.Session("s1"), testkit.Agent("ag"))
				s.RecordEvent(ev, at)
				s.RecordDecision(ev, &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY})
			}
		}()
	}
	wg.Wait()
	v := stores[1].View("s1", "")
	if v.EventCount != 2*perStore || v.ToolCallCount != 2*perStore || v.DenyCount != 2*perStore {
		t.Fatalf("view = events %d, tool calls %d, denies %d; want %d each", v.EventCount, v.ToolCallCount, v.DenyCount, 2*perStore)
	}
	if len(v.Recent) != 4 || v.AgentID != "ag" {
		t.Fatalf("recent = %d items, agent %q; want the ring bound 4 and agent ag", len(v.Recent), v.AgentID)
	}
	mem := session.NewMemory(opts)
	ev := testkit.ShellEvent("m", "rm x", testkit.Session("s1"), testkit.Agent("ag"))
	mem.RecordEvent(ev, at)
	fresh := open(t, srv.URL(), "c", opts)
	fresh.RecordEvent(testkit.ShellEvent("m", "rm x", testkit.Session("s2"), testkit.Agent("ag2")), at)
	got, want := fresh.View("s2", ""), mem.View("s1", "")
	if got.EventCount != want.EventCount || got.LastEventType != want.LastEventType || len(got.Recent) != len(want.Recent) ||
		got.Recent[0].ToolKind != want.Recent[0].ToolKind || !got.Recent[0].Time.Equal(want.Recent[0].Time) || !got.FirstSeen.Equal(want.FirstSeen) {
		t.Fatalf("KV view %+v differs from the in-memory one %+v", got, want)
	}
}
