package jsonwire

import (
	"encoding/json"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the fast path of hooks.parseJSON: one pass over the bytes that builds the same
// generic values as encoding/json with UseNumber (map[string]any, []any, string, json.Number,
// bool, nil) and notes the first object key that repeats, in document order, as
// checkDuplicateKeys does.
//
// It only ever answers for documents it accepts. Anything it does not accept (a syntax error,
// invalid UTF-8, nesting deeper than jsonParseMaxDepth) sends the caller back to the slow path,
// which produces the exact error text, so this parser may be stricter than encoding/json but never
// more lenient. FuzzJSONParseMatchesStd holds it to that.

// jsonParseMaxDepth bounds nesting. encoding/json refuses documents nested deeper than 10000;
// stopping well before that keeps the recursion shallow, and deeper documents take the slow path.
const maxDepth = 1000

// jsonDupCheckLinear is the object size up to which repeated keys are found by a linear scan of the
// keys read so far; larger objects get a set.
const dupCheckLinear = 16

// jsonMember is one object member read but not yet stored in its map.
type member struct {
	key string
	val any
}

// jsonSegment is one step of the path to the value being parsed: a key of an object or an index
// of an array. Only a repeated key turns the path into a string.
type segment struct {
	key   string
	index int
	array bool
}

type parser struct {
	data  []byte
	pos   int
	depth int
	// members holds the members of every object still open, innermost last; an object's map is
	// built once its size is known.
	members []member
	// items does the same for arrays.
	items []any
	path  []segment
	// dupPath is the path of the first repeated key; dup says whether there is one.
	dupPath string
	dup     bool
}

// jsonParseFast parses data as one JSON document. ok is false when the document is not accepted;
// otherwise v is the decoded value and dup, dupPath name the first repeated key, if any (the
// value then holds the last of the repeated members, as encoding/json keeps it).
func parseFast(data []byte) (v any, dupPath string, dup, ok bool) {
	p := parsers.Get().(*parser)
	defer p.release()
	p.data = data
	p.skipSpace()
	v, ok = p.value()
	if !ok {
		return nil, "", false, false
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, "", false, false
	}
	return v, p.dupPath, p.dup, true
}

// parsers keeps parsers between calls so that their scratch stacks (members, items, path), which
// every document with objects needs, are not allocated and grown again for each message.
var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxKeptScratch bounds each scratch stack a pooled parser keeps (in entries; a member is 32
// bytes): a rare huge or deeply nested document does not pin its scratch space.
const maxKeptScratch = 256

// release clears what p refers to and returns it to the pool. A parse that failed half way
// leaves members and items on the stacks; they are dropped here so nothing parsed stays alive.
func (p *parser) release() {
	clear(p.members)
	clear(p.items)
	clear(p.path)
	members, items, path := p.members[:0], p.items[:0], p.path[:0]
	if cap(members) > maxKeptScratch {
		members = nil
	}
	if cap(items) > maxKeptScratch {
		items = nil
	}
	if cap(path) > maxKeptScratch {
		path = nil
	}
	*p = parser{members: members, items: items, path: path}
	parsers.Put(p)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (any, bool) {
	if p.pos >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		if v, ok := p.knownValue(); ok {
			return v, true
		}
		s, ok := p.string(false)
		if !ok {
			return nil, false
		}
		return s, true
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return false
	}
	p.pos += len(word)
	return true
}

func (p *parser) object() (any, bool) {
	if p.depth++; p.depth > maxDepth {
		return nil, false
	}
	p.pos++ // '{'
	start := len(p.members)
	var seen map[string]struct{} // keys of a large object, for the repeated-key check
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return map[string]any{}, true
	}
	p.path = append(p.path, segment{})
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, false
		}
		key, ok := p.string(true)
		if !ok {
			return nil, false
		}
		if !p.dup {
			seen = p.checkKey(key, p.members[start:], seen)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, false
		}
		p.pos++
		p.skipSpace()
		p.path[len(p.path)-1] = segment{key: key}
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		p.members = append(p.members, member{key, v})
		if more, ok := p.next('}'); !ok {
			return nil, false
		} else if !more {
			break
		}
	}
	p.path = p.path[:len(p.path)-1]
	p.depth--
	members := p.members[start:]
	m := make(map[string]any, len(members))
	for _, mb := range members {
		m[mb.key] = mb.val // a repeated key keeps its last value, as in encoding/json
	}
	clear(members) // drop the references the scratch space would otherwise keep alive
	p.members = p.members[:start]
	return m, true
}

// checkKey records key as a repeat when an earlier member of the same object has it. seen is the
// set of the object's keys once it has grown past jsonDupCheckLinear members.
func (p *parser) checkKey(key string, before []member, seen map[string]struct{}) map[string]struct{} {
	repeated := false
	if seen == nil && len(before) < dupCheckLinear {
		for _, mb := range before {
			if mb.key == key {
				repeated = true
				break
			}
		}
	} else {
		if seen == nil {
			seen = make(map[string]struct{}, 2*len(before))
			for _, mb := range before {
				seen[mb.key] = struct{}{}
			}
		}
		_, repeated = seen[key]
		seen[key] = struct{}{}
	}
	if repeated {
		p.dup = true
		p.dupPath = JoinPath(p.parentPath(), key)
	}
	return seen
}

// parentPath is the path of the object being parsed, spelt as checkDuplicateKeys spells it.
func (p *parser) parentPath() string {
	path := ""
	for _, s := range p.path[:len(p.path)-1] {
		if s.array {
			path = IndexPath(path, s.index)
		} else {
			path = JoinPath(path, s.key)
		}
	}
	return path
}

// next reads what follows an element of an object or array: a comma (more is true, and the
// parser stands at the next element) or the closing byte (more is false, and the parser stands
// after it). Anything else, or the end of the input, is not JSON.
func (p *parser) next(closing byte) (more, ok bool) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, false
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		p.skipSpace()
		return true, true
	case closing:
		p.pos++
		return false, true
	}
	return false, false
}

func (p *parser) array() (any, bool) {
	if p.depth++; p.depth > maxDepth {
		return nil, false
	}
	p.pos++ // '['
	start := len(p.items)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return []any{}, true // encoding/json gives an empty, non-nil slice
	}
	p.path = append(p.path, segment{array: true})
	for i := 0; ; i++ {
		p.path[len(p.path)-1].index = i
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		p.items = append(p.items, v)
		if more, ok := p.next(']'); !ok {
			return nil, false
		} else if !more {
			break
		}
	}
	p.path = p.path[:len(p.path)-1]
	p.depth--
	list := make([]any, len(p.items)-start)
	copy(list, p.items[start:])
	clear(p.items[start:])
	p.items = p.items[:start]
	return list, true
}

// number reads a number, keeping its text.
func (p *parser) number() (any, bool) {
	end := numberEnd(p.data, p.pos)
	if end < 0 {
		return nil, false
	}
	n := json.Number(p.data[p.pos:end])
	p.pos = end
	return n, true
}

// string reads a string token, p.pos at its opening quote. Keys the protocol defines come back as
// constants, so the common members cost no allocation.
func (p *parser) string(isKey bool) (string, bool) {
	d := p.data
	start := p.pos + 1
	i := start
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			p.pos = i + 1
			raw := d[start:i]
			if isKey {
				if k, ok := knownKey(raw); ok {
					return k, true
				}
			}
			return string(raw), true
		case c == '\\':
			return p.escapedString(start, i)
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			i += size
		}
	}
	return "", false
}

// escapedString finishes a string that holds an escape at esc, decoding it exactly as
// encoding/json does: a lone or mismatched UTF-16 surrogate becomes U+FFFD.
func (p *parser) escapedString(start, esc int) (string, bool) {
	d := p.data
	buf := make([]byte, 0, esc-start+16)
	buf = append(buf, d[start:esc]...)
	i := esc
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return string(buf), true
		case c == '\\':
			if i+1 >= len(d) {
				return "", false
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r := hex4(d[i+2:])
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// Only a \u escape right after it can complete the pair.
					if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						if r2 := hex4(d[i+2:]); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								buf = utf8.AppendRune(buf, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			buf = append(buf, d[i:i+size]...)
			i += size
		}
	}
	return "", false
}

// jsonHex4 reads the four hex digits of a \u escape; -1 when they are not there.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// knownValue reads a string token that is one of the fixed values every Agent Hooks message
// carries. A constant string in an interface needs no allocation, where a string read from the
// input needs two (its bytes and the interface box).
func (p *parser) knownValue() (any, bool) {
	d := p.data[p.pos+1:]
	end := 0
	for end < len(d) && end < 24 && d[end] != '"' && d[end] != '\\' {
		end++
	}
	if end >= len(d) || d[end] != '"' {
		return nil, false
	}
	var v any
	switch string(d[:end]) {
	case "2.0":
		v = "2.0"
	case "0.1":
		v = "0.1"
	case "hooks/intercept":
		v = "hooks/intercept"
	case "hooks/observe":
		v = "hooks/observe"
	case "tool.before":
		v = "tool.before"
	case "tool.after":
		v = "tool.after"
	case "deny":
		v = "deny"
	default:
		return nil, false
	}
	p.pos += end + 2
	return v, true
}

// jsonKnownKey returns the member names of the Agent Hooks messages as constants. The switch on
// string(raw) does not allocate.
func knownKey(raw []byte) (string, bool) {
	switch string(raw) {
	case "jsonrpc":
		return "jsonrpc", true
	case "id":
		return "id", true
	case "method":
		return "method", true
	case "params":
		return "params", true
	case "result":
		return "result", true
	case "error":
		return "error", true
	case "protocolVersion":
		return "protocolVersion", true
	case "event":
		return "event", true
	case "source":
		return "source", true
	case "type":
		return "type", true
	case "time":
		return "time", true
	case "session":
		return "session", true
	case "cwd":
		return "cwd", true
	case "workspaceRoots":
		return "workspaceRoots", true
	case "model":
		return "model", true
	case "agent":
		return "agent", true
	case "tool":
		return "tool", true
	case "callId":
		return "callId", true
	case "name":
		return "name", true
	case "kind":
		return "kind", true
	case "input":
		return "input", true
	case "output":
		return "output", true
	case "mcp":
		return "mcp", true
	case "server":
		return "server", true
	case "native":
		return "native", true
	case "provider":
		return "provider", true
	case "eventName":
		return "eventName", true
	case "payload":
		return "payload", true
	case "extensions":
		return "extensions", true
	case "capabilities":
		return "capabilities", true
	case "effects":
		return "effects", true
	case "state":
		return "state", true
	case "outcome":
		return "outcome", true
	case "message":
		return "message", true
	case "code":
		return "code", true
	case "data":
		return "data", true
	case "reason":
		return "reason", true
	case "command":
		return "command", true
	}
	return "", false
}
