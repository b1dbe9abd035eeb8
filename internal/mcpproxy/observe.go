package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

// observeQueueLen bounds the observations waiting to be sent, in count (the bytes are bounded
// too).
const observeQueueLen = 1024

// observe records the server's answer to a decided call: tool.after, or tool.error for a
// JSON-RPC error or a result with isError. The event is built here, redacted and queued; it never
// delays the answer.
func (s *session) observe(p *pending, resp *jsonrpc.Response) {
	s.obs.enqueue(s.p.resultEvent(s.identity(), p.tool, resp))
}

// resultEvent is the observation of the answer resp to the call of tool.
func (p *Proxy) resultEvent(who identity, callTool *ahpv1.Tool, resp *jsonrpc.Response) *ahpv1.Event {
	cfg := &p.cfg
	tool := proto.Clone(callTool).(*ahpv1.Tool)
	typ := ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
	switch {
	case resp.Error != nil:
		typ = ahpv1.EventType_EVENT_TYPE_TOOL_ERROR
		tool.Error = &ahpv1.ToolError{Message: resp.Error.Error()}
		if we, ok := resp.Error.(*jsonrpc.Error); ok {
			tool.Error.Message = we.Message
			tool.Error.Code = structpb.NewNumberValue(float64(we.Code))
		}
	case len(resp.Result) > cfg.MaxOutputBytes:
		tool.Output = structpb.NewStringValue(fmt.Sprintf("[OMITTED: a %d-byte result, over the %d-byte observation limit]", len(resp.Result), cfg.MaxOutputBytes))
		if isErrorResult(resp.Result) {
			typ = ahpv1.EventType_EVENT_TYPE_TOOL_ERROR
			tool.Error = &ahpv1.ToolError{Message: "the tool reported an error"}
		}
	default:
		var v any
		if json.Unmarshal(resp.Result, &v) == nil {
			tool.Output, _ = structpb.NewValue(v)
		}
		if m, ok := v.(map[string]any); ok && m["isError"] == true {
			typ = ahpv1.EventType_EVENT_TYPE_TOOL_ERROR
			tool.Error = &ahpv1.ToolError{Message: firstText(m)}
		}
	}
	ev := who.newEvent(cfg.NewID(), typ, cfg.Now(), tool)
	ev, _ = cfg.Redactor.Event(ev)
	if ev.GetTool().GetError() != nil && ev.GetTool().GetError().GetMessage() == "" {
		ev.Tool.Error.Message = "the tool reported an error"
	}
	return ev
}

// isErrorResult reads only whether a result says isError, without building its values.
func isErrorResult(result json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}

// firstText is the first text item of a tool result, the error's message.
func firstText(result map[string]any) string {
	content, _ := result["content"].([]any)
	for _, c := range content {
		if item, ok := c.(map[string]any); ok && item["type"] == "text" {
			if t, ok := item["text"].(string); ok {
				return limitString(t, 1024)
			}
		}
	}
	return ""
}

// observer sends observations one at a time from a queue bounded in count and bytes. When the
// queue is full an observation is dropped and counted, and that is logged: the answer to the
// client never waits for the record.
type observer struct {
	client   ahpv1connect.ObservationServiceClient
	enabled  bool
	timeout  time.Duration
	log      *slog.Logger
	maxBytes int

	ch   chan queued
	done chan struct{}

	mu      sync.Mutex
	bytes   int
	closed  bool
	dropped int
}

type queued struct {
	ev   *ahpv1.Event
	size int
}

func newObserver(c ahpv1connect.ObservationServiceClient, enabled bool, timeout time.Duration, maxBytes int, log *slog.Logger) *observer {
	return &observer{client: c, enabled: enabled, timeout: timeout, maxBytes: maxBytes, log: log,
		ch: make(chan queued, observeQueueLen), done: make(chan struct{})}
}

func (o *observer) enqueue(ev *ahpv1.Event) {
	if !o.enabled {
		return
	}
	size := proto.Size(ev)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	if o.bytes+size > o.maxBytes {
		o.drop("queue bytes")
		return
	}
	select {
	case o.ch <- queued{ev, size}:
		o.bytes += size
	default:
		o.drop("queue length")
	}
}

// drop counts a dropped observation; called with mu held.
func (o *observer) drop(why string) {
	o.dropped++
	if o.dropped == 1 || o.dropped%100 == 0 {
		o.log.Warn("observation queue full; tool results not recorded", "limit", why, "dropped_total", o.dropped)
	}
}

func (o *observer) run() {
	defer close(o.done)
	for q := range o.ch {
		o.mu.Lock()
		o.bytes -= q.size
		o.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		_, err := o.client.Observe(ctx, connect.NewRequest(&ahpv1.ObserveRequest{Event: q.ev}))
		cancel()
		if err != nil {
			o.log.Warn("tool result not recorded by the policy backend", "event_type", q.ev.GetType().String(), "failure", classify(ctx, err), "error", err.Error())
		}
	}
}

// close stops taking observations and waits up to wait plus one call's timeout for the queued
// ones to be sent.
func (o *observer) close(wait time.Duration) {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		close(o.ch)
	}
	o.mu.Unlock()
	t := time.NewTimer(wait + o.timeout)
	defer t.Stop()
	select {
	case <-o.done:
	case <-t.C:
		o.log.Warn("stopped before every tool result was recorded")
	}
}
