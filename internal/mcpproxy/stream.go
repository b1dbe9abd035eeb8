package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Conn is one side of the relay: a JSON-RPC connection carrying MCP messages. The SDK's
// mcp.Connection satisfies it, and so does NewStream's line-delimited stream.
//
// Read may return a *TooLargeError or a *MalformedError and still be read again; any other error
// ends the connection.
type Conn interface {
	Read(context.Context) (jsonrpc.Message, error)
	Write(context.Context, jsonrpc.Message) error
	Close() error
}

// TooLargeError is a message refused for its size. The stream goes on after it.
type TooLargeError struct {
	// Limit is the size limit in bytes.
	Limit int
	// ID is the JSON-RPC id of the refused request or response, when it could be read from the
	// message's start; HasID says whether it could.
	ID    jsonrpc.ID
	HasID bool
	// Request says the message had a method (a request or a notification), as far as could be
	// read.
	Request bool
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("MCP message over the %d-byte limit", e.Limit)
}

// MalformedError is a line that is not one JSON-RPC message. The stream goes on after it.
type MalformedError struct{ Err error }

func (e *MalformedError) Error() string { return "not a JSON-RPC message: " + e.Err.Error() }
func (e *MalformedError) Unwrap() error { return e.Err }

// peekBytes is how much of a refused message is kept to find its id.
const peekBytes = 4 << 10

// stream is the MCP stdio framing: one JSON-RPC message per line, no embedded newlines (the
// MCP stdio transport's rule), decoded and encoded by the SDK's jsonrpc package. Unlike the SDK's
// own stdio connection, a line over the limit is refused and skipped instead of ending the
// stream, so that one huge message does not take the session down.
type stream struct {
	r     *bufio.Reader
	limit int
	rmu   sync.Mutex

	w   io.Writer
	wmu sync.Mutex

	closeOnce sync.Once
	close     func() error
	closed    chan struct{}
}

// NewStream frames MCP messages over r and w, each inbound message at most limit bytes. close,
// when not nil, is called once by Close (e.g. to close the pipes).
func NewStream(r io.Reader, w io.Writer, limit int, close func() error) Conn {
	return &stream{r: bufio.NewReaderSize(r, 64<<10), limit: limit, w: w, close: close, closed: make(chan struct{})}
}

// Read returns the next message. It blocks in the underlying reader; Close unblocks it only if
// closing the reader does (pipes do, a terminal's stdin does not).
func (s *stream) Read(ctx context.Context) (jsonrpc.Message, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return nil, &MalformedError{Err: err}
		}
		return msg, nil
	}
}

// readLine reads one line without its newline. A line over the limit is consumed to its end and
// reported as a *TooLargeError; its first bytes are kept to find the id.
func (s *stream) readLine() ([]byte, error) {
	var line []byte
	over := false
	for {
		chunk, err := s.r.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > s.limit+1 { // +1: the newline does not count
				over = true
				keep := min(peekBytes-len(line), len(chunk))
				if keep > 0 {
					line = append(line, chunk[:keep]...)
				}
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			if over {
				return nil, tooLarge(line, s.limit)
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if over && len(line) < peekBytes {
				line = append(line, chunk[:min(peekBytes-len(line), len(chunk))]...)
			}
			continue
		case errors.Is(err, io.EOF) && len(line) > 0 && !over:
			return line, nil // a last message without its newline
		default:
			select {
			case <-s.closed:
				return nil, io.EOF
			default:
			}
			return nil, err
		}
	}
}

// tooLarge reads what it can of a refused message's start: its id, and whether it has a method.
// Members are read in order until the prefix ends; an id after a long params or result is not
// found.
func tooLarge(prefix []byte, limit int) *TooLargeError {
	e := &TooLargeError{Limit: limit}
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return e
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return e
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return e
		}
		switch key {
		case "id":
			// MakeID takes what encoding/json gives: float64 or string.
			var v any
			if json.Unmarshal(raw, &v) != nil {
				continue
			}
			if id, err := jsonrpc.MakeID(v); err == nil && id.IsValid() {
				e.ID, e.HasID = id, true
			}
		case "method":
			e.Request = true
		}
	}
	return e
}

// Write sends one message as one line.
func (s *stream) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	select {
	case <-s.closed:
		return io.ErrClosedPipe
	default:
	}
	_, err = s.w.Write(data)
	return err
}

// Close closes the stream once.
func (s *stream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		if s.close != nil {
			err = s.close()
		}
	})
	return err
}
