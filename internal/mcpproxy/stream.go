package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
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

// stream is the MCP stdio framing: one JSON-RPC message per line (the MCP stdio transport's
// rule), split and written by the project's NDJSON framing (internal/transport/ndjson) and decoded
// and encoded by the SDK's jsonrpc package. Unlike the SDK's own stdio connection, a line over the
// limit is refused and skipped instead of ending the stream, so that one huge message does not take
// the session down.
type stream struct {
	r     *ndjson.Reader
	limit int
	rmu   sync.Mutex

	w *ndjson.Writer

	closeOnce sync.Once
	close     func() error
	closed    chan struct{}
}

// NewStream frames MCP messages over r and w, each inbound message at most limit bytes. close,
// when not nil, is called once by Close (e.g. to close the pipes).
func NewStream(r io.Reader, w io.Writer, limit int, close func() error) Conn {
	return &stream{r: ndjson.NewReader(r, limit), limit: limit, w: ndjson.NewWriter(w), close: close, closed: make(chan struct{})}
}

// Read returns the next message. It blocks in the underlying reader; Close unblocks it only if
// closing the reader does (pipes do, a terminal's stdin does not).
func (s *stream) Read(ctx context.Context) (jsonrpc.Message, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	line, err := s.r.Next()
	if err != nil {
		var over *ndjson.OversizeError
		if errors.As(err, &over) {
			return nil, tooLarge(over.Head[:min(len(over.Head), peekBytes)], s.limit)
		}
		select {
		case <-s.closed:
			return nil, io.EOF
		default:
		}
		return nil, err
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, &MalformedError{Err: err}
	}
	return msg, nil
}

// peekBytes is how much of a refused message is read to find its id.
const peekBytes = 4 << 10

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
	select {
	case <-s.closed:
		return io.ErrClosedPipe
	default:
	}
	return s.w.WriteMessage(data)
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
