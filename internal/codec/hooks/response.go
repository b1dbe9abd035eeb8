package hooks

import (
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// EncodeResult writes the hooks/intercept success response {"id", "jsonrpc", "result"} for r,
// straight from the proto: the bytes EncodeMessage(&Message{ID: id, Result: r}) gives, without
// its check. It is for results RenderResult built (FuzzRenderResult holds every one of them to
// the decoder's rules and to EncodeMessage's bytes); other results go through EncodeMessage.
// Members are written in sorted key order, as EncodeMessage writes them.
func EncodeResult(id ID, r *ahpv1.HooksInterceptResult) []byte {
	if hasUnknown(r) {
		// Unknown members merge into the sorted order; the tree writer does that.
		out, _ := jsonwire.Append(make([]byte, 0, 512), directEncoder.envelope(&Message{ID: id, Result: r}))
		return out
	}
	b := make([]byte, 0, 256)
	b = append(b, '{')
	if !id.IsAbsent() {
		b = append(b, `"id":`...)
		b = appendID(b, id)
		b = append(b, ',')
	}
	b = append(b, `"jsonrpc":"2.0","result":{"effects":[`...)
	for i, e := range r.GetEffects() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEffect(b, e)
	}
	b = append(b, ']')
	if r.GetExtensions() != nil {
		b = append(b, `,"extensions":`...)
		b = jsonwire.AppendStruct(b, r.GetExtensions())
	}
	b = append(b, `,"protocolVersion":`...)
	b = jsonwire.AppendString(b, r.GetProtocolVersion())
	return append(b, "}}"...)
}

// appendEffect writes one effect as encoder.result does: code, extensions, reason, type, the
// empty strings left out.
func appendEffect(b []byte, e *ahpv1.HooksEffect) []byte {
	b = append(b, '{')
	if e.GetCode() != "" {
		b = append(b, `"code":`...)
		b = jsonwire.AppendString(b, e.GetCode())
		b = append(b, ',')
	}
	if e.GetExtensions() != nil {
		b = append(b, `"extensions":`...)
		b = jsonwire.AppendStruct(b, e.GetExtensions())
		b = append(b, ',')
	}
	if e.GetReason() != "" {
		b = append(b, `"reason":`...)
		b = jsonwire.AppendString(b, e.GetReason())
		b = append(b, ',')
	}
	b = append(b, `"type":`...)
	b = jsonwire.AppendString(b, e.GetType())
	return append(b, '}')
}

// appendID writes an id as ID.jsonValue does.
func appendID(b []byte, id ID) []byte {
	switch id.kind {
	case idString:
		return jsonwire.AppendString(b, id.str)
	case idInt:
		return strconv.AppendInt(b, id.num, 10)
	}
	return append(b, "null"...)
}

// hasUnknown reports whether r or one of its effects carries unknown members.
func hasUnknown(r *ahpv1.HooksInterceptResult) bool {
	if len(r.GetUnknownFields().GetFields()) > 0 {
		return true
	}
	for _, e := range r.GetEffects() {
		if len(e.GetUnknownFields().GetFields()) > 0 {
			return true
		}
	}
	return false
}
