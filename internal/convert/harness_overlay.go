package convert

// Overlays: how an event keeps, next to its typed form, the JSON the typed form cannot reproduce,
// so that converting back gives the original JSON.

import "slices"

// harnessEqual reports whether two JSON values are equal. Numbers compare by float64 value, the
// precision google.protobuf.Value keeps anyway.
func harnessEqual(a, b any) bool {
	if na, ok := harnessNumberOf(a); ok {
		nb, ok := harnessNumberOf(b)
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
		return ok && slices.EqualFunc(x, y, harnessEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !harnessEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// harnessResidue returns what of orig enc does not reproduce, as an overlay that harnessMerge
// applies over enc to give orig back: unknown fields, and the parts of known fields whose typed form
// re-encodes differently (an explicit null for an Option, an explicit [] that serde skips, unknown
// fields nested in a struct, serde's map or sequence forms, ...). The overlay is sparse: objects
// hold only differing keys, equal-length arrays are overlaid element by element ({} for an
// unchanged object), and anything else replaces. Keeping the typed form authoritative where it
// agrees matters because it holds integers exactly, which google.protobuf.Value does not.
func harnessResidue(orig, enc map[string]any, skip ...string) map[string]any {
	var res map[string]any
	for k, ov := range orig {
		if slices.Contains(skip, k) {
			continue
		}
		r, differs := ov, true
		if ev, ok := enc[k]; ok {
			r, differs = harnessDiff(ov, ev)
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

// harnessDiff returns the overlay that turns enc into orig, and whether one is needed.
func harnessDiff(orig, enc any) (any, bool) {
	if harnessEqual(orig, enc) {
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
		return harnessResidue(o, e), true
	case []any:
		e, ok := enc.([]any)
		if !ok || len(e) != len(o) {
			return orig, true
		}
		out := make([]any, len(o))
		for i := range o {
			r, differs := harnessDiff(o[i], e[i])
			if !differs {
				r = harnessUnchanged(o[i])
			}
			out[i] = r
		}
		return out, true
	}
	return orig, true
}

// harnessUnchanged is the overlay element that leaves a value as it is.
func harnessUnchanged(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return map[string]any{}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = harnessUnchanged(e)
		}
		return out
	}
	return v
}

// harnessMerge applies an overlay made by harnessDiff to base.
func harnessMerge(base, overlay any) any {
	switch o := overlay.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return overlay
		}
		for k, v := range o {
			if bv, ok := b[k]; ok {
				b[k] = harnessMerge(bv, v)
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
			b[i] = harnessMerge(b[i], o[i])
		}
		return b
	}
	return overlay
}

// harnessCanonical rewrites v with every number in the form google.protobuf.Value gives it back,
// so a hash of the result does not change across a JSON -> proto -> JSON round trip.
func harnessCanonical(v any) any {
	if n, ok := harnessNumberOf(v); ok {
		return jsonNumber(n.float64())
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = harnessCanonical(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = harnessCanonical(e)
		}
		return out
	}
	return v
}
