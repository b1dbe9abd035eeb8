package server

import (
	"strconv"
	"unicode/utf8"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// A Connect JSON Intercept spent about 40 allocations in protojson.Unmarshal (issue 18):
// protojson reads through protoreflect, boxing every field value and building each message of
// google.protobuf.Struct through reflection. decodeIntercept reads the usual shape of an
// InterceptRequest straight into the generated structs instead: the event's scalar fields, its
// session, agent, tool (input and output as Struct and Value), tool error and origin, and the
// capabilities.
//
// It is an accelerator, never a second parser with its own rules. It accepts a subset of what
// protojson accepts and builds exactly what protojson builds (FuzzDecodeInterceptMatchesProtojson,
// TestDecodeIntercept); for everything else it reports false and the codec parses the document
// again with protojson, which then also words any error. "Everything else" includes every field
// outside the subset, null for a message or scalar field, numbers for enums, unknown enum names,
// escaped field names, invalid UTF-8, duplicate fields or keys, numbers strconv cannot hold,
// nesting deeper than fastMaxDepth and anything after the top-level object.

// fastMaxDepth bounds the nesting of objects and arrays the fast path reads (protojson's own
// limit is far higher; a deeper document goes to it).
const fastMaxDepth = 64

// fastDecoder reads one JSON document from data. Every method reports false when the document
// leaves the subset; the decoder is then abandoned.
type fastDecoder struct {
	data  []byte
	i     int
	depth int
}

// decodeIntercept fills req (a zero message) from data, or reports false, leaving req to be
// reset by the caller.
func decodeIntercept(data []byte, req *ahpv1.InterceptRequest) bool {
	d := fastDecoder{data: data}
	var seen uint16
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "event":
			if !d.once(&seen, 1) {
				return false
			}
			req.Event = &ahpv1.Event{}
			return d.event(req.Event)
		case "capabilities":
			if !d.once(&seen, 2) {
				return false
			}
			req.Capabilities = &ahpv1.Capabilities{}
			return d.capabilities(req.Capabilities)
		}
		return false
	})
	if !ok {
		return false
	}
	d.space()
	return d.i == len(d.data)
}

// once marks bit in seen, reporting false if it was set: a field named twice (by its JSON name
// and its proto name, say) is protojson's "duplicate field".
func (d *fastDecoder) once(seen *uint16, bit uint16) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

func (d *fastDecoder) event(ev *ahpv1.Event) bool {
	var seen uint16
	return d.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "id":
			ok = d.once(&seen, 1<<0)
			ev.Id, ok = d.stringField(ok)
		case "source":
			ok = d.once(&seen, 1<<1)
			ev.Source, ok = d.stringField(ok)
		case "type":
			var n int32
			n, ok = d.enumField(d.once(&seen, 1<<2), ahpv1.EventType_value)
			ev.Type = ahpv1.EventType(n)
		case "time":
			ok = d.once(&seen, 1<<3)
			ev.Time, ok = d.stringField(ok)
		case "session":
			if ok = d.once(&seen, 1<<4) && d.objectAhead(); ok {
				ev.Session = &ahpv1.Session{}
				ok = d.session(ev.Session)
			}
		case "tool":
			if ok = d.once(&seen, 1<<5) && d.objectAhead(); ok {
				ev.Tool = &ahpv1.Tool{}
				ok = d.tool(ev.Tool)
			}
		case "extensions":
			if ok = d.once(&seen, 1<<6) && d.objectAhead(); ok {
				ev.Extensions, ok = d.structValue()
			}
		case "origin":
			if ok = d.once(&seen, 1<<7) && d.objectAhead(); ok {
				ev.Origin = &ahpv1.Origin{}
				ok = d.origin(ev.Origin)
			}
		case "outcome":
			var n int32
			n, ok = d.enumField(d.once(&seen, 1<<8), ahpv1.SessionOutcome_value)
			ev.Outcome = ahpv1.SessionOutcome(n)
		case "payload":
			if ok = d.once(&seen, 1<<9); ok {
				ev.Payload, ok = d.value()
			}
		}
		return ok
	})
}

func (d *fastDecoder) session(s *ahpv1.Session) bool {
	var seen uint16
	return d.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "id":
			ok = d.once(&seen, 1<<0)
			s.Id, ok = d.stringField(ok)
		case "cwd":
			ok = d.once(&seen, 1<<1)
			s.Cwd, ok = d.stringField(ok)
		case "workspaceRoots", "workspace_roots":
			if ok = d.once(&seen, 1<<2); ok {
				s.WorkspaceRoots, ok = d.stringList()
			}
		case "model":
			ok = d.once(&seen, 1<<3)
			s.Model, ok = d.stringField(ok)
		case "agent":
			if ok = d.once(&seen, 1<<4) && d.objectAhead(); ok {
				s.Agent = &ahpv1.Agent{}
				ok = d.agent(s.Agent)
			}
		}
		return ok
	})
}

func (d *fastDecoder) agent(a *ahpv1.Agent) bool {
	var seen uint16
	return d.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "id":
			ok = d.once(&seen, 1<<0)
			a.Id, ok = d.stringField(ok)
		case "type":
			ok = d.once(&seen, 1<<1)
			a.Type, ok = d.stringField(ok)
		}
		return ok
	})
}

func (d *fastDecoder) tool(t *ahpv1.Tool) bool {
	var seen uint16
	return d.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "callId", "call_id":
			ok = d.once(&seen, 1<<0)
			t.CallId, ok = d.stringField(ok)
		case "name":
			ok = d.once(&seen, 1<<1)
			t.Name, ok = d.stringField(ok)
		case "kind":
			var n int32
			n, ok = d.enumField(d.once(&seen, 1<<2), ahpv1.ToolKind_value)
			t.Kind = ahpv1.ToolKind(n)
		case "input":
			if ok = d.once(&seen, 1<<3) && d.objectAhead(); ok {
				t.Input, ok = d.structValue()
			}
		case "output":
			if ok = d.once(&seen, 1<<4); ok {
				t.Output, ok = d.value()
			}
		case "error":
			if ok = d.once(&seen, 1<<5) && d.objectAhead(); ok {
				t.Error = &ahpv1.ToolError{}
				ok = d.toolError(t.Error)
			}
		case "origin":
			ok = d.once(&seen, 1<<6)
			t.Origin, ok = d.stringField(ok)
		}
		return ok
	})
}

func (d *fastDecoder) toolError(e *ahpv1.ToolError) bool {
	var seen uint16
	return d.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "message":
			ok = d.once(&seen, 1<<0)
			e.Message, ok = d.stringField(ok)
		case "code":
			if ok = d.once(&seen, 1<<1); ok {
				e.Code, ok = d.value()
			}
		case "category":
			ok = d.once(&seen, 1<<2)
			e.Category, ok = d.stringField(ok)
		}
		return ok
	})
}

func (d *fastDecoder) origin(o *ahpv1.Origin) bool {
	var seen uint16
	return d.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "dialect":
			var n int32
			n, ok = d.enumField(d.once(&seen, 1<<0), ahpv1.Dialect_value)
			o.Dialect = ahpv1.Dialect(n)
		case "protocolVersion", "protocol_version":
			ok = d.once(&seen, 1<<1)
			o.ProtocolVersion, ok = d.stringField(ok)
		case "eventType", "event_type":
			ok = d.once(&seen, 1<<2)
			o.EventType, ok = d.stringField(ok)
		case "synthesizedId", "synthesized_id":
			ok = d.once(&seen, 1<<3)
			o.SynthesizedId, ok = d.boolField(ok)
		case "synthesizedCallId", "synthesized_call_id":
			ok = d.once(&seen, 1<<4)
			o.SynthesizedCallId, ok = d.boolField(ok)
		case "provider":
			ok = d.once(&seen, 1<<5)
			o.Provider, ok = d.stringField(ok)
		}
		return ok
	})
}

func (d *fastDecoder) capabilities(c *ahpv1.Capabilities) bool {
	var seen uint16
	return d.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "effects":
			if ok = d.once(&seen, 1<<0); ok {
				ok = d.array(func() bool {
					n, ok := d.enumField(true, ahpv1.EffectKind_value)
					c.Effects = append(c.Effects, ahpv1.EffectKind(n))
					return ok
				})
			}
		case "extensionEffects", "extension_effects":
			if ok = d.once(&seen, 1<<1); ok {
				c.ExtensionEffects, ok = d.stringList()
			}
		}
		return ok
	})
}

// space skips JSON whitespace.
func (d *fastDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace (0 at the end).
func (d *fastDecoder) peek() byte {
	d.space()
	if d.i == len(d.data) {
		return 0
	}
	return d.data[d.i]
}

// objectAhead reports whether an object comes next (not null, which protojson reads as "unset",
// a case left to it).
func (d *fastDecoder) objectAhead() bool { return d.peek() == '{' }

// object reads an object, calling member for each key (its raw bytes, which hold no escape)
// with the decoder before the member's value; member reads the value.
func (d *fastDecoder) object(member func(key []byte) bool) bool {
	if d.peek() != '{' || d.depth == fastMaxDepth {
		return false
	}
	d.i++
	d.depth++
	if d.peek() == '}' {
		d.i++
		d.depth--
		return true
	}
	for {
		key, ok := d.rawKey()
		if !ok || !member(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// rawKey reads a key without escapes and the colon after it.
func (d *fastDecoder) rawKey() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	for j := start; j < len(d.data); j++ {
		switch c := d.data[j]; {
		case c == '"':
			d.i = j + 1
			if d.peek() != ':' {
				return nil, false
			}
			d.i++
			key := d.data[start:j]
			return key, utf8.Valid(key)
		case c == '\\' || c < ' ':
			return nil, false
		}
	}
	return nil, false
}

// array reads an array, calling elem with the decoder before each element.
func (d *fastDecoder) array(elem func() bool) bool {
	if d.peek() != '[' || d.depth == fastMaxDepth {
		return false
	}
	d.i++
	d.depth++
	if d.peek() == ']' {
		d.i++
		d.depth--
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// stringField reads a string value when ok (the field was not seen before).
func (d *fastDecoder) stringField(ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	return d.string()
}

// string reads a JSON string: valid UTF-8, no raw control characters, escapes decoded (a
// surrogate escape is left to protojson).
func (d *fastDecoder) string() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.data); j++ {
		switch c := d.data[j]; {
		case c == '"':
			raw := d.data[start:j]
			if !ascii && !utf8.Valid(raw) {
				return "", false
			}
			d.i = j + 1
			return string(raw), true
		case c == '\\':
			return d.escapedString(start, j)
		case c < ' ':
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// escapedString reads the rest of a string from its first escape at esc.
func (d *fastDecoder) escapedString(start, esc int) (string, bool) {
	out := make([]byte, 0, esc-start+16)
	out = append(out, d.data[start:esc]...)
	j := esc
	for j < len(d.data) {
		c := d.data[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", false
			}
			d.i = j + 1
			return string(out), true
		case c < ' ':
			return "", false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(d.data) {
			return "", false
		}
		switch e := d.data[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if j+6 > len(d.data) {
				return "", false
			}
			r, ok := hex4(d.data[j+2 : j+6])
			if !ok || (r >= 0xd800 && r <= 0xdfff) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			j += 6
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// hex4 decodes four hex digits.
func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// enumField reads an enum given by its name when ok; numbers, unknown names and null are
// protojson's.
func (d *fastDecoder) enumField(ok bool, names map[string]int32) (int32, bool) {
	if !ok || d.peek() != '"' {
		return 0, false
	}
	start := d.i + 1
	for j := start; j < len(d.data) && j < start+128; j++ {
		switch c := d.data[j]; {
		case c == '"':
			n, known := names[string(d.data[start:j])]
			d.i = j + 1
			return n, known
		case c == '\\' || c < ' ' || c >= utf8.RuneSelf:
			return 0, false
		}
	}
	return 0, false
}

// boolField reads true or false when ok.
func (d *fastDecoder) boolField(ok bool) (bool, bool) {
	if !ok {
		return false, false
	}
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	}
	return false, false
}

func (d *fastDecoder) literal(word string) bool {
	if len(d.data)-d.i < len(word) || string(d.data[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

// stringList reads an array of strings (protojson leaves an empty array's field nil too).
func (d *fastDecoder) stringList() ([]string, bool) {
	var list []string
	ok := d.array(func() bool {
		s, ok := d.string()
		list = append(list, s)
		return ok
	})
	return list, ok
}

// structValue reads a google.protobuf.Struct: an object of any values, no key twice.
func (d *fastDecoder) structValue() (*structpb.Struct, bool) {
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	ok := d.object(func(raw []byte) bool {
		if _, dup := s.Fields[string(raw)]; dup {
			return false
		}
		v, ok := d.value()
		if ok {
			s.Fields[string(raw)] = v
		}
		return ok
	})
	return s, ok
}

// value reads a google.protobuf.Value: any JSON value, null being NullValue.
func (d *fastDecoder) value() (*structpb.Value, bool) {
	switch c := d.peek(); {
	case c == '"':
		s, ok := d.string()
		return &structpb.Value{Kind: &structpb.Value_StringValue{StringValue: s}}, ok
	case c == '{':
		s, ok := d.structValue()
		return &structpb.Value{Kind: &structpb.Value_StructValue{StructValue: s}}, ok
	case c == '[':
		l := &structpb.ListValue{}
		ok := d.array(func() bool {
			v, ok := d.value()
			l.Values = append(l.Values, v)
			return ok
		})
		return &structpb.Value{Kind: &structpb.Value_ListValue{ListValue: l}}, ok
	case c == 't' || c == 'f':
		b, ok := d.boolField(true)
		return &structpb.Value{Kind: &structpb.Value_BoolValue{BoolValue: b}}, ok
	case c == 'n':
		return &structpb.Value{Kind: &structpb.Value_NullValue{}}, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		f, ok := d.number()
		return &structpb.Value{Kind: &structpb.Value_NumberValue{NumberValue: f}}, ok
	}
	return nil, false
}

// number reads a JSON number (RFC 8259's grammar) that strconv.ParseFloat holds without error.
func (d *fastDecoder) number() (float64, bool) {
	start, j := d.i, d.i
	digits := func() bool {
		k := j
		for j < len(d.data) && d.data[j] >= '0' && d.data[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < len(d.data) && d.data[j] == '-' {
		j++
	}
	switch {
	case j < len(d.data) && d.data[j] == '0':
		j++
	case !digits():
		return 0, false
	}
	if j < len(d.data) && d.data[j] == '.' {
		j++
		if !digits() {
			return 0, false
		}
	}
	if j < len(d.data) && (d.data[j] == 'e' || d.data[j] == 'E') {
		j++
		if j < len(d.data) && (d.data[j] == '+' || d.data[j] == '-') {
			j++
		}
		if !digits() {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(d.data[start:j]), 64)
	if err != nil {
		return 0, false
	}
	d.i = j
	return f, true
}
