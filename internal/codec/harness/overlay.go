package harness

// Overlays: how an event keeps, next to its typed form, the JSON the typed form cannot reproduce,
// so that converting back gives the original JSON.

import (
	"maps"
	"slices"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// jsonEqual reports whether two JSON values are equal. Numbers compare by float64 value, the
// precision google.protobuf.Value keeps anyway.
func jsonEqual(a, b any) bool {
	if na, ok := numberOf(a); ok {
		nb, ok := numberOf(b)
		if !ok {
			return false
		}
		return na.float64() == nb.float64()
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, jsonEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && maps.EqualFunc(x, y, jsonEqual)
	}
	return false
}

// residue returns what of orig enc does not reproduce, as an overlay that merge
// applies over enc to give orig back: unknown fields, and the parts of known fields whose typed form
// re-encodes differently (an explicit null for an Option, an explicit [] that serde skips, unknown
// fields nested in a struct, serde's map or sequence forms, ...). The overlay is sparse: objects
// hold only differing keys, equal-length arrays are overlaid element by element ({} for an
// unchanged object), and anything else replaces. Keeping the typed form authoritative where it
// agrees matters because it holds integers exactly, which google.protobuf.Value does not.
func residue(orig, enc map[string]any, skip ...string) map[string]any {
	var res map[string]any
	for k, ov := range orig {
		if slices.Contains(skip, k) {
			continue
		}
		r, differs := ov, true
		if ev, ok := enc[k]; ok {
			r, differs = diff(ov, ev)
		}
		if !differs {
			continue
		}
		if res == nil {
			res = map[string]any{}
		}
		res[k] = r
	}
	return res
}

// diff returns the overlay that turns enc into orig, and whether one is needed.
func diff(orig, enc any) (any, bool) {
	if jsonEqual(orig, enc) {
		return nil, false
	}
	switch o := orig.(type) {
	case map[string]any:
		e, ok := enc.(map[string]any)
		if !ok {
			return orig, true
		}
		for k := range e {
			if _, ok := o[k]; !ok {
				return orig, true // an overlay cannot remove keys; never the case for lossless output
			}
		}
		return residue(o, e), true
	case []any:
		e, ok := enc.([]any)
		if !ok || len(e) != len(o) {
			return orig, true
		}
		out := make([]any, len(o))
		for i := range o {
			r, differs := diff(o[i], e[i])
			if !differs {
				r = unchanged(o[i])
			}
			out[i] = r
		}
		return out, true
	}
	return orig, true
}

// unchanged is the overlay element that leaves a value as it is.
func unchanged(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return map[string]any{}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unchanged(e)
		}
		return out
	}
	return v
}

// merge applies an overlay made by diff to base.
func merge(base, overlay any) any {
	switch o := overlay.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return overlay
		}
		for k, v := range o {
			if bv, ok := b[k]; ok {
				b[k] = merge(bv, v)
			} else {
				b[k] = v
			}
		}
		return b
	case []any:
		b, ok := base.([]any)
		if !ok || len(b) != len(o) {
			return overlay
		}
		for i := range o {
			b[i] = merge(b[i], o[i])
		}
		return b
	}
	return overlay
}

// canonical rewrites v with every number in the form google.protobuf.Value gives it back,
// so a hash of the result does not change across a JSON -> proto -> JSON round trip.
func canonical(v any) any {
	if n, ok := numberOf(v); ok {
		return jsonwire.FromNumber(n.float64())
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	}
	return v
}
