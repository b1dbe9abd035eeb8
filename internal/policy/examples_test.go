package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/policy"
)

// examplesDir holds the example policies, each next to its NAME_test.yaml suite.
const examplesDir = "../../examples/policies"

func TestDefaultPolicySuite(t *testing.T) {
	t.Parallel()
	suite, err := policy.LoadTestFile("testdata/default_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	report := policy.Default().RunTests(suite)
	if report.Failed() {
		t.Errorf("default policy suite failed:\n%s", report)
	}
}

func TestExamplePolicySuites(t *testing.T) {
	t.Parallel()
	suites, err := filepath.Glob(filepath.Join(examplesDir, "*_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policies, _ := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if len(suites) == 0 || len(policies) != 2*len(suites) {
		t.Fatalf("want every example policy to have a suite: %d files, %d suites", len(policies), len(suites))
	}
	for _, suitePath := range suites {
		policyPath := strings.TrimSuffix(suitePath, "_test.yaml") + ".yaml"
		t.Run(filepath.Base(policyPath), func(t *testing.T) {
			t.Parallel()
			p, err := policy.LoadFile(policyPath)
			if err != nil {
				t.Fatal(err)
			}
			suite, err := policy.LoadTestFile(suitePath)
			if err != nil {
				t.Fatal(err)
			}
			report := p.RunTests(suite)
			if report.Failed() {
				t.Errorf("suite failed:\n%s", report)
			}
		})
	}
}

// exampleSeeds returns the example policies' sources, for fuzz seeds.
func exampleSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	var out [][]byte
	for _, f := range files {
		if strings.HasSuffix(f, "_test.yaml") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return append(out, policy.DefaultSource())
}
