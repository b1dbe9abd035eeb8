package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/policy"
)

// TestREADMEPolicyExampleLoads keeps the README's policy example honest.
func TestREADMEPolicyExampleLoads(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "## Policies")
	if !ok {
		t.Fatal("README has no Policies section")
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatal("README Policies section has no yaml block")
	}
	block, _, _ = strings.Cut(block, "```")
	p, err := policy.Parse([]byte(block), "README.md")
	if err != nil {
		t.Fatalf("README policy does not load: %v", err)
	}
	if len(p.Rules()) != 3 {
		t.Fatalf("README policy has %d rules", len(p.Rules()))
	}
}
