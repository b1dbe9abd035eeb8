package session_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/session"
)

// liveHeap collects and returns the live heap's bytes, the heap's objects, and the bytes of heap
// the collector must scan for pointers (the part of the live heap that costs mark work).
func liveHeap() (bytes, objects, scan uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"}}
	runtime.GC()
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
}

// BenchmarkFullSessionsLiveHeap fills the memory with 2000 sessions whose recent-events rings are
// full (the tool name of each event its own string, as a decoded request's is) and reports the
// live heap after a collection (live-B/session, objects/session, and scan-B/session: the bytes
// the collector scans for pointers) and how long one forced collection takes.
func BenchmarkFullSessionsLiveHeap(b *testing.B) {
	const sessions, events = 2000, 64
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%d", i)
	}
	for b.Loop() {
		b.StopTimer()
		base, baseObjects, baseScan := liveHeap()
		b.StartTimer()
		m := session.NewMemory(session.Options{MaxSessions: sessions})
		at := time.Unix(1_000_000, 0)
		for e := range events + events/4 {
			for _, id := range ids {
				m.RecordEvent(&ahpv1.Event{
					Id: "e", Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, Session: &ahpv1.Session{Id: id},
					Tool: &ahpv1.Tool{Name: strings.Clone([]string{"Bash", "Read", "Edit"}[e%3]), Kind: ahpv1.ToolKind_TOOL_KIND_SHELL},
				}, at)
			}
		}
		b.StopTimer()
		live, objects, scan := liveHeap()
		start := time.Now()
		runtime.GC()
		gc := time.Since(start)
		if v := m.View(ids[0], ""); len(v.Recent) != events {
			b.Fatalf("%d recent events, want %d", len(v.Recent), events)
		}
		b.ReportMetric(float64(live-base)/sessions, "live-B/session")
		b.ReportMetric(float64(live-base)/(1<<20), "live-MB")
		b.ReportMetric((float64(scan)-float64(baseScan))/sessions, "scan-B/session")
		b.ReportMetric((float64(objects)-float64(baseObjects))/sessions, "objects/session")
		b.ReportMetric(float64(gc.Nanoseconds()), "gc-ns")
		runtime.KeepAlive(m)
		b.StartTimer()
	}
}
