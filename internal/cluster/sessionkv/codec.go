package sessionkv

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/session"
	"google.golang.org/protobuf/encoding/protowire"
)

// The stored form of a record (issue 15: the JSON form was ~7 KB for a full session, written
// to NATS and delivered to every replica at every decision, and encoding/json cost ~8 µs and
// ~2 KB of garbage per write). A value is one format byte (0x01), the length of the rest as a
// varint (so that a value cut short is an error, not a shorter record), then protobuf wire format
// written with protowire; there is no schema file: the table below is the schema. Enums are their
// numbers, times Unix nanoseconds (zigzag varints) with whether they were in UTC (a time in any
// other location reads back as local time, as session memory's compact events do), strings as
// they are; lists are oldest first. An absent field has its zero value; unknown field numbers are
// skipped, so a later layout may add fields.
//
// A value that starts with '{' is the JSON an earlier version wrote (session.Record's fields
// with RFC 3339 times and type names, see jsonRecord): it is still read, so replicas can be
// upgraded one at a time, and written back in the binary form at the record's next change
// (in the JSON form with Options.JSON, while replicas of that version still run).
//
//	session record ('s.' keys)     agent record ('a.' keys)
//	 1 agent id         string      13 fact  message, repeated
//	 2 events           varint
//	 3 tool calls       varint     recent event
//	 4 errors           varint      1 type       varint (ahp.v1.EventType)
//	 5 denies           varint      2 tool kind  varint (ahp.v1.ToolKind; -1: not a defined kind)
//	 6 first seen       sint64 ns   3 tool name  string
//	 7 last seen        sint64 ns   4 time       sint64 ns after the previous event's (the first's: ns)
//	 8 times in UTC     varint      5 in UTC     varint (1: yes)
//	   (bit 1 first seen, bit 2 last seen)
//	 9 last type        varint     fact
//	10 run status       string      1 content    string
//	11 verification     string      2 source     string
//	12 recent event     message, repeated   3 confidence fixed32 (float bits)
//	13 fact             message, repeated
const formatBinary = 0x01

// Field numbers (see above).
const (
	fAgent, fEvents, fToolCalls, fErrors, fDenies        = 1, 2, 3, 4, 5
	fFirstSeen, fLastSeen, fUTC, fLastType               = 6, 7, 8, 9
	fRunStatus, fVerification, fRecent, fFact            = 10, 11, 12, 13
	feType, feKind, feToolName, feTime, feUTC            = 1, 2, 3, 4, 5
	ffContent, ffSource, ffConfidence                    = 1, 2, 3
	utcFirstSeen, utcLastSeen                     uint64 = 1, 2
)

// encodeRecord returns r's stored form, written in the capacity of b (empty).
func encodeRecord(b []byte, r *session.Record) []byte {
	b, start := begin(b)
	b = appendString(b, fAgent, r.AgentID)
	b = appendVarint(b, fEvents, r.Events)
	b = appendVarint(b, fToolCalls, r.ToolCalls)
	b = appendVarint(b, fErrors, r.Errors)
	b = appendVarint(b, fDenies, r.Denies)
	var utc uint64
	if !r.FirstSeen.IsZero() {
		b = appendSint(b, fFirstSeen, r.FirstSeen.UnixNano())
		if r.FirstSeen.Location() == time.UTC {
			utc |= utcFirstSeen
		}
	}
	if !r.LastSeen.IsZero() {
		b = appendSint(b, fLastSeen, r.LastSeen.UnixNano())
		if r.LastSeen.Location() == time.UTC {
			utc |= utcLastSeen
		}
	}
	b = appendVarint(b, fUTC, utc)
	b = appendVarint(b, fLastType, uint64(int64(r.LastType)))
	b = appendString(b, fRunStatus, r.RunStatus)
	b = appendString(b, fVerification, r.VerificationStatus)
	recent := r.Recent.NewestFirst()
	var prev int64
	for i := len(recent) - 1; i >= 0; i-- {
		b = appendEvent(b, recent[i], prev)
		prev = recent[i].UnixNano()
	}
	return end(appendFacts(b, r.Facts.NewestFirst()), start)
}

// encodeAgent returns a's stored form, written in the capacity of b (empty).
func encodeAgent(b []byte, a *session.AgentRecord) []byte {
	b, start := begin(b)
	return end(appendFacts(b, a.Facts.NewestFirst()), start)
}

// lengthRoom is the room begin leaves for the length: a varint of up to 3 bytes, 2 MiB, above
// the bucket's largest value (maxRecordBytes); a longer record moves to make room.
const lengthRoom = 3

// begin appends the format byte and room for the length; end writes the length of what follows
// and returns the value from its format byte on.
func begin(b []byte) ([]byte, int) {
	b = append(b, formatBinary, 0, 0, 0)
	return b, len(b)
}

func end(b []byte, start int) []byte {
	n := uint64(len(b) - start)
	size := protowire.SizeVarint(n)
	if size > lengthRoom {
		b = append(b, make([]byte, size-lengthRoom)...)
		copy(b[start+size-lengthRoom:], b[start:len(b)-(size-lengthRoom)])
		start += size - lengthRoom
	}
	// The varint ends right before the message: shift the format byte up to it.
	at := start - size
	protowire.AppendVarint(b[at:at], n)
	b[at-1] = formatBinary
	return b[at-1:]
}

// encodedSize is a capacity for encoding r in one allocation: its size, or a few bytes more.
func encodedSize(r *session.Record) int {
	n := 1 + lengthRoom + 6*11 + 5*10 + len(r.AgentID) + len(r.RunStatus) + len(r.VerificationStatus)
	recent := r.Recent.NewestFirst()
	var prev int64
	for i := len(recent) - 1; i >= 0; i-- {
		size := eventSize(recent[i], prev)
		n += 1 + protowire.SizeVarint(uint64(size)) + size
		prev = recent[i].UnixNano()
	}
	return n + factsSize(r.Facts.NewestFirst())
}

// factsSize is the size of fs encoded, or a few bytes more.
func factsSize(fs []*ahpv1.Fact) int {
	n := 0
	for _, f := range fs {
		n += 3 + 3 + len(f.GetContent()) + 3 + len(f.GetSource()) + 5
	}
	return n
}

// eventSize is the size of e's message, its time a step from prev.
func eventSize(e policy.CompactEvent, prev int64) int {
	t, kind, name := uint64(int64(e.Type())), uint64(int64(e.Kind())), e.ToolName()
	size := 1 + protowire.SizeVarint(protowire.EncodeZigZag(e.UnixNano()-prev))
	if t != 0 {
		size += 1 + protowire.SizeVarint(t)
	}
	if kind != 0 {
		size += 1 + protowire.SizeVarint(kind)
	}
	if name != "" {
		size += 1 + protowire.SizeBytes(len(name))
	}
	if e.UTC() {
		size += 2
	}
	return size
}

// appendEvent appends e, whose time follows prev's (in nanoseconds; wrapping around, so any two
// instants have a difference).
func appendEvent(b []byte, e policy.CompactEvent, prev int64) []byte {
	t, kind, name, ns := uint64(int64(e.Type())), uint64(int64(e.Kind())), e.ToolName(), protowire.EncodeZigZag(e.UnixNano()-prev)
	b = protowire.AppendTag(b, fRecent, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(eventSize(e, prev)))
	b = appendVarint(b, feType, t)
	b = appendVarint(b, feKind, kind)
	b = appendString(b, feToolName, name)
	b = protowire.AppendTag(b, feTime, protowire.VarintType)
	b = protowire.AppendVarint(b, ns)
	if e.UTC() {
		b = appendVarint(b, feUTC, 1)
	}
	return b
}

// appendFacts appends fs (newest first) oldest first.
func appendFacts(b []byte, fs []*ahpv1.Fact) []byte {
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		content, source, conf := f.GetContent(), f.GetSource(), math.Float32bits(f.GetConfidence())
		size := 0
		if content != "" {
			size += 1 + protowire.SizeBytes(len(content))
		}
		if source != "" {
			size += 1 + protowire.SizeBytes(len(source))
		}
		if conf != 0 {
			size += 1 + 4
		}
		b = protowire.AppendTag(b, fFact, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(size))
		b = appendString(b, ffContent, content)
		b = appendString(b, ffSource, source)
		if conf != 0 {
			b = protowire.AppendTag(b, ffConfidence, protowire.Fixed32Type)
			b = protowire.AppendFixed32(b, conf)
		}
	}
	return b
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

func appendSint(b []byte, num protowire.Number, v int64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), protowire.EncodeZigZag(v))
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

// errFormat: a value in neither form.
var errFormat = errors.New("neither the binary nor the JSON record form")

// decodeRecord reads a session record (either form), keeping the newest recent and facts of
// each window.
func decodeRecord(b []byte, recent, facts int) (*session.Record, error) {
	r := new(session.Record)
	if isJSON(b) {
		return r, decodeJSONRecord(b, r, recent, facts)
	}
	b, err := body(b)
	if err != nil {
		return r, err
	}
	var firstNS, lastNS int64
	var hasFirst, hasLast bool
	var utc uint64
	var tools []policy.CompactEvent // an event of each tool name seen (a few), whose name the next share
	var prevNS int64                // the previous event's time
	err = fields(b, func(num protowire.Number, typ protowire.Type, v uint64, s []byte) error {
		switch num {
		case fAgent:
			r.AgentID = string(s)
		case fEvents:
			r.Events = v
		case fToolCalls:
			r.ToolCalls = v
		case fErrors:
			r.Errors = v
		case fDenies:
			r.Denies = v
		case fFirstSeen:
			firstNS, hasFirst = protowire.DecodeZigZag(v), true
		case fLastSeen:
			lastNS, hasLast = protowire.DecodeZigZag(v), true
		case fUTC:
			utc = v
		case fLastType:
			r.LastType = ahpv1.EventType(int32(int64(v)))
		case fRunStatus:
			r.RunStatus = string(s)
		case fVerification:
			r.VerificationStatus = string(s)
		case fRecent:
			var t, kind, ns uint64
			var isUTC bool
			var name []byte
			if err := fields(s, func(num protowire.Number, _ protowire.Type, v uint64, s []byte) error {
				switch num {
				case feType:
					t = v
				case feKind:
					kind = v
				case feToolName:
					name = s
				case feTime:
					ns = v
				case feUTC:
					isUTC = v == 1
				}
				return nil
			}, eventTypes); err != nil {
				return fmt.Errorf("recent event: %w", err)
			}
			prevNS += protowire.DecodeZigZag(ns)
			at := timeOf(prevNS, isUTC)
			et, ek := ahpv1.EventType(int32(int64(t))), ahpv1.ToolKind(int32(int64(kind)))
			var c policy.CompactEvent
			i := slices.IndexFunc(tools, func(c policy.CompactEvent) bool { return c.ToolName() == string(name) })
			switch {
			case len(name) == 0:
				c = policy.NewCompactEvent(et, ek, "", at)
			case i >= 0:
				c = policy.NewCompactEventLike(tools[i], et, ek, at)
			default:
				c = policy.NewCompactEvent(et, ek, string(name), at)
				if len(tools) < 8 {
					tools = append(tools, c)
				}
			}
			r.PushRecent(c, recent)
		case fFact:
			f, err := decodeFact(s)
			if err != nil {
				return err
			}
			r.PushFact(f, facts)
		}
		return nil
	}, recordTypes)
	if err != nil {
		return new(session.Record), err
	}
	if hasFirst {
		r.FirstSeen = timeOf(firstNS, utc&utcFirstSeen != 0)
	}
	if hasLast {
		r.LastSeen = timeOf(lastNS, utc&utcLastSeen != 0)
	}
	return r, nil
}

// decodeAgent reads an agent record (either form).
func decodeAgent(b []byte, facts int) (*session.AgentRecord, error) {
	a := new(session.AgentRecord)
	if isJSON(b) {
		var j jsonAgent
		if err := json.Unmarshal(b, &j); err != nil {
			return a, err
		}
		for _, f := range j.Facts {
			a.PushFact(f.fact(), facts)
		}
		return a, nil
	}
	b, err := body(b)
	if err != nil {
		return a, err
	}
	err = fields(b, func(num protowire.Number, _ protowire.Type, _ uint64, s []byte) error {
		if num == fFact {
			f, err := decodeFact(s)
			if err != nil {
				return err
			}
			a.PushFact(f, facts)
		}
		return nil
	}, agentTypes)
	if err != nil {
		return new(session.AgentRecord), err
	}
	return a, nil
}

func decodeFact(b []byte) (*ahpv1.Fact, error) {
	f := new(ahpv1.Fact)
	err := fields(b, func(num protowire.Number, _ protowire.Type, v uint64, s []byte) error {
		switch num {
		case ffContent:
			f.Content = string(s)
		case ffSource:
			f.Source = string(s)
		case ffConfidence:
			f.Confidence = math.Float32frombits(uint32(v))
		}
		return nil
	}, factTypes)
	if err != nil {
		return nil, fmt.Errorf("fact: %w", err)
	}
	return f, nil
}

func timeOf(ns int64, utc bool) time.Time {
	t := time.Unix(0, ns)
	if utc {
		return t.UTC()
	}
	return t
}

// wireTypes are the wire types of a message's known fields, by number (other numbers are skipped).
type wireTypes [16]int8 // the wire type, or -1 for an unknown number

func typesOf(m map[protowire.Number]protowire.Type) *wireTypes {
	var t wireTypes
	for i := range t {
		t[i] = -1
	}
	for num, typ := range m {
		t[num] = int8(typ)
	}
	return &t
}

// The wire type of each known field of a message.
var (
	recordTypes = typesOf(map[protowire.Number]protowire.Type{
		fAgent: protowire.BytesType, fEvents: protowire.VarintType, fToolCalls: protowire.VarintType,
		fErrors: protowire.VarintType, fDenies: protowire.VarintType, fFirstSeen: protowire.VarintType,
		fLastSeen: protowire.VarintType, fUTC: protowire.VarintType, fLastType: protowire.VarintType,
		fRunStatus: protowire.BytesType, fVerification: protowire.BytesType, fRecent: protowire.BytesType,
		fFact: protowire.BytesType,
	})
	agentTypes = typesOf(map[protowire.Number]protowire.Type{fFact: protowire.BytesType})
	eventTypes = typesOf(map[protowire.Number]protowire.Type{
		feType: protowire.VarintType, feKind: protowire.VarintType, feToolName: protowire.BytesType,
		feTime: protowire.VarintType, feUTC: protowire.VarintType,
	})
	factTypes = typesOf(map[protowire.Number]protowire.Type{
		ffContent: protowire.BytesType, ffSource: protowire.BytesType, ffConfidence: protowire.Fixed32Type,
	})
)

// fields calls field for each field of the message b whose number types lists (v: a varint's or
// fixed32's value, s: a length-delimited field's bytes, sharing b), skipping the others. A
// malformed message, or a known field with another wire type, is an error.
func fields(b []byte, field func(num protowire.Number, typ protowire.Type, v uint64, s []byte) error, types *wireTypes) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		want := protowire.Type(0)
		known := num >= 0 && int(num) < len(types) && types[num] >= 0
		if known {
			want = protowire.Type(types[num])
		}
		if !known {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		if typ != want {
			return fmt.Errorf("field %d: wire type %d, want %d", num, typ, want)
		}
		var v uint64
		var s []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var f uint32
			f, n = protowire.ConsumeFixed32(b)
			v = uint64(f)
		case protowire.BytesType:
			s, n = protowire.ConsumeBytes(b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := field(num, typ, v, s); err != nil {
			return err
		}
	}
	return nil
}

// body returns the message of a value in the binary form, checking its length.
func body(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != formatBinary {
		return nil, errFormat
	}
	n, size := protowire.ConsumeVarint(b[1:])
	if size < 0 {
		return nil, fmt.Errorf("length: %w", protowire.ParseError(size))
	}
	if b = b[1+size:]; uint64(len(b)) != n {
		return nil, fmt.Errorf("%d bytes where the length says %d", len(b), n)
	}
	return b, nil
}

// Times are stored as Unix nanoseconds, which hold the years 1678 to 2262; the server records
// only times of its clock, so a JSON value with another is not one it wrote.
var minTime, maxTime = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

func inRange(t time.Time) bool {
	return t.IsZero() || !t.Before(minTime) && !t.After(maxTime)
}

// isJSON reports whether b is in the JSON form of earlier versions.
func isJSON(b []byte) bool { return len(b) > 0 && b[0] == '{' }

// jsonRecord is session.Record as earlier versions stored it (encoding/json), read for upgrades.
type jsonRecord struct {
	AgentID            string      `json:"agent,omitempty"`
	Events             uint64      `json:"events,omitempty"`
	ToolCalls          uint64      `json:"tool_calls,omitempty"`
	Errors             uint64      `json:"errors,omitempty"`
	Denies             uint64      `json:"denies,omitempty"`
	FirstSeen          time.Time   `json:"first_seen"`
	LastSeen           time.Time   `json:"last_seen"`
	LastType           string      `json:"last_type,omitempty"`
	RunStatus          string      `json:"run_status,omitempty"`
	VerificationStatus string      `json:"verification_status,omitempty"`
	Recent             []jsonEvent `json:"recent,omitempty"`
	Facts              []jsonFact  `json:"facts,omitempty"`
}

type jsonEvent struct {
	Type     string    `json:"type"`
	ToolName string    `json:"tool_name,omitempty"`
	ToolKind string    `json:"tool_kind,omitempty"`
	Time     time.Time `json:"time"`
}

type jsonFact struct {
	Content    string  `json:"content"`
	Source     string  `json:"source,omitempty"`
	Confidence float32 `json:"confidence,omitempty"`
}

type jsonAgent struct {
	Facts []jsonFact `json:"facts,omitempty"`
}

func (f jsonFact) fact() *ahpv1.Fact {
	return &ahpv1.Fact{Content: f.Content, Source: f.Source, Confidence: f.Confidence}
}

// encodeJSON returns rec in the JSON form (cluster.session_format: json).
func encodeJSON(rec any) ([]byte, error) {
	switch r := rec.(type) {
	case *session.Record:
		j := jsonRecord{
			AgentID: r.AgentID, Events: r.Events, ToolCalls: r.ToolCalls, Errors: r.Errors, Denies: r.Denies,
			FirstSeen: r.FirstSeen, LastSeen: r.LastSeen, LastType: names.EventTypeName(r.LastType),
			RunStatus: r.RunStatus, VerificationStatus: r.VerificationStatus, Facts: jsonFacts(r.Facts.NewestFirst()),
		}
		recent := r.Recent.NewestFirst()
		j.Recent = make([]jsonEvent, len(recent))
		for i, e := range recent {
			s := e.Summary()
			j.Recent[len(recent)-1-i] = jsonEvent{Type: s.Type, ToolName: s.ToolName, ToolKind: s.ToolKind, Time: s.Time}
		}
		return json.Marshal(j)
	case *session.AgentRecord:
		return json.Marshal(jsonAgent{Facts: jsonFacts(r.Facts.NewestFirst())})
	}
	return nil, fmt.Errorf("no stored form for %T", rec)
}

// jsonFacts are fs (newest first) oldest first.
func jsonFacts(fs []*ahpv1.Fact) []jsonFact {
	out := make([]jsonFact, len(fs))
	for i, f := range fs {
		out[len(fs)-1-i] = jsonFact{Content: f.GetContent(), Source: f.GetSource(), Confidence: f.GetConfidence()}
	}
	return out
}

func decodeJSONRecord(b []byte, r *session.Record, recent, facts int) error {
	var j jsonRecord
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if !inRange(j.FirstSeen) || !inRange(j.LastSeen) {
		return errors.New("a time outside the years 1678 to 2262")
	}
	lastType, _ := names.ParseEventType(j.LastType) // a name this version does not know: none
	*r = session.Record{
		AgentID: j.AgentID, Events: j.Events, ToolCalls: j.ToolCalls, Errors: j.Errors, Denies: j.Denies,
		FirstSeen: j.FirstSeen, LastSeen: j.LastSeen, LastType: lastType,
		RunStatus: j.RunStatus, VerificationStatus: j.VerificationStatus,
	}
	for _, e := range j.Recent {
		if !inRange(e.Time) || e.Time.IsZero() {
			return errors.New("a recent event's time outside the years 1678 to 2262")
		}
		t, _ := names.ParseEventType(e.Type)
		kind, _ := names.ParseToolKind(e.ToolKind)
		r.PushRecent(policy.NewCompactEvent(t, kind, e.ToolName, e.Time), recent)
	}
	for _, f := range j.Facts {
		r.PushFact(f.fact(), facts)
	}
	return nil
}
