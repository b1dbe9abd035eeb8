package hooks

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/types/known/structpb"
)

// decodeDraftTool reads the draft tool triple: call {id, synthesized?}, tool {name, input,
// origin native|mcp, kind?, mcp?, output?} and path. The call id lands in Tool.call_id and its
// synthesized flag in Origin.synthesized_call_id; a call object that flag cannot express
// (synthesized false, other members) is also kept verbatim in the payload.
func decodeDraftTool(o *object, ev *ahpv1.Event) (*ahpv1.Tool, error) {
	call, err := o.requiredObject("call")
	if err != nil {
		return nil, err
	}
	t := &ahpv1.Tool{}
	if t.CallId, err = call.requiredString("id", true); err != nil {
		return nil, err
	}
	synth, err := call.optionalBool("synthesized")
	if err != nil {
		return nil, err
	}
	if rest, _ := call.rest(); rest != nil {
		return nil, invalid(call.path(), "only id and synthesized are allowed")
	}
	if synth != nil && !*synth {
		unclaim(o, "call") // kept verbatim: a proto bool cannot tell false from absent
	}
	ev.Origin.SynthesizedCallId = synth != nil && *synth

	to, err := o.requiredObject("tool")
	if err != nil {
		return nil, err
	}
	if t.Name, err = to.requiredString("name", true); err != nil {
		return nil, err
	}
	if t.Input, err = to.requiredStruct("input"); err != nil {
		return nil, err
	}
	if t.Origin, err = to.requiredString("origin", false); err != nil {
		return nil, err
	}
	if t.Origin != "native" && t.Origin != "mcp" {
		return nil, invalid(to.at("origin"), "must be native or mcp")
	}
	if kind, ok := to.m["kind"]; ok {
		s, _ := kind.(string)
		var known bool
		if t.Kind, known = names.ParseToolKind(s); !known {
			return nil, invalid(to.at("kind"), "unknown tool kind; expected one of %s",
				strings.Join(names.EnumWireNames(ahpv1.ToolKind(0).Descriptor()), ", "))
		}
		to.claim("kind")
	}
	switch {
	case t.Origin == "mcp" && !to.has("mcp"):
		return nil, invalid(to.at("mcp"), "required when origin is mcp")
	case t.Origin == "native" && to.has("mcp"):
		return nil, invalid(to.at("mcp"), "not allowed when origin is native")
	}
	if mcp, err := to.optionalObject("mcp"); err != nil {
		return nil, err
	} else if mcp != nil {
		if t.Mcp, err = decodeMcpDescriptor(mcp); err != nil {
			return nil, err
		}
	}
	if to.has("output") {
		if t.Output, err = to.optionalValue("output"); err != nil {
			return nil, err
		}
	}
	if t.UnknownFields, err = to.rest(); err != nil {
		return nil, err
	}
	p, err := o.requiredString("path", true)
	if err != nil {
		return nil, err
	}
	ev.Catalogue.Path = p
	return t, nil
}

// unclaim returns a claimed member to the rest, which becomes the payload.
func unclaim(o *object, key string) {
	for i, k := range o.claimed {
		if k == key {
			o.claimed = append(o.claimed[:i], o.claimed[i+1:]...)
			return
		}
	}
}

// decodeMcpDescriptor reads mcp {server {id, name?}, toolName, provenance runtime|inferred,
// connection}. connection is {transport http|sse, url?} or {transport stdio, command?, args?,
// cwd?}, each with gaps?; a location member that is missing needs a gap naming it.
func decodeMcpDescriptor(o *object) (*ahpv1.McpTool, error) {
	m := &ahpv1.McpTool{}
	server, err := o.requiredObject("server")
	if err != nil {
		return nil, err
	}
	if m.Server, err = server.requiredString("id", true); err != nil {
		return nil, err
	}
	if m.ServerName, err = server.optionalString("name"); err != nil {
		return nil, err
	}
	if rest, _ := server.rest(); rest != nil {
		return nil, invalid(server.path(), "only id and name are allowed")
	}
	if m.Tool, err = o.requiredString("toolName", true); err != nil {
		return nil, err
	}
	if m.Provenance, err = o.requiredString("provenance", false); err != nil {
		return nil, err
	}
	if m.Provenance != "runtime" && m.Provenance != "inferred" {
		return nil, invalid(o.at("provenance"), "must be runtime or inferred")
	}
	conn, err := o.requiredObject("connection")
	if err != nil {
		return nil, err
	}
	transport, err := conn.requiredString("transport", false)
	if err != nil {
		return nil, err
	}
	var locations []string
	switch transport {
	case "http", "sse":
		locations = []string{"url"}
	case "stdio":
		locations = []string{"command"}
	default:
		// Names with a leading underscore are implementation-specific transports; the draft
		// fixes no location member for them.
		if len(transport) < 2 || transport[0] != '_' {
			return nil, invalid(conn.at("transport"), "must be http, sse, stdio or an implementation-specific name starting with _")
		}
	}
	gapped := map[string]bool{}
	if raw, ok := conn.m["gaps"]; ok {
		gaps, err := decodeGaps(conn.at("gaps"), raw)
		if err != nil {
			return nil, err
		}
		for _, g := range gaps {
			gapped[g.GetPath()] = true
		}
	}
	for _, loc := range locations {
		if _, ok := conn.m[loc].(string); !ok && !gapped[loc] {
			return nil, invalid(conn.at(loc), "required for %s connections unless a gap names it", transport)
		}
	}
	s, err := o.requiredStruct("connection")
	if err != nil {
		return nil, err
	}
	m.Connection = s
	if m.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return m, nil
}

func (e encoder) draftTool(out map[string]any, ev *ahpv1.Event) {
	t := ev.GetTool()
	if _, kept := out["call"]; !kept {
		call := map[string]any{"id": t.GetCallId()}
		if ev.GetOrigin().GetSynthesizedCallId() {
			call["synthesized"] = true
		}
		out["call"] = call
	}
	m := e.base(t.GetUnknownFields())
	putString(m, "name", t.GetName())
	if t.GetInput() != nil {
		m["input"] = e.object(t.GetInput())
	}
	putString(m, "origin", t.GetOrigin())
	if t.GetKind() != ahpv1.ToolKind_TOOL_KIND_UNSPECIFIED {
		m["kind"] = names.ToolKindName(t.GetKind())
	}
	if t.GetOutput() != nil {
		m["output"] = e.value(t.GetOutput())
	}
	if mcp := t.GetMcp(); mcp != nil {
		mm := e.base(mcp.GetUnknownFields())
		server := map[string]any{"id": mcp.GetServer()}
		putString(server, "name", mcp.GetServerName())
		mm["server"] = server
		putString(mm, "toolName", mcp.GetTool())
		putString(mm, "provenance", mcp.GetProvenance())
		if mcp.GetConnection() != nil {
			mm["connection"] = e.object(mcp.GetConnection())
		}
		m["mcp"] = mm
	}
	out["tool"] = m
}

func structValue(s *structpb.Struct) *structpb.Value { return structpb.NewStructValue(s) }

func jsonwireStructValue(s *structpb.Struct) *structpb.Value { return structValue(s) }

func listValue(l *structpb.ListValue) *structpb.Value { return structpb.NewListValue(l) }
