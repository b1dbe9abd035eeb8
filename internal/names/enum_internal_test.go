package names

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/ahp-gateway/ahp/gen/ahp/v1" // registers the ahp.v1 enums
)

// TestParseEnumWireCacheAnswersAsTheLookup holds the cached ParseEnumWire to parseEnumWire, the
// lookup it caches, for every wire name of every ahp.v1 enum and near misses of each: the same
// number, and the same refusals.
func TestParseEnumWireCacheAnswersAsTheLookup(t *testing.T) {
	t.Parallel()
	protoregistry.GlobalTypes.RangeEnums(func(et protoreflect.EnumType) bool {
		d := et.Descriptor()
		if d.ParentFile().Package() != "ahp.v1" {
			return true
		}
		for i := range d.Values().Len() {
			w := EnumValueWireName(d.Values().Get(i))
			for _, name := range []string{w, strings.ToUpper(w), w + "x", " " + w, strings.ReplaceAll(w, "s", "ſ"), string(d.Values().Get(i).Name()), "", "unspecified"} {
				for range 2 { // the first call for an enum may fill the cache
					got, gotOK := ParseEnumWire(d, name)
					want, wantOK := parseEnumWire(d, name)
					if got != want || gotOK != wantOK {
						t.Fatalf("%s %q: cached %v, %v; lookup %v, %v", d.FullName(), name, got, gotOK, want, wantOK)
					}
				}
			}
		}
		return true
	})
}
