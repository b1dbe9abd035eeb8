package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// leanJSONWatchCodec is the console watchers' codec: Connect's JSON on the wire, as the web
// console's page speaks it, but a WatchResponse is not decoded in full. A browser elsewhere would
// parse every item; the load tool only has to check each one, and its decoding runs on the
// server's cores. It scans the message once and keeps the fields the checks use — the time, the
// decision's verdict, and the event's id, type, session id and tool kind — skipping every other
// value without building anything. The scan still rejects what is not one JSON object. Everything
// else (the Watch request, errors) goes through protojson.
type leanJSONWatchCodec struct{}

func (leanJSONWatchCodec) Name() string { return "json" }

func (leanJSONWatchCodec) Marshal(m any) ([]byte, error) {
	msg, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a protobuf message", m)
	}
	return protojson.Marshal(msg)
}

func (leanJSONWatchCodec) Unmarshal(b []byte, m any) error {
	if resp, ok := m.(*ahpv1.WatchResponse); ok {
		return scanWatchResponse(b, resp)
	}
	msg, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a protobuf message", m)
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, msg)
}

// scanWatchResponse fills resp with the fields the watchers check from the protojson message b.
func scanWatchResponse(b []byte, resp *ahpv1.WatchResponse) error {
	s := &jsonScan{b: b}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "time":
			v, err := s.str()
			resp.Time = v
			return err
		case "decision":
			if s.null() {
				return nil
			}
			d := &ahpv1.Decision{}
			resp.Decision = d
			return s.object(func(key []byte) error {
				if string(key) != "verdict" {
					return s.skip()
				}
				v, err := s.enum(ahpv1.Verdict_value)
				d.Verdict = ahpv1.Verdict(v)
				return err
			})
		case "event":
			if s.null() {
				return nil
			}
			ev := &ahpv1.Event{}
			resp.Event = ev
			return s.object(func(key []byte) error {
				switch string(key) {
				case "id":
					v, err := s.str()
					ev.Id = v
					return err
				case "type":
					v, err := s.enum(ahpv1.EventType_value)
					ev.Type = ahpv1.EventType(v)
					return err
				case "session":
					if s.null() {
						return nil
					}
					ev.Session = &ahpv1.Session{}
					return s.object(func(key []byte) error {
						if string(key) != "id" {
							return s.skip()
						}
						v, err := s.str()
						ev.Session.Id = v
						return err
					})
				case "tool":
					if s.null() {
						return nil
					}
					ev.Tool = &ahpv1.Tool{}
					return s.object(func(key []byte) error {
						if string(key) != "kind" {
							return s.skip()
						}
						v, err := s.enum(ahpv1.ToolKind_value)
						ev.Tool.Kind = ahpv1.ToolKind(v)
						return err
					})
				}
				return s.skip()
			})
		}
		return s.skip()
	})
	if err != nil {
		return err
	}
	if s.space(); s.i != len(s.b) {
		return s.fail("data after the message")
	}
	return nil
}

// jsonScan reads JSON from b at i without building values.
type jsonScan struct {
	b []byte
	i int
}

var errJSONEnd = errors.New("watch item: JSON ends early")

func (s *jsonScan) fail(what string) error {
	return fmt.Errorf("watch item: invalid JSON at offset %d: %s", s.i, what)
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// null consumes a null, if that is what comes next (protojson writes null for an unset message
// when asked to emit unpopulated fields).
func (s *jsonScan) null() bool {
	s.space()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// expect consumes c after white space.
func (s *jsonScan) expect(c byte) error {
	s.space()
	if s.i >= len(s.b) {
		return errJSONEnd
	}
	if s.b[s.i] != c {
		return s.fail(fmt.Sprintf("want %q", c))
	}
	s.i++
	return nil
}

// object reads an object, calling member for each key with the scanner at its value, which
// member must consume.
func (s *jsonScan) object(member func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		start, end, _, err := s.stringSpan()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		// Keys are compared as written: the ones looked for contain no escapes.
		if err := member(s.b[start:end]); err != nil {
			return err
		}
		s.space()
		if s.i >= len(s.b) {
			return errJSONEnd
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("want , or } in an object")
		}
	}
}

// stringSpan consumes a string and returns the bounds of its contents and whether it holds
// escapes.
func (s *jsonScan) stringSpan() (start, end int, escaped bool, err error) {
	if err := s.expect('"'); err != nil {
		return 0, 0, false, err
	}
	start = s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return start, s.i - 1, escaped, nil
		case c == '\\':
			escaped = true
			s.i += 2
		case c < 0x20:
			return 0, 0, false, s.fail("control character in a string")
		default:
			s.i++
		}
	}
	return 0, 0, false, errJSONEnd
}

// str reads a string value.
func (s *jsonScan) str() (string, error) {
	start, end, escaped, err := s.stringSpan()
	if err != nil {
		return "", err
	}
	if !escaped {
		return string(s.b[start:end]), nil
	}
	var v string
	if err := json.Unmarshal(s.b[start-1:end+1], &v); err != nil {
		return "", s.fail("bad escape in a string")
	}
	return v, nil
}

// enum reads an enum as protojson writes it: its name, or its number when it has none.
func (s *jsonScan) enum(values map[string]int32) (int32, error) {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '"' {
		name, err := s.str()
		if err != nil {
			return 0, err
		}
		v, ok := values[name]
		if !ok {
			return 0, s.fail("unknown enum value")
		}
		return v, nil
	}
	start := s.i
	if err := s.skip(); err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 32)
	if err != nil {
		return 0, s.fail("an enum is neither a name nor a number")
	}
	return int32(n), nil
}

// skip consumes one value of any kind. Numbers and the literals are taken as the run of
// characters up to the next delimiter and checked only for being one of the literals or
// starting like a number.
func (s *jsonScan) skip() error {
	s.space()
	if s.i >= len(s.b) {
		return errJSONEnd
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, _, err := s.stringSpan()
		return err
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		s.i++
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.skip(); err != nil {
				return err
			}
			s.space()
			if s.i >= len(s.b) {
				return errJSONEnd
			}
			switch s.b[s.i] {
			case ',':
				s.i++
			case ']':
				s.i++
				return nil
			default:
				return s.fail("want , or ] in an array")
			}
		}
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				goto done
			}
			s.i++
		}
	done:
		switch lit := string(s.b[start:s.i]); {
		case lit == "true", lit == "false", lit == "null":
			return nil
		case lit != "" && (lit[0] == '-' || lit[0] >= '0' && lit[0] <= '9'):
			return nil
		}
		return s.fail("not a JSON value")
	}
}
