package hooks

import "bytes"

// CheckStdioLine checks the Agent Hooks Protocol stdio framing of one message as an NDJSON
// transport delivers it, its line terminator removed: one line, with no LF or CR anywhere and
// something on it. A pretty-printed (multi-line) message fails. Failures map to -32700 through
// ErrorResponse. The JSON itself is DecodeMessage's to check, and whether a badly framed message
// is answered at all (notifications never are) the caller's.
func CheckStdioLine(line []byte) error {
	switch {
	case bytes.IndexByte(line, '\n') >= 0:
		return unparsable("", "stdio message must be exactly one line; a message must not contain a literal newline")
	case bytes.IndexByte(line, '\r') >= 0:
		return unparsable("", "stdio message must not contain a carriage return")
	case len(bytes.TrimSpace(line)) == 0:
		return unparsable("", "stdio message is empty")
	}
	return nil
}
