package ndjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// ErrMalformedReply is returned for a reply that is not one line of JSON. Nothing is written:
// a line the peer cannot parse is worse than no answer (a harness may stop a backend that emits
// malformed output).
var ErrMalformedReply = errors.New("ndjson: reply is not a single line of JSON")

// maxKeptBuffer caps the write buffer kept between writes, so one huge reply does not pin memory.
const maxKeptBuffer = 1 << 20

// Writer writes messages one per line. It is safe for concurrent use: lines never interleave.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteMessage writes msg followed by "\n" in a single Write. A msg holding a raw CR or LF (only
// possible as insignificant whitespace in valid JSON) is compacted first; one that is not valid
// JSON then gets ErrMalformedReply. After a write error every later call returns that error.
func (w *Writer) WriteMessage(msg []byte) error {
	if bytes.ContainsAny(msg, "\r\n") {
		var compact bytes.Buffer
		if err := json.Compact(&compact, msg); err != nil {
			return ErrMalformedReply
		}
		msg = compact.Bytes()
	}
	if len(msg) == 0 {
		return ErrMalformedReply
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	// One Write per line: msg may belong to the Handler, so it is copied rather than appended to.
	w.buf = append(append(w.buf[:0], msg...), '\n')
	_, w.err = w.w.Write(w.buf)
	if cap(w.buf) > maxKeptBuffer {
		w.buf = nil
	}
	return w.err
}
