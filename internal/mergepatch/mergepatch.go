// Package mergepatch applies JSON merge patches (RFC 7386) to protobuf Structs: the one
// implementation that policies' `merge:` forms, the hook adapters and the MCP gateway share.
package mergepatch

import "google.golang.org/protobuf/types/known/structpb"

// Apply returns target with patch merged in; neither is changed. A null in patch deletes the
// key, an object merges recursively, anything else replaces. A Value with no kind is malformed
// and skipped rather than given a meaning.
func Apply(target, patch *structpb.Struct) *structpb.Struct {
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(target.GetFields())+len(patch.GetFields()))}
	for k, v := range target.GetFields() {
		out.Fields[k] = v
	}
	for k, pv := range patch.GetFields() {
		switch kind := pv.GetKind().(type) {
		case nil:
		case *structpb.Value_NullValue:
			delete(out.Fields, k)
		case *structpb.Value_StructValue:
			out.Fields[k] = structpb.NewStructValue(Apply(out.Fields[k].GetStructValue(), kind.StructValue))
		default:
			out.Fields[k] = pv
		}
	}
	return out
}
