package policy

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentCompilesShareTheEnvSafely compiles, at the same time on one fresh environment, an
// expression naming something undeclared (which makes cel-go's checker look its symbol catalog
// up) and one with a comprehension (which copies the checker environment). Under -race this
// failed before newCELEnv filled the catalog up front (CI, TestMatchesCallAgreesWithCEL beside
// TestRestoredFileRecovers). The catalog is filled once per environment, and cel-go's own locks
// sometimes order the two compiles, so each round takes a fresh environment.
func TestConcurrentCompilesShareTheEnvSafely(t *testing.T) {
	t.Parallel()
	sources := []string{
		`input.command == "ls" && not_a_variable`,
		`["a", "b"].exists(w, input.command.startsWith(w))`,
	}
	for range 16 {
		env, err := newCELEnv()
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]string, len(sources))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, src := range sources {
			wg.Go(func() {
				<-start
				if _, iss := env.Compile(src); iss.Err() != nil {
					errs[i] = iss.Err().Error()
				}
			})
		}
		close(start)
		wg.Wait()
		if !strings.Contains(errs[0], "undeclared reference to 'not_a_variable'") {
			t.Fatalf("compiling %s: error %q, want an undeclared reference", sources[0], errs[0])
		}
		if errs[1] != "" {
			t.Fatalf("compiling %s: %s", sources[1], errs[1])
		}
	}
}
