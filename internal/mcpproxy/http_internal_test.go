package mcpproxy

import (
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestWatchedBodyFindsTheAnswer reads answers as the target may send them: JSON, or an event
// stream with notifications first, CRLF line ends, data split over lines, tiny reads.
func TestWatchedBodyFindsTheAnswer(t *testing.T) {
	t.Parallel()
	id, _ := jsonrpc.MakeID(float64(5))
	resp := `{"jsonrpc":"2.0","id":5,"result":{"content":[],"isError":false}}`
	for _, c := range []struct {
		name, body string
		sse        bool
		limit      int
		want       bool
	}{
		{"json", resp, false, 1 << 20, true},
		{"json over the limit", resp, false, 10, false},
		{"event stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\nid: 2\ndata: " + resp + "\n\n", true, 1 << 20, true},
		{"crlf and split data", "data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":5,\"result\":{}}\r\n\r\n", true, 1 << 20, true},
		{"last event without a blank line", "data: " + resp, true, 1 << 20, true},
		{"another id", "data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n", true, 1 << 20, false},
		{"event over the limit", "data: " + resp + "\n\n", true, 20, false},
	} {
		var got *jsonrpc.Response
		b := &watchedBody{ReadCloser: io.NopCloser(&oneByteReader{strings.NewReader(c.body)}), w: &watch{id: id, onAnswer: func(r *jsonrpc.Response) { got = r }}, sse: c.sse, limit: c.limit}
		passed, err := io.ReadAll(b)
		if err != nil || string(passed) != c.body {
			t.Errorf("%s: the body did not pass through unchanged: %v", c.name, err)
		}
		if (got != nil) != c.want {
			t.Errorf("%s: found %v, want %v", c.name, got != nil, c.want)
		}
	}
}

// oneByteReader returns one byte per Read.
type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestLoopbackHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost:8790": true, "127.0.0.1:1": true, "[::1]:80": true, "LOCALHOST": true, "127.0.0.2": true,
		"attacker.example": false, "10.0.0.1:80": false, "localhost.attacker.example": false, "": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("%q: %v, want %v", host, got, want)
		}
	}
}
