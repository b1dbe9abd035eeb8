package bridge

import (
	"context"
	"maps"
	"slices"
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/contentstore"
	"google.golang.org/protobuf/types/known/structpb"
)

// Attachments referring to the content upload binding (Agent Hooks Protocol "draft"). When the
// bridge serves the binding (Config.Uploads), every body-selected attachment part of a draft event
// — {kind: "attachment", body: {ref, size?, sha256?}} anywhere in Event.catalogue.items or in the
// event's body members kept in Event.payload (message lists, inject values, ...) — must name a
// live upload of the calling principal (auth.PrincipalFrom; "" without authentication), and the
// size and sha256 it declares, on the body or on the part, must be the upload's. The bridge then
// completes body.size and body.sha256 from the upload's receipt, so the canonical event, and
// every policy, sees the attachment's verified metadata (mediaType, size, sha256, ref); the bytes
// never leave the store.
//
// Without the binding, refs name content held elsewhere (the harness's own upload endpoint) and
// pass through unresolved.

// maxAttachmentRefs bounds the refs resolved for one event; maxContentDepth bounds the walk.
const (
	maxAttachmentRefs = 256
	maxContentDepth   = 64
)

// refProblem is a ref that did not resolve: the JSON path of the member at fault and why.
type refProblem struct {
	path, reason string
}

// resolveAttachments resolves the upload refs of a draft event in place, or returns the problem
// with the first one that does not resolve.
func (b *Bridge) resolveAttachments(ctx context.Context, ev *ahpv1.Event) *refProblem {
	store := b.cfg.Uploads
	if store == nil || ev.GetOrigin().GetProtocolVersion() != "draft" {
		return nil
	}
	owner := ""
	if p, ok := auth.PrincipalFrom(ctx); ok {
		owner = p.Name
	}
	r := &refResolver{store: store, owner: owner}
	if items := ev.GetCatalogue().GetItems(); items != nil {
		for i, v := range items.Values {
			if p := r.walk("params.event.items["+strconv.Itoa(i)+"]", v, 0); p != nil {
				return p
			}
		}
	}
	if ev.Payload != nil {
		return r.walk("params.event", ev.Payload, 0)
	}
	return nil
}

type refResolver struct {
	store *contentstore.Store
	owner string
	refs  int
}

func (r *refResolver) walk(path string, v *structpb.Value, depth int) *refProblem {
	if depth > maxContentDepth {
		return &refProblem{path, "nested too deeply to resolve its attachments"}
	}
	switch x := v.GetKind().(type) {
	case *structpb.Value_ListValue:
		for i, e := range x.ListValue.GetValues() {
			if p := r.walk(path+"["+strconv.Itoa(i)+"]", e, depth+1); p != nil {
				return p
			}
		}
	case *structpb.Value_StructValue:
		s := x.StructValue
		if s.GetFields()["kind"].GetStringValue() == "attachment" {
			if body := s.GetFields()["body"].GetStructValue(); body != nil {
				if _, ok := body.GetFields()["ref"]; ok {
					return r.resolve(path, s, body)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.GetFields())) { // the first problem, always the same one
			if p := r.walk(path+"."+k, s.Fields[k], depth+1); p != nil {
				return p
			}
		}
	}
	return nil
}

// resolve checks one attachment part against the upload its body names and completes the body.
func (r *refResolver) resolve(path string, part, body *structpb.Struct) *refProblem {
	if r.refs++; r.refs > maxAttachmentRefs {
		return &refProblem{path + ".body.ref", "too many attachment refs in one event (at most " + strconv.Itoa(maxAttachmentRefs) + ")"}
	}
	ref := body.Fields["ref"].GetStringValue()
	receipt, ok := r.store.Lookup(r.owner, ref)
	if !ok {
		return &refProblem{path + ".body.ref", "unknown or expired upload ref; it must name a live upload of this caller to the content upload binding"}
	}
	for _, on := range []struct {
		s    *structpb.Struct
		path string
	}{{body, path + ".body"}, {part, path}} {
		if v, ok := on.s.Fields["size"]; ok && v.GetNumberValue() != float64(receipt.Size) {
			return &refProblem{on.path + ".size", "does not match the size of the uploaded content"}
		}
		if v, ok := on.s.Fields["sha256"]; ok && v.GetStringValue() != receipt.SHA256 {
			return &refProblem{on.path + ".sha256", "does not match the SHA-256 of the uploaded content"}
		}
	}
	body.Fields["size"] = structpb.NewNumberValue(float64(receipt.Size))
	body.Fields["sha256"] = structpb.NewStringValue(receipt.SHA256)
	return nil
}

// refError is the -32602 answering an event whose attachment did not resolve; data names the
// member and the reason, never its value.
func refError(p *refProblem) *ahpv1.RpcError {
	data, _ := structpb.NewValue(map[string]any{"path": p.path, "reason": p.reason})
	return &ahpv1.RpcError{Code: hooks.CodeInvalidParams, Message: "Invalid params", Data: data}
}
