package sessionkv

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/proto"
)

const testRecent, testFacts = 64, 128

// legacyEvents are the events the JSON literals below were made of, by the JSON-storing
// version (084cf51) applying them with session.Record.Apply and encoding/json.
func legacyEvents() ([]*ahpv1.Event, []time.Time) {
	at := time.Unix(1700000000, 123456789).UTC()
	evs := []*ahpv1.Event{
		testkit.ShellEvent("e1", "ls", testkit.Session("s1"), testkit.Agent("ag")),
		{Type: ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, Session: &ahpv1.Session{Id: "s1"}, Tool: &ahpv1.Tool{Name: "Read", Kind: ahpv1.ToolKind_TOOL_KIND_FILE_READ, Error: &ahpv1.ToolError{Message: "no such file"}}},
		{Type: ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE, Session: &ahpv1.Session{Id: "s1"}, Body: &ahpv1.Event_RunLifecycle{RunLifecycle: &ahpv1.RunLifecycle{RunId: "r1", Status: ahpv1.RunStatus_RUN_STATUS_FAILED, Error: proto.String("boom")}}},
	}
	times := []time.Time{at, at.Add(time.Second), at.Add(2 * time.Second).In(time.FixedZone("X", 7200))}
	return evs, times
}

const (
	legacySession = `{"agent":"ag","events":3,"tool_calls":1,"errors":1,"denies":1,"first_seen":"2023-11-14T22:13:20.123456789Z","last_seen":"2023-11-15T00:13:22.123456789+02:00","last_type":"run.lifecycle","run_status":"failed","recent":[{"type":"tool.before","tool_name":"Bash","tool_kind":"shell","time":"2023-11-14T22:13:20.123456789Z"},{"type":"tool.error","tool_name":"Read","tool_kind":"file_read","time":"2023-11-14T22:13:21.123456789Z"},{"type":"run.lifecycle","time":"2023-11-15T00:13:22.123456789+02:00"}],"facts":[{"content":"tool Read failed: no such file","source":"observation:tool.error","confidence":0.9},{"content":"run r1 failed: boom","source":"observation:run.lifecycle","confidence":0.9}]}`
	legacyAgent   = `{"facts":[{"content":"tool Read failed: no such file","source":"observation:tool.error","confidence":0.9},{"content":"run r1 failed: boom","source":"observation:run.lifecycle","confidence":0.9}]}`
)

func redactor(t testing.TB) *redact.Redactor {
	r, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// applied is the record and agent record the events make with this version's Apply.
func applied(t testing.TB, evs []*ahpv1.Event, times []time.Time, denies uint64) (*session.Record, *session.AgentRecord) {
	r, a := new(session.Record), new(session.AgentRecord)
	red := redactor(t)
	for i, ev := range evs {
		d := session.DeriveFacts(ev, red)
		r.Apply(ev, times[i], d, testRecent, testFacts)
		a.Apply(d, testFacts)
	}
	r.Denies = denies
	return r, a
}

// sameRecord fails t unless got reads as want: every field, every recent event (type and kind
// numbers, tool name, instant, whether in UTC), every fact, and the byte estimate.
func sameRecord(t *testing.T, what string, got, want *session.Record) {
	t.Helper()
	if got.AgentID != want.AgentID || got.Events != want.Events || got.ToolCalls != want.ToolCalls || got.Errors != want.Errors ||
		got.Denies != want.Denies || got.LastType != want.LastType || got.RunStatus != want.RunStatus || got.VerificationStatus != want.VerificationStatus {
		t.Fatalf("%s: record %+v, want %+v", what, got, want)
	}
	sameTime(t, what+": first seen", got.FirstSeen, want.FirstSeen)
	sameTime(t, what+": last seen", got.LastSeen, want.LastSeen)
	ge, we := got.Recent.NewestFirst(), want.Recent.NewestFirst()
	if len(ge) != len(we) {
		t.Fatalf("%s: %d recent events, want %d", what, len(ge), len(we))
	}
	for i := range ge {
		g, w := ge[i], we[i]
		if g.Type() != w.Type() || g.Kind() != w.Kind() || g.ToolName() != w.ToolName() || g.UnixNano() != w.UnixNano() || g.UTC() != w.UTC() {
			t.Fatalf("%s: recent[%d] = %+v, want %+v", what, i, g.Summary(), w.Summary())
		}
	}
	sameFacts(t, what, got.Facts.NewestFirst(), want.Facts.NewestFirst())
	if gb, wb := got.Bytes("s", testRecent, testFacts), want.Bytes("s", testRecent, testFacts); gb != wb {
		t.Fatalf("%s: byte estimate %d, want %d", what, gb, wb)
	}
}

func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) || got.IsZero() != want.IsZero() || (got.Location() == time.UTC) != (want.Location() == time.UTC) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func sameFacts(t *testing.T, what string, got, want []*ahpv1.Fact) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d facts, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("%s: fact %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	evs, times := legacyEvents()
	verification := &ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_VERIFICATION, Session: &ahpv1.Session{Id: "s1"},
		Body: &ahpv1.Event_Verification{Verification: &ahpv1.Verification{RunId: "r1", Status: ahpv1.VerificationStatus_VERIFICATION_STATUS_FAILED, ResidualRisks: []string{"untested"}}}}
	evs = append(evs, verification)
	times = append(times, times[0].Add(-time.Hour).In(time.Local)) // earlier than the one before: a negative step
	full, agent := applied(t, evs, times, 7)
	// Numbers this version does not name survive (a newer replica's event types and kinds).
	full.PushRecent(policy.NewCompactEvent(9999, 4242, "future", time.Unix(0, -5).UTC()), testRecent)
	full.LastType = 9999
	many, _ := applied(t, nil, nil, 0)
	for i := range 3 * testRecent {
		many.Apply(testkit.ShellEvent(fmt.Sprintf("m%d", i), "ls", testkit.Session("m")), times[0].Add(time.Duration(i)*time.Millisecond), nil, testRecent, testFacts)
	}
	if full.RunStatus == "" || full.VerificationStatus == "" || full.Errors == 0 || full.Facts.Len() < 3 {
		t.Fatalf("the test record misses a field: %+v", full)
	}
	cases := map[string]*session.Record{"full": full, "zero": {}, "many": many}
	for name, rec := range cases {
		b := encode(rec)
		got, err := decodeRecord(b, testRecent, testFacts)
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		sameRecord(t, name, got, rec)
		// Every proper prefix is an error (the length says it was cut), never a panic.
		for n := range len(b) {
			if _, err := decodeRecord(b[:n], testRecent, testFacts); err == nil {
				t.Fatalf("%s: the first %d of %d bytes decoded without an error", name, n, len(b))
			}
		}
	}
	for name, a := range map[string]*session.AgentRecord{"agent": agent, "empty agent": {}} {
		b := encode(a)
		got, err := decodeAgent(b, testFacts)
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		sameFacts(t, name, got.Facts.NewestFirst(), a.Facts.NewestFirst())
		for n := range len(b) {
			if _, err := decodeAgent(b[:n], testFacts); err == nil {
				t.Fatalf("%s: the first %d of %d bytes decoded without an error", name, n, len(b))
			}
		}
	}
	// A smaller ring bound keeps the newest.
	small, err := decodeRecord(encode(many), 4, 2)
	if err != nil || small.Recent.Len() != 4 || small.Recent.NewestFirst()[0].UnixNano() != many.Recent.NewestFirst()[0].UnixNano() {
		t.Fatalf("decoded with a bound of 4: %d events (%v); want the newest 4", small.Recent.Len(), err)
	}
}

// The JSON records the earlier version wrote still read, as the same record this version makes
// of the same events; a rewritten one is in the binary form.
func TestLegacyJSONRecordsStillRead(t *testing.T) {
	evs, times := legacyEvents()
	want, wantAgent := applied(t, evs, times, 1)
	got, err := decodeRecord([]byte(legacySession), testRecent, testFacts)
	if err != nil {
		t.Fatal(err)
	}
	// JSON kept the +02:00 offset, which reads back as a fixed zone: the same instant, not UTC.
	sameRecord(t, "legacy session", got, want)
	// The byte estimate is the earlier version's (session's stateSize 256, summarySize 64,
	// factSize 96, slotSize 8, over the JSON record's text).
	var j jsonRecord
	if err := json.Unmarshal([]byte(legacySession), &j); err != nil {
		t.Fatal(err)
	}
	old := 256 + len("s1") + len(j.AgentID) + 8*(testRecent+testFacts)
	for _, e := range j.Recent {
		old += 64 + len(e.Type) + len(e.ToolName) + len(e.ToolKind)
	}
	for _, f := range j.Facts {
		old += 96 + len(f.Content) + len(f.Source)
	}
	if n := got.Bytes("s1", testRecent, testFacts); n != old {
		t.Fatalf("byte estimate %d, want the earlier version's %d", n, old)
	}
	a, err := decodeAgent([]byte(legacyAgent), testFacts)
	if err != nil {
		t.Fatal(err)
	}
	sameFacts(t, "legacy agent", a.Facts.NewestFirst(), wantAgent.Facts.NewestFirst())
	if b := encode(got); b[0] != formatBinary {
		t.Fatalf("re-encoded legacy record starts with %q, want the binary form", b[0])
	}
	if json.Valid(encode(got)) {
		t.Fatal("the binary form is valid JSON: the first byte would not tell the forms apart")
	}
}

func TestUndecodableValuesAreErrors(t *testing.T) {
	evs, times := legacyEvents()
	full, _ := applied(t, evs, times, 0)
	b := encode(full)
	for name, v := range map[string][]byte{
		"empty":                 {},
		"another format":        {0x02, 0x00},
		"broken JSON":           []byte(`{"events":`),
		"JSON of another shape": []byte(`{"events":"many"}`),
		"length beyond the end": {formatBinary, 0x05, 0x10, 0x01},
		"bytes past the length": append(append([]byte(nil), b...), 0x10, 0x01),
		"a varint as bytes":     {formatBinary, 0x02, 0x12, 0x00}, // field 2 (events) with wire type 2
	} {
		if _, err := decodeRecord(v, testRecent, testFacts); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
		if _, err := decodeAgent(v, testFacts); err == nil && name != "a varint as bytes" && name != "JSON of another shape" {
			t.Errorf("%s: decoded as an agent without an error", name)
		}
	}
	// Unknown fields are skipped (a later layout's additions).
	msg := []byte{0x10, 0x03, 0xf8, 0x07, 0x01} // events 3, field 127 varint 1
	v := append([]byte{formatBinary, byte(len(msg))}, msg...)
	if r, err := decodeRecord(v, testRecent, testFacts); err != nil || r.Events != 3 {
		t.Fatalf("record with an unknown field = events %d, %v; want 3 and no error", r.Events, err)
	}
}

// Whatever a value holds, decoding does not panic, keeps the ring bounds, and a record that
// decoded re-encodes to one that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	evs, times := legacyEvents()
	full, agent := applied(f, evs, times, 2)
	f.Add(encode(full))
	f.Add(encode(agent))
	f.Add(encode(&session.Record{}))
	f.Add([]byte(legacySession))
	f.Add([]byte(legacyAgent))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b, 8, 4)
		if r.Recent.Len() > 8 || r.Facts.Len() > 4 {
			t.Fatalf("decoded windows of %d events and %d facts past the bounds 8 and 4", r.Recent.Len(), r.Facts.Len())
		}
		if err == nil {
			again, err := decodeRecord(encode(r), 8, 4)
			if err != nil {
				t.Fatalf("re-encoded record does not decode: %v", err)
			}
			sameRecord(t, "re-encoded", again, r)
		}
		a, err := decodeAgent(b, 4)
		if a.Facts.Len() > 4 {
			t.Fatalf("decoded %d agent facts past the bound 4", a.Facts.Len())
		}
		if err == nil {
			again, err := decodeAgent(encode(a), 4)
			if err != nil {
				t.Fatalf("re-encoded agent record does not decode: %v", err)
			}
			sameFacts(t, "re-encoded agent", again.Facts.NewestFirst(), a.Facts.NewestFirst())
		}
	})
}

// The sizes of a full 64-event record in both forms (reported; the binary one must be smaller).
func TestFullRecordSizes(t *testing.T) {
	r := new(session.Record)
	j := jsonRecord{AgentID: "agent-1"}
	at := time.Now().UTC() // (JSON writes a local time at offset 0 as UTC)
	for i := range testRecent {
		ev := testkit.ShellEvent(fmt.Sprintf("e%d", i), "ls -la", testkit.Session("s"), testkit.Agent("agent-1"))
		when := at.Add(time.Duration(i) * 1500 * time.Microsecond)
		r.Apply(ev, when, nil, testRecent, testFacts)
		j.Recent = append(j.Recent, jsonEvent{Type: "tool.before", ToolName: ev.GetTool().GetName(), ToolKind: "shell", Time: when})
	}
	j.Events, j.ToolCalls, j.FirstSeen, j.LastSeen, j.LastType = r.Events, r.ToolCalls, r.FirstSeen, r.LastSeen, "tool.before"
	legacy, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(legacy, testRecent, testFacts)
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "JSON of the full record", got, r)
	bin := encode(r)
	t.Logf("a session record of %d recent events: %d bytes as JSON, %d in the binary form", testRecent, len(legacy), len(bin))
	if len(bin)*3 > len(legacy) {
		t.Fatalf("binary form %d bytes, not under a third of the JSON form's %d", len(bin), len(legacy))
	}
}

// Keys are the kind, a dot and the id in unpadded base64url, the id hashed past 96 bytes; one
// allocation each (two for a hashed one).
func TestKeys(t *testing.T) {
	for _, id := range []string{"", "s", "principal\x00session-0123456789-abcdefghijklmnopqrstuvwxyz", string(make([]byte, 96)), string(make([]byte, 97))} {
		want := id
		if len(id) > 96 {
			sum := sha256.Sum256([]byte(id))
			want = string(sum[:])
		}
		if got, want := kvKey('s', id), "s."+base64.RawURLEncoding.EncodeToString([]byte(want)); got != want {
			t.Fatalf("key of %q = %q, want %q", id, got, want)
		}
		if n := testing.AllocsPerRun(100, func() { kvKey('a', id) }); n > 1 && len(id) <= 96 {
			t.Fatalf("key of a %d-byte id: %v allocations, want at most 1", len(id), n)
		}
	}
}

// A record is encoded in one allocation.
func TestEncodingAllocatesOnce(t *testing.T) {
	evs, times := legacyEvents()
	full, agent := applied(t, evs, times, 3)
	for range 70 {
		full.Apply(testkit.ShellEvent("x", "ls", testkit.Session("s1")), times[0], nil, testRecent, testFacts)
	}
	for name, rec := range map[string]any{"session": full, "agent": agent, "empty": &session.Record{}} {
		if n := testing.AllocsPerRun(50, func() { encode(rec) }); n != 1 {
			t.Errorf("encoding the %s record: %v allocations, want 1", name, n)
		}
	}
}

// The JSON form written for a rolling upgrade (session_format: json) reads back as the record,
// by this version and as the earlier version's JSON.
func TestJSONFormRoundTrips(t *testing.T) {
	evs, times := legacyEvents()
	times[2] = times[2].UTC() // JSON writes a time at offset 0 as UTC: keep the test's times in UTC
	rec, agent := applied(t, evs, times, 4)
	b, err := encodeJSON(rec)
	if err != nil {
		t.Fatal(err)
	}
	var j jsonRecord // the earlier version's struct
	if err := json.Unmarshal(b, &j); err != nil || j.Events != 3 || j.Denies != 4 || len(j.Recent) != 3 || j.Recent[0].Type != "tool.before" || j.Recent[1].ToolKind != "file_read" || j.LastType != "run.lifecycle" {
		t.Fatalf("JSON form %s: %v", b, err)
	}
	got, err := decodeRecord(b, testRecent, testFacts)
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "JSON form", got, rec)
	ab, err := encodeJSON(agent)
	if err != nil {
		t.Fatal(err)
	}
	a, err := decodeAgent(ab, testFacts)
	if err != nil {
		t.Fatal(err)
	}
	sameFacts(t, "JSON agent form", a.Facts.NewestFirst(), agent.Facts.NewestFirst())
}

// fullRecord is a session with 64 recent tool.before events and a few facts.
func fullRecord(tb testing.TB) *session.Record {
	r := new(session.Record)
	at := time.Now()
	red := redactor(tb)
	for i := range testRecent {
		ev := testkit.ShellEvent(fmt.Sprintf("e%d", i), "ls -la", testkit.Session("s"), testkit.Agent("agent-1"))
		if i%16 == 0 {
			ev = &ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, Session: &ahpv1.Session{Id: "s"},
				Tool: &ahpv1.Tool{Name: "Read", Kind: ahpv1.ToolKind_TOOL_KIND_FILE_READ, Error: &ahpv1.ToolError{Message: "no such file"}}}
		}
		r.Apply(ev, at.Add(time.Duration(i)*1500*time.Microsecond), session.DeriveFacts(ev, red), testRecent, testFacts)
	}
	return r
}

// The stored forms' cost per write (encode) and per read of another replica's write (decode).
func BenchmarkRecordForms(b *testing.B) {
	r := fullRecord(b)
	js, err := encodeJSON(r)
	if err != nil {
		b.Fatal(err)
	}
	bin := encode(r)
	b.Run("encode/binary", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			encode(r)
		}
		b.ReportMetric(float64(len(bin)), "bytes/record")
	})
	b.Run("encode/json", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := encodeJSON(r); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(js)), "bytes/record")
	})
	for name, v := range map[string][]byte{"binary": bin, "json": js} {
		b.Run("decode/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := decodeRecord(v, testRecent, testFacts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
