package redact

import (
	"fmt"
	"strconv"
	"strings"
)

type segKind uint8

const (
	segLiteral  segKind = iota
	segAny              // *
	segAnyDepth         // **
)

// patternSeg is one segment of a configured path.
type patternSeg struct {
	kind  segKind
	lit   string
	index int // lit as an array index, or -1
}

// pathSeg is one segment of the walker's current position: a proto field (name and JSON name), an
// object key, or an array index.
type pathSeg struct {
	name, jsonName string
	index          int // >= 0 for array items
}

// String renders the segment in the path syntax.
func (s pathSeg) String() string {
	if s.index >= 0 {
		return strconv.Itoa(s.index)
	}
	return escapeKey(s.name)
}

// escapeKey writes a key so that the path reads back unambiguously.
func escapeKey(k string) string {
	if !strings.ContainsAny(k, `.*\`) {
		return k
	}
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if c := k[i]; c == '.' || c == '*' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(k[i])
	}
	return b.String()
}

// parsePath compiles one configured path.
func parsePath(p string) ([]patternSeg, error) {
	if p == "" {
		return nil, fmt.Errorf("empty path")
	}
	var (
		segs    []patternSeg
		cur     strings.Builder
		escaped bool // the current segment had an escape, so "*" in it is literal
	)
	flush := func() error {
		s := cur.String()
		if s == "" && !escaped {
			return fmt.Errorf("path %q has an empty segment", p)
		}
		ps := patternSeg{kind: segLiteral, lit: s, index: -1}
		switch {
		case !escaped && s == "*":
			ps.kind = segAny
		case !escaped && s == "**":
			ps.kind = segAnyDepth
		default:
			if n, err := strconv.Atoi(s); err == nil && n >= 0 && strconv.Itoa(n) == s {
				ps.index = n
			}
		}
		segs = append(segs, ps)
		cur.Reset()
		escaped = false
		return nil
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 == len(p) {
				return nil, fmt.Errorf("path %q ends with a lone backslash", p)
			}
			i++
			cur.WriteByte(p[i])
			escaped = true
		case '.':
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			cur.WriteByte(c)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return segs, nil
}

// matchPath reports whether the pattern matches the whole path.
func matchPath(pat []patternSeg, path []pathSeg) bool {
	for len(pat) > 0 {
		p := pat[0]
		if p.kind == segAnyDepth {
			rest := pat[1:]
			for i := 0; i <= len(path); i++ {
				if matchPath(rest, path[i:]) {
					return true
				}
			}
			return false
		}
		if len(path) == 0 || !p.matches(path[0]) {
			return false
		}
		pat, path = pat[1:], path[1:]
	}
	return len(path) == 0
}

func (p patternSeg) matches(s pathSeg) bool {
	switch {
	case p.kind == segAny:
		return true
	case s.index >= 0:
		return p.index == s.index
	default:
		return p.lit == s.name || (s.jsonName != "" && p.lit == s.jsonName)
	}
}

// minLen is the fewest path segments the pattern can match, to skip patterns cheaply.
func minLen(pat []patternSeg) int {
	n := 0
	for _, p := range pat {
		if p.kind != segAnyDepth {
			n++
		}
	}
	return n
}

// hasAnyDepth reports whether the pattern contains "**".
func hasAnyDepth(pat []patternSeg) bool {
	for _, p := range pat {
		if p.kind == segAnyDepth {
			return true
		}
	}
	return false
}

// joinPath renders a walker position in the path syntax.
func joinPath(path []pathSeg) string {
	var b strings.Builder
	for i, s := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.String())
	}
	return b.String()
}
