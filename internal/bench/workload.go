package bench

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// Commands are the shell commands of the generated events, taken in turn: request n runs
// Commands[n%2]. The server's default policy (and BuiltinPolicy) allows the first and denies the
// second, so every answer can be checked.
var Commands = [2]string{"ls -la", "rm -rf /"}

// MaxPayloadBytes bounds --payload-bytes, well under the server's 4 MiB message limit.
const MaxPayloadBytes = 1 << 20

// source is the event source of every generated event: a URI, as the Agent Hooks Protocol wants.
const source = "urn:ahp-bench"

// Workload generates the events of one run. Event ids are unique per run (a random run id and
// the sequence number), so the server's idempotency store never answers from memory; each worker
// has its own session.
type Workload struct {
	runID     string
	time      string
	inputs    [2]*structpb.Struct // shared, read-only: marshalling does not modify them
	inputJSON [2][]byte
}

// NewWorkload prepares the events. payloadBytes is the size of each tool input as JSON: the
// command plus a "description" string padding it out (inputs never get smaller than the bare
// command).
func NewWorkload(payloadBytes int) (*Workload, error) {
	if payloadBytes < 0 || payloadBytes > MaxPayloadBytes {
		return nil, fmt.Errorf("payload size %d outside [0, %d]", payloadBytes, MaxPayloadBytes)
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	w := &Workload{runID: hex.EncodeToString(id[:]), time: time.Now().UTC().Format(time.RFC3339)}
	for i, cmd := range Commands {
		fields := map[string]any{"command": cmd}
		bare, _ := json.Marshal(fields)
		// {"command":"…","description":""} is len(bare)+17 bytes before any padding.
		if pad := payloadBytes - len(bare) - len(`,"description":""`); pad > 0 {
			fields["description"] = padding(pad)
		}
		in, err := structpb.NewStruct(fields)
		if err != nil {
			return nil, err
		}
		w.inputs[i] = in
		if w.inputJSON[i], err = json.Marshal(fields); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// padding returns n bytes of plain text that JSON encodes as itself.
func padding(n int) string {
	const text = "The quick brown fox jumps over the lazy dog while the agent reads the repository. "
	var b strings.Builder
	b.Grow(n)
	for b.Len() < n {
		b.WriteString(text[:min(len(text), n-b.Len())])
	}
	return b.String()
}

// InputBytes returns the size of the JSON tool input of request seq.
func (w *Workload) InputBytes(seq uint64) int { return len(w.inputJSON[variant(seq)]) }

func variant(seq uint64) int { return int(seq % 2) }

// EventID returns the id of request seq.
func (w *Workload) EventID(seq uint64) string {
	return w.runID + "-" + strconv.FormatUint(seq, 10)
}

// SessionID returns the session of a worker.
func (w *Workload) SessionID(worker int) string {
	return "bench-" + w.runID + "-w" + strconv.Itoa(worker)
}

// ToolBefore returns the tool.before event of request seq, to be decided.
func (w *Workload) ToolBefore(worker int, seq uint64) *ahpv1.Event {
	return w.toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, worker, seq)
}

// ToolAfter returns the tool.after event of request seq, to be observed.
func (w *Workload) ToolAfter(worker int, seq uint64) *ahpv1.Event {
	return w.toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, worker, seq)
}

func (w *Workload) toolEvent(t ahpv1.EventType, worker int, seq uint64) *ahpv1.Event {
	id := w.EventID(seq)
	return &ahpv1.Event{
		Id: id, Source: source, Type: t, Time: w.time,
		Session: &ahpv1.Session{Id: w.SessionID(worker)},
		Tool: &ahpv1.Tool{
			CallId: "call-" + id, Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL,
			Input: w.inputs[variant(seq)],
		},
	}
}

// AppendHooksIntercept appends the Agent Hooks Protocol v0.1 hooks/intercept request of request
// seq to dst, as one line of compact JSON without the newline. The JSON-RPC id is the event id,
// as the protocol requires.
func (w *Workload) AppendHooksIntercept(dst []byte, worker int, seq uint64) []byte {
	id := w.EventID(seq)
	dst = append(dst, `{"jsonrpc":"2.0","id":"`...)
	dst = append(dst, id...)
	dst = append(dst, `","method":"hooks/intercept","params":{"protocolVersion":"0.1","event":{"id":"`...)
	dst = append(dst, id...)
	dst = append(dst, `","source":"`+source+`","type":"tool.before","time":"`...)
	dst = append(dst, w.time...)
	dst = append(dst, `","session":{"id":"`...)
	dst = append(dst, w.SessionID(worker)...)
	dst = append(dst, `"},"tool":{"callId":"call-`...)
	dst = append(dst, id...)
	dst = append(dst, `","name":"Bash","kind":"shell","input":`...)
	dst = append(dst, w.inputJSON[variant(seq)]...)
	dst = append(dst, `}},"capabilities":{"effects":["deny"]}}}`...)
	return dst
}

// Verdict is what an answer amounts to, whatever the transport.
type Verdict int32

// Verdicts. The zero value means "not known yet".
const (
	VerdictUnknown Verdict = iota
	VerdictAllow
	VerdictDeny
	VerdictAsk
	VerdictOther
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case VerdictAllow:
		return "allow"
	case VerdictDeny:
		return "deny"
	case VerdictAsk:
		return "ask"
	case VerdictOther:
		return "other"
	}
	return "unknown"
}

// VerdictOf maps a canonical decision's verdict.
func VerdictOf(d *ahpv1.Decision) Verdict {
	switch d.GetVerdict() {
	case ahpv1.Verdict_VERDICT_ALLOW:
		return VerdictAllow
	case ahpv1.Verdict_VERDICT_DENY:
		return VerdictDeny
	case ahpv1.Verdict_VERDICT_ASK:
		return VerdictAsk
	}
	return VerdictOther
}

// Expectation holds the verdict each of the two commands must get. Fixed expectations are known
// in advance (the built-in policy, the no-op handler); otherwise the first answer for each command
// sets it and every later answer must agree.
type Expectation struct {
	want    [2]atomic.Int32
	learned bool
}

// FixedExpectation expects allowed for Commands[0] and denied for Commands[1] or, for a no-op
// handler, the same verdict for both.
func FixedExpectation(first, second Verdict) *Expectation {
	e := &Expectation{}
	e.want[0].Store(int32(first))
	e.want[1].Store(int32(second))
	return e
}

// LearnedExpectation returns an expectation that takes the first answer to each command as right.
func LearnedExpectation() *Expectation { return &Expectation{learned: true} }

// Learned reports whether the expectations come from the answers rather than from a known policy.
func (e *Expectation) Learned() bool { return e.learned }

// ErrWrongVerdict is wrapped by Check's errors.
var ErrWrongVerdict = errors.New("wrong verdict")

// Check compares the verdict of request seq with the expectation.
func (e *Expectation) Check(seq uint64, got Verdict) error {
	i := variant(seq)
	if e.learned {
		e.want[i].CompareAndSwap(int32(VerdictUnknown), int32(got))
	}
	if want := Verdict(e.want[i].Load()); got != want {
		return fmt.Errorf("%w: %q got %s, want %s", ErrWrongVerdict, Commands[i], got, want)
	}
	return nil
}
