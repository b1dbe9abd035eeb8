package hooks

import "bytes"

// CheckStdioFraming checks the Agent Hooks Protocol stdio framing of one message as read from
// the stream, terminator included: exactly one line, ended by a single LF, with no CR anywhere and
// something on it. A pretty-printed (multi-line) message fails. Failures map to -32700 through
// errorCode. The JSON itself is checked by DecodeMessage.
func CheckStdioFraming(frame []byte) error {
	switch {
	case len(frame) == 0 || frame[len(frame)-1] != '\n':
		return unparsable("", "stdio message must end with a line feed")
	case bytes.IndexByte(frame, '\n') != len(frame)-1:
		return unparsable("", "stdio message must be exactly one line; a message must not contain a literal newline")
	case bytes.IndexByte(frame, '\r') >= 0:
		return unparsable("", "stdio message must not contain a carriage return")
	case len(bytes.TrimSpace(frame)) == 0:
		return unparsable("", "stdio message is empty")
	}
	return nil
}
