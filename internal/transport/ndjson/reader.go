// Package ndjson frames JSON-RPC messages as newline-delimited JSON, the framing of both AHP stdio
// bindings and of the bridge's Unix socket: one compact JSON object per line, each line ended by
// "\n". Serve runs one such stream against a bridge.Handler.
//
// The framing only splits at "\n". Blank lines (JSON whitespace only) are skipped, and a last
// line without "\n" at end of input is still a message. Everything else goes to the Handler as
// is, garbage and invalid UTF-8 included, and so does a "\r" before the "\n": it is JSON
// whitespace, and whether a CRLF line is acceptable is the dialect's call (the Agent Hooks stdio
// binding forbids any CR; the Harness reference reads lines the way Rust's lines() does, which
// drops it). A line over the size limit is consumed and reported as an *OversizeError; the stream
// goes on with the next line.
package ndjson

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/ahp-gateway/ahp/internal/transport"
)

// readBufferSize is the bufio buffer: big enough that typical messages are read in one piece,
// small enough not to matter per Unix socket connection.
const readBufferSize = 64 << 10

// OversizeError reports a line longer than the limit. The line has been consumed.
type OversizeError struct {
	// Limit is the size limit in bytes.
	Limit int
	// Head is the first Limit bytes of the line, enough to find its id (transport.OversizeReply).
	Head []byte
}

// Error implements error.
func (e *OversizeError) Error() string {
	return fmt.Sprintf("ndjson: line is over the %d-byte limit", e.Limit)
}

// Reader splits a byte stream into messages, one per line.
type Reader struct {
	br    *bufio.Reader
	limit int
	buf   []byte // a line that spans several bufio chunks
}

// NewReader returns a Reader of messages of at most limit bytes (terminator excluded);
// limit <= 0 means transport.DefaultMaxMessageBytes.
func NewReader(r io.Reader, limit int) *Reader {
	if limit <= 0 {
		limit = transport.DefaultMaxMessageBytes
	}
	return &Reader{br: bufio.NewReaderSize(r, min(readBufferSize, limit+1)), limit: limit}
}

// Next returns the next message: a non-blank line without its "\n", in a new slice the caller
// owns. It returns an *OversizeError for a line over the limit (call Next again for the
// next line), io.EOF at the end of input, and any other read error as is.
func (r *Reader) Next() ([]byte, error) {
	for {
		line, err := r.line()
		if err != nil {
			return nil, err
		}
		if !blank(line) {
			return line, nil
		}
	}
}

// line reads one line. The common case, a line inside the bufio buffer, is copied once.
func (r *Reader) line() ([]byte, error) {
	r.buf = r.buf[:0]
	over := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !over {
			// +1 leaves room for the "\n" that is not part of the message.
			if room := r.limit + 1 - len(r.buf); len(chunk) > room {
				r.buf = append(r.buf, chunk[:min(len(chunk), max(0, r.limit-len(r.buf)))]...)
				over = true
			} else if err == nil && len(r.buf) == 0 {
				return r.finish(bytes.Clone(chunk[:len(chunk)-1]))
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if over {
				return nil, r.oversize()
			}
			return r.finish(bytes.Clone(r.buf[:len(r.buf)-1]))
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if over {
				return nil, r.oversize()
			}
			if len(r.buf) == 0 {
				return nil, io.EOF
			}
			// An unterminated last line is still a message; the next call returns io.EOF.
			return r.finish(bytes.Clone(r.buf))
		default:
			return nil, err
		}
	}
}

// finish enforces the limit on a whole line (the last one may lack its "\n").
func (r *Reader) finish(line []byte) ([]byte, error) {
	if len(line) > r.limit {
		r.buf = append(r.buf[:0], line[:r.limit]...)
		return nil, r.oversize()
	}
	return line, nil
}

func (r *Reader) oversize() error {
	head := bytes.Clone(r.buf[:min(len(r.buf), r.limit)])
	// A huge line leaves a huge buffer behind; do not keep it for the rest of the stream.
	if cap(r.buf) > readBufferSize {
		r.buf = nil
	}
	return &OversizeError{Limit: r.limit, Head: head}
}

// blank reports whether line holds only JSON whitespace.
func blank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
