package jsonwire

import "slices"

// SortedKeys gives the keys of m in order, so the first error reported is deterministic.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
