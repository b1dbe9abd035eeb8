package jsonwire

import "strings"

// IsDateTime reports whether s is an RFC 3339 date-time (section 5.6): full-date "T"
// full-time, with "T" and "Z" case-insensitive, an optional fraction and a Z or ±hh:mm offset.
// time.Parse is not used because it accepts forms RFC 3339 does not (and rejects second 60).
func IsDateTime(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	second, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return false
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 60 {
		return false
	}
	rest := s[19:]
	if rest != "" && rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		rest = rest[i:]
	}
	if rest == "Z" || rest == "z" {
		return true
	}
	if len(rest) != len("+00:00") || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return false
	}
	oh, ok1 := digits(rest[1:3])
	om, ok2 := digits(rest[4:6])
	return ok1 && ok2 && oh <= 23 && om <= 59
}

// digits reads a run of ASCII digits.
func digits(s string) (int, bool) {
	v := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// IsURI reports whether s is an absolute URI in the sense of RFC 3986 (JSON Schema "uri"): a
// scheme, then only URI characters and well-formed percent escapes, with at most one fragment.
func IsURI(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 {
		return false
	}
	for i, c := range []byte(s[:colon]) {
		alpha := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	rest := s[colon+1:]
	if strings.Count(rest, "#") > 1 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '%' {
			if i+2 >= len(rest) || !isHex(rest[i+1]) || !isHex(rest[i+2]) {
				return false
			}
			i += 2
			continue
		}
		if !isURIChar(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isURIChar reports whether c is an RFC 3986 unreserved or reserved character.
func isURIChar(c byte) bool {
	if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0
}
