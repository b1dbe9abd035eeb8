package adapter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// format is one runtime's hook wire format: where its input names the event, which events it has,
// how its fields map onto the canonical event, and how an answer is written back.
type format struct {
	// eventFields are the input fields that name the event, in order of preference; the first is
	// the one error messages name.
	eventFields []string
	// events maps native event names; order lists them for AdaptedEvents.
	events map[string]*eventSpec
	order  []string
	// toolNameField and toolInputField are the native names of the tool name and arguments, for
	// error messages.
	toolNameField, toolInputField string
	// read takes the canonical fields out of the input (without its event field); what it leaves
	// becomes Event.payload.
	read func(spec *eventSpec, rest fieldMap) (*fields, error)
	// write renders an answer already narrowed to what the event can express (fitTo).
	write func(req *Request, a answer) (Output, error)
	// observed is the output of an event that is only recorded (nil: none).
	observed []byte
	// kinds are the runtime's own tool names (lower case) that the shared table does not know.
	kinds map[string]ahpv1.ToolKind
	// stableCallIDs: the runtime gives no call id, so one is derived from the call itself.
	stableCallIDs bool
	// mcpPrefixed: the runtime names MCP tools "<server>-<tool>" (MCPConfig.Servers).
	mcpPrefixed bool
}

// formats holds every provider's format; each runtime's file registers its own.
var formats = map[Provider]*format{}

// eventName returns the event name the input gives and the field it is in; ("", first field)
// when it gives none.
func (f *format) eventName(obj map[string]any) (string, string) {
	for _, k := range f.eventFields {
		if v, present := obj[k]; present {
			s, _ := v.(string)
			return s, k
		}
	}
	return "", f.eventFields[0]
}

// toolKind gives a tool's kind: the runtime's own names first, then the shared table.
func (f *format) toolKind(name string) ahpv1.ToolKind {
	if k, ok := f.kinds[strings.ToLower(name)]; ok {
		return k
	}
	return names.ToolKindFor(name)
}

// fields are the canonical parts of one hook input.
type fields struct {
	session *ahpv1.Session
	tool    toolFields
	// catalogue holds the typed Agent Hooks "draft" members, for events of the draft catalogue.
	catalogue *ahpv1.Catalogue
}

// toolFields are a tool event's canonical parts. An empty name means the event's own tool name.
type toolFields struct {
	name      string
	input     map[string]any
	output    any
	hasOutput bool
	callID    string
	mcp       *ahpv1.McpTool
	// callScope narrows a derived call id (a generation or request id the runtime does give).
	callScope string
	// renamed is a tool input key renamed to its canonical name, as {native, canonical}.
	renamed [2]string
}

// fieldMap is a hook input being taken apart: each take removes what it returns, so that what is
// left is the payload. A field of an unexpected type is left in place.
type fieldMap map[string]any

// take removes and returns the first of keys holding a string.
func (m fieldMap) take(keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			delete(m, k)
			return s
		}
	}
	return ""
}

// takeObject removes and returns an object field; an object written as a JSON string (Cursor's
// MCP arguments, Copilot's toolArgs) is decoded.
func (m fieldMap) takeObject(key string) (map[string]any, bool) {
	switch v := m[key].(type) {
	case map[string]any:
		delete(m, key)
		return v, true
	case string:
		obj, err := decodeObject([]byte(v))
		if err != nil {
			return nil, false
		}
		delete(m, key)
		return obj, true
	}
	return nil, false
}

// takeAny removes and returns the first of keys that is present, whatever its type.
func (m fieldMap) takeAny(keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			delete(m, k)
			return v, true
		}
	}
	return nil, false
}

// claudeKeys are the field names in which Claude-style inputs differ.
type claudeKeys struct {
	session []string
	callID  []string
	// output names the tool result (default tool_response).
	output []string
}

// stableCallID derives a call id from what identifies one call: the runtime, the session, a
// scope the runtime gives (a generation id), the tool and its input. A before and an after event
// of the same call get the same id; equal calls in one scope do too, which is what a runtime
// without call ids lets anyone know.
func stableCallID(p Provider, session, scope, tool string, input map[string]any) string {
	h := sha256.New()
	in, _ := json.Marshal(input) // map keys sorted: the same input gives the same bytes
	for _, part := range [][]byte{[]byte(p.String()), []byte(session), []byte(scope), []byte(tool), in} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return "call-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// splitServerPrefix splits "<server>-<tool>" for the longest server of servers that prefixes
// name. Server names may hold "-" themselves, so the split needs to know them.
func splitServerPrefix(name string, servers []string) (server, tool string, ok bool) {
	for _, s := range servers {
		if len(s) > len(server) && len(name) > len(s)+1 && strings.HasPrefix(name, s) && name[len(s)] == '-' {
			server = s
		}
	}
	if server == "" {
		return "", "", false
	}
	return server, name[len(server)+1:], true
}

// kindTable builds a format's tool-name table from kind → names.
func kindTable(rows map[ahpv1.ToolKind][]string) map[string]ahpv1.ToolKind {
	m := map[string]ahpv1.ToolKind{}
	for k, list := range rows {
		for _, n := range list {
			m[strings.ToLower(n)] = k
		}
	}
	return m
}

// specs indexes a list of event specs by native name, keeping their order.
func specs(list ...*eventSpec) (map[string]*eventSpec, []string) {
	m := make(map[string]*eventSpec, len(list))
	order := make([]string, 0, len(list))
	for _, s := range list {
		m[s.native] = s
		order = append(order, s.native)
	}
	return m, order
}

// Output is one rendered hook answer: stdout (nil for nothing), the exit status and the line for
// stderr. Most runtimes read JSON on exit 0; Windsurf blocks only on exit 2 with the reason on
// stderr.
type Output struct {
	Stdout []byte
	Exit   int
	Stderr string
}

// RenderOutput is Render for every runtime: the hook answer for decision d about an intercepted
// request, in the runtime's own terms, with notice (when not empty) shown to the user first.
func RenderOutput(req *Request, d *ahpv1.Decision, notice string) (Output, error) {
	if !req.Intercepted() || req.Event == nil {
		return Output{}, errNotIntercepted
	}
	a := reduce(req, d)
	if notice != "" {
		a.messages = append([]string{notice}, a.messages...)
	}
	a = fitTo(req, a)
	return formats[req.Provider].write(req, a)
}
