package policy

import (
	_ "embed"
	"sync"
)

//go:embed default.yaml
var defaultYAML []byte

var defaultPolicy = sync.OnceValue(func() *Policy {
	p, err := Parse(defaultYAML, "default.yaml")
	if err != nil {
		// The embedded policy is tested; failing here means the binary was built broken.
		panic("policy: embedded default policy does not load: " + err.Error())
	}
	return p
})

// Default returns the built-in policy used when no policy file is configured: sensible for an
// agent on a laptop (it refuses machine-destroying shell commands, asks before force-pushing to
// main or master and before piping downloads into a shell, and keeps agents from writing secret
// files). The same *Policy is returned on every call; it is immutable.
func Default() *Policy { return defaultPolicy() }

// DefaultSource returns a copy of the built-in policy's YAML, for `policy print-default`-style
// commands and as a starting point for custom policies.
func DefaultSource() []byte { return append([]byte(nil), defaultYAML...) }
