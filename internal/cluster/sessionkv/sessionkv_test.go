package sessionkv_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/cluster/sessionkv"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/nats-io/nats.go/jetstream"
)

func open(t *testing.T, url, name string, opts session.Options, tune ...sessionkv.Options) *sessionkv.Store {
	t.Helper()
	conn, err := cluster.Connect(cluster.Config{Servers: []string{url}, Name: name, LookupBudget: 10 * time.Second}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	s, err := sessionkv.Open(context.Background(), conn, opts, tune...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// waitView waits until s's view of sessionID satisfies ok, each check after the watch delivered
// a change (no sleeping), for up to 10 s.
func waitView(t *testing.T, s *sessionkv.Store, sessionID string, ok func(*policy.SessionView) bool) *policy.SessionView {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		changed := s.Changed()
		v := s.View(sessionID, "")
		if ok(v) {
			return v
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("view of %s never satisfied the condition; last: events %d, denies %d", sessionID, v.EventCount, v.DenyCount)
		}
	}
}

func flush(t *testing.T, s *sessionkv.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
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
	for _, s := range stores {
		flush(t, s)
	}
	// Each store sees the other's writes once its watch delivers them.
	v := waitView(t, stores[1], "s1", func(v *policy.SessionView) bool { return v.EventCount == 2*perStore })
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

// A replica's own change is in its view at once, before it is stored; another replica's arrives
// through the watch, and neither view reads the bucket for it.
func TestViewsComeFromTheWatchedCopy(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, b := open(t, srv.URL(), "a", session.Options{}), open(t, srv.URL(), "b", session.Options{})
	ev := testkit.ShellEvent("e1", "rm x", testkit.Session("w1"))
	at := time.Unix(1700000000, 0)
	waitReady := func(s *sessionkv.Store) { // a view of an absent session reads nothing once the watch is ready
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			changed := s.Changed()
			before := s.Stats().Reads
			s.View("nobody", "")
			if s.Stats().Reads == before {
				return
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatal("the watch never delivered the bucket")
			}
		}
	}
	// An empty bucket delivers nothing: write one record so both watches have something to hand over.
	a.RecordEvent(testkit.ShellEvent("e0", "ls", testkit.Session("w0")), at)
	flush(t, a)
	waitView(t, b, "w0", func(v *policy.SessionView) bool { return v.EventCount == 1 })
	waitReady(a)
	waitReady(b)
	readsA, readsB := a.Stats().Reads, b.Stats().Reads
	a.RecordEvent(ev, at)
	a.RecordDecision(ev, &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY})
	if v := a.View("w1", ""); v.EventCount != 1 || v.DenyCount != 1 {
		t.Fatalf("A's own view right after its change = events %d, denies %d; want 1 and 1", v.EventCount, v.DenyCount)
	}
	waitView(t, b, "w1", func(v *policy.SessionView) bool { return v.EventCount == 1 && v.DenyCount == 1 })
	// B denies too; A's view counts both.
	b.RecordDecision(ev, &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY})
	waitView(t, a, "w1", func(v *policy.SessionView) bool { return v.DenyCount == 2 })
	if ra, rb := a.Stats().Reads-readsA, b.Stats().Reads-readsB; ra != 0 || rb != 0 {
		t.Fatalf("views read the bucket %d times on A and %d on B; want none (the watched copy answers)", ra, rb)
	}
}

// Close stores every queued change: a replica opened afterwards sees all of them.
func TestCloseStoresQueuedChanges(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a := open(t, srv.URL(), "a", session.Options{})
	const n = 50
	at := time.Unix(1700000000, 0)
	for i := range n {
		ev := testkit.ShellEvent(fmt.Sprintf("c%d", i), "rm x", testkit.Session(fmt.Sprintf("c%d", i%5)))
		a.RecordEvent(ev, at)
		a.RecordDecision(ev, &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY})
	}
	a.Close()
	if st := a.Stats(); st.LostAtClose != 0 || st.QueuedBytes != 0 {
		t.Fatalf("after Close: %d changes lost, %d bytes still queued; want none", st.LostAtClose, st.QueuedBytes)
	}
	b := open(t, srv.URL(), "b", session.Options{})
	for i := range 5 {
		if v := b.View(fmt.Sprintf("c%d", i), ""); v.EventCount != n/5 || v.DenyCount != n/5 {
			t.Fatalf("session c%d after A closed = events %d, denies %d; want %d each", i, v.EventCount, v.DenyCount, n/5)
		}
	}
}

// A full queue makes the call write before it returns (counted), and nothing is lost.
func TestFullQueueWritesSynchronously(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a := open(t, srv.URL(), "a", session.Options{}, sessionkv.Options{QueueBytes: 1})
	at := time.Unix(1700000000, 0)
	for i := range 10 {
		a.RecordEvent(testkit.ShellEvent(fmt.Sprintf("f%d", i), "ls", testkit.Session("full")), at)
	}
	st := a.Stats()
	if st.SyncWrites != 10 || st.QueuedBytes != 0 {
		t.Fatalf("sync writes %d, queued bytes %d; want 10 synchronous writes and nothing queued", st.SyncWrites, st.QueuedBytes)
	}
	b := open(t, srv.URL(), "b", session.Options{})
	if v := b.View("full", ""); v.EventCount != 10 {
		t.Fatalf("another replica sees %d events, want 10 (each written before the call returned)", v.EventCount)
	}
}

// A decided event and its denial (RecordDecided, as the decision core records them) are stored
// in one write.
func TestDecidedEventAndDenialShareOneWrite(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a := open(t, srv.URL(), "a", session.Options{})
	at := time.Unix(1700000000, 0)
	a.RecordDecided(testkit.ShellEvent("d1", "rm x", testkit.Session("one")), at, &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY})
	flush(t, a)
	if st := a.Stats(); st.Writes != 1 {
		t.Fatalf("writes = %d, want 1 for the event and its denial", st.Writes)
	}
	b := open(t, srv.URL(), "b", session.Options{})
	if v := b.View("one", ""); v.EventCount != 1 || v.DenyCount != 1 {
		t.Fatalf("stored view = events %d, denies %d; want 1 and 1", v.EventCount, v.DenyCount)
	}
}

// With on_start_unavailable: degrade, a store opened before NATS runs uses the local store, then
// opens the bucket and starts its watch once NATS comes: views then come from the watched copy
// (another replica's change arrives without a read of the bucket).
func TestWatchStartsWhenNATSComesAfterTheStore(t *testing.T) {
	t.Parallel()
	srv := natstest.Later(t)
	conn, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "late",
		OnStartUnavailable: cluster.Degrade, LookupBudget: 10 * time.Second}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	late, err := sessionkv.Open(context.Background(), conn, session.Options{})
	if err != nil {
		t.Fatalf("Open with NATS down in degrade mode: %v", err)
	}
	t.Cleanup(late.Close)
	at := time.Unix(1700000000, 0)
	late.RecordEvent(testkit.ShellEvent("early", "ls", testkit.Session("s-early")), at)
	if v := late.View("s-early", ""); v.EventCount != 1 {
		t.Fatalf("before NATS: local view counts %d events, want 1", v.EventCount)
	}
	select {
	case <-late.Ready():
		t.Fatal("the watch was ready before NATS ran")
	default:
	}

	srv.Run()
	select {
	case <-late.Ready():
	case <-time.After(60 * time.Second):
		t.Fatal("the store never started its watch after NATS came")
	}
	other := open(t, srv.URL(), "other", session.Options{})
	other.RecordEvent(testkit.ShellEvent("shared", "ls", testkit.Session("s-shared")), at)
	flush(t, other)
	reads := late.Stats().Reads
	waitView(t, late, "s-shared", func(v *policy.SessionView) bool { return v.EventCount == 1 })
	if n := late.Stats().Reads; n != reads {
		t.Fatalf("the view read the bucket %d times; want it from the watched copy", n-reads)
	}
	// Its own writes now reach the bucket: the other replica sees them.
	late.RecordEvent(testkit.ShellEvent("back", "ls", testkit.Session("s-back")), at)
	flush(t, late)
	waitView(t, other, "s-back", func(v *policy.SessionView) bool { return v.EventCount == 1 })
}

// failedRead is a tool error: it adds a fact to its session and its agent.
func failedRead(id, sessionID, agentID, msg string) *ahpv1.Event {
	return &ahpv1.Event{Id: id, Type: ahpv1.EventType_EVENT_TYPE_TOOL_ERROR,
		Session: &ahpv1.Session{Id: sessionID, Agent: &ahpv1.Agent{Id: agentID}},
		Tool:    &ahpv1.Tool{Name: "Read", Kind: ahpv1.ToolKind_TOOL_KIND_FILE_READ, Error: &ahpv1.ToolError{Message: msg}}}
}

// summary is what a test compares of a view: counters, recent events and facts as text.
func summary(v *policy.SessionView) string {
	out := fmt.Sprintf("events %d tools %d errors %d denies %d last %q agent %q first %v last %v run %q verification %q\n",
		v.EventCount, v.ToolCallCount, v.ErrorCount, v.DenyCount, v.LastEventType, v.AgentID, v.FirstSeen.UnixNano(), v.LastSeen.UnixNano(),
		v.RunStatus, v.VerificationStatus)
	for _, e := range v.RecentEvents() {
		out += fmt.Sprintf("  recent %s %s %s %d %v\n", e.Type, e.ToolName, e.ToolKind, e.Time.UnixNano(), e.Time.Location() == time.UTC)
	}
	for _, f := range v.Facts {
		out += fmt.Sprintf("  fact %s | %s | %v\n", f.GetContent(), f.GetSource(), f.GetConfidence())
	}
	for _, f := range v.AgentFacts {
		out += fmt.Sprintf("  agent fact %s | %s | %v\n", f.GetContent(), f.GetSource(), f.GetConfidence())
	}
	return out
}

// A view holds what the record held when it was taken: later changes — this replica's own,
// queued or stored, and another replica's arriving through the watch — never reach it, whether
// its recent events were converted yet or not.
func TestViewsDoNotSeeLaterChanges(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	opts := session.Options{RecentEvents: 4, Facts: 3}
	a, b := open(t, srv.URL(), "a", opts), open(t, srv.URL(), "b", opts)
	at := time.Unix(1700000000, 0).UTC()
	var lazy, full []*policy.SessionView
	var want []string
	take := func() {
		t.Helper()
		l, f := a.LazyView("v1", "ag"), a.View("v1", "ag")
		lazy, full = append(lazy, l), append(full, f)
		want = append(want, summary(f))
	}
	for i := range 12 {
		ev := failedRead(fmt.Sprintf("r%d", i), "v1", "ag", fmt.Sprintf("no file %d", i))
		if i%2 == 0 {
			ev = testkit.ShellEvent(fmt.Sprintf("r%d", i), "ls", testkit.Session("v1"), testkit.Agent("ag"))
		}
		a.RecordDecided(ev, at.Add(time.Duration(i)*time.Second), &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY})
		take()
		if i%3 == 0 {
			flush(t, a)
			take()
		}
		if i%4 == 0 { // another replica's change, arriving through the watch
			b.RecordEvent(failedRead(fmt.Sprintf("b%d", i), "v1", "ag", "from b"), at.Add(time.Duration(i)*time.Second+time.Millisecond))
			flush(t, b)
			waitView(t, a, "v1", func(v *policy.SessionView) bool { return v.EventCount > full[len(full)-1].EventCount })
			take()
		}
	}
	for i := range want {
		if got := summary(lazy[i]); got != want[i] {
			t.Fatalf("lazy view %d changed, or reads unlike the full view taken with it:\n%s\nwant\n%s", i, got, want[i])
		}
		if got := summary(full[i]); got != want[i] {
			t.Fatalf("full view %d changed:\n%s\nwant\n%s", i, got, want[i])
		}
	}
	sawB := false
	for _, w := range want {
		sawB = sawB || strings.Contains(w, "from b")
	}
	if first, last := want[0], want[len(want)-1]; first == last || !sawB || !strings.Contains(last, "events 15 ") {
		t.Fatalf("the views did not follow the changes (12 events here, 3 from another replica): first\n%s\nlast\n%s", first, last)
	}
}

// A lazy view reads as the full view of the same record, and as the in-memory store's view of
// the same events.
func TestLazyViewReadsAsTheFullView(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	opts := session.Options{RecentEvents: 8, Facts: 4}
	a := open(t, srv.URL(), "a", opts)
	mem := session.NewMemory(opts)
	at := time.Unix(1700000000, 0)
	for i := range 20 {
		ev := testkit.ShellEvent(fmt.Sprintf("l%d", i), "ls", testkit.Session("lz"), testkit.Agent("ag"))
		switch i % 6 {
		case 1, 4:
			ev = failedRead(fmt.Sprintf("l%d", i), "lz", "ag", fmt.Sprintf("missing %d", i))
		case 3:
			ev = &ahpv1.Event{Id: fmt.Sprintf("l%d", i), Type: ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE, Session: &ahpv1.Session{Id: "lz"},
				Body: &ahpv1.Event_RunLifecycle{RunLifecycle: &ahpv1.RunLifecycle{RunId: "r", Status: ahpv1.RunStatus_RUN_STATUS_COMPLETED}}}
		case 5:
			ev = &ahpv1.Event{Id: fmt.Sprintf("l%d", i), Type: ahpv1.EventType_EVENT_TYPE_VERIFICATION, Session: &ahpv1.Session{Id: "lz"},
				Body: &ahpv1.Event_Verification{Verification: &ahpv1.Verification{RunId: "r", Status: ahpv1.VerificationStatus_VERIFICATION_STATUS_PASSED}}}
		}
		when := at.Add(time.Duration(i) * time.Millisecond)
		if i%2 == 0 {
			when = when.UTC()
		}
		d := &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW}
		if i%5 == 0 {
			d.Verdict = ahpv1.Verdict_VERDICT_DENY
		}
		a.RecordDecided(ev, when, d)
		mem.RecordEvent(ev, when)
		mem.RecordDecision(ev, d)
	}
	check := func(stage string) {
		t.Helper()
		lazy, full, inMemory := a.LazyView("lz", ""), a.View("lz", ""), mem.View("lz", "")
		if lazy.Recent != nil {
			t.Fatalf("%s: the lazy view converted its recent events already", stage)
		}
		if l, f, m := summary(lazy), summary(full), summary(inMemory); l != f || f != m {
			t.Fatalf("%s: lazy view\n%s\nfull view\n%s\nin-memory view\n%s", stage, l, f, m)
		}
	}
	check("queued")
	flush(t, a)
	check("stored")
	// A replica that reads the stored record decodes the same.
	b := open(t, srv.URL(), "b", opts)
	if l, m := summary(b.LazyView("lz", "")), summary(mem.View("lz", "")); l != m {
		t.Fatalf("another replica's lazy view\n%s\nin-memory view\n%s", l, m)
	}
}

// During a rolling upgrade a replica writing the JSON form (session_format: json, which earlier
// versions read) and one writing the binary form share sessions: each reads the other's records
// and adds to them, and the stored value is in the writer's form.
func TestReplicasWritingEitherFormShareSessions(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	opts := session.Options{}
	old := open(t, srv.URL(), "json", opts, sessionkv.Options{JSON: true})
	cur := open(t, srv.URL(), "binary", opts)
	kv := rawBucket(t, srv.URL())
	stored := func() byte {
		t.Helper()
		e, err := kv.Get(context.Background(), "s."+base64.RawURLEncoding.EncodeToString([]byte("up")))
		if err != nil {
			t.Fatal(err)
		}
		return e.Value()[0]
	}
	at := time.Unix(1700000000, 0).UTC()
	deny := &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY}
	old.RecordDecided(testkit.ShellEvent("u1", "rm x", testkit.Session("up")), at, deny)
	flush(t, old)
	if b := stored(); b != '{' {
		t.Fatalf("the JSON-writing replica stored a value starting with %q, want JSON", b)
	}
	waitView(t, cur, "up", func(v *policy.SessionView) bool { return v.DenyCount == 1 })
	cur.RecordDecided(failedRead("u2", "up", "", "gone"), at.Add(time.Second), deny)
	flush(t, cur)
	if b := stored(); b == '{' {
		t.Fatal("the binary-writing replica stored JSON")
	}
	v := waitView(t, old, "up", func(v *policy.SessionView) bool { return v.DenyCount == 2 })
	if v.EventCount != 2 || v.ErrorCount != 1 || len(v.Facts) != 1 || len(v.Recent) != 2 || v.Recent[0].ToolKind != "file_read" {
		t.Fatalf("the JSON-writing replica's view of the binary record: %s", summary(v))
	}
	if st := old.Stats(); st.Undecodable != 0 {
		t.Fatalf("%d values undecodable", st.Undecodable)
	}
}

// A stored value in neither form is counted, read as an empty record and replaced at the
// session's next change.
func TestUndecodableValueIsReplaced(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a := open(t, srv.URL(), "a", session.Options{})
	kv := rawBucket(t, srv.URL())
	key := "s." + base64.RawURLEncoding.EncodeToString([]byte("bad"))
	if _, err := kv.Put(context.Background(), key, []byte{0x01, 0x09, 0x10}); err != nil { // a binary value cut short
		t.Fatal(err)
	}
	b := open(t, srv.URL(), "b", session.Options{})
	if v := b.View("bad", ""); v.EventCount != 0 || len(v.Recent) != 0 {
		t.Fatalf("view of an undecodable record: %s", summary(v))
	}
	if n := b.Stats().Undecodable; n != 1 {
		t.Fatalf("undecodable values counted: %d, want 1", n)
	}
	b.RecordEvent(testkit.ShellEvent("x", "ls", testkit.Session("bad")), time.Unix(1700000000, 0))
	flush(t, b)
	waitView(t, a, "bad", func(v *policy.SessionView) bool { return v.EventCount == 1 })
	if e, err := kv.Get(context.Background(), key); err != nil || e.Value()[0] != 0x01 || len(e.Value()) < 10 {
		t.Fatalf("the value after the next change: %v, %v; want a binary record", e, err)
	}
}

// rawBucket opens the session bucket directly, as another program would, to read and write
// stored values without the store.
func rawBucket(t *testing.T, url string) jetstream.KeyValue {
	t.Helper()
	conn, err := cluster.Connect(cluster.Config{Servers: []string{url}, Name: "raw"}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	js, err := jetstream.New(conn.NATS())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), conn.Bucket(sessionkv.BucketName))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}
