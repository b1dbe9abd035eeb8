package clitest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles the command in the current directory (a test's package directory, cmd/NAME)
// into a new temporary directory and returns the binary's path and a function that removes it.
// A TestMain calls it once for the tests that run the binary.
func Build(name string) (bin string, remove func(), err error) {
	dir, err := os.MkdirTemp("", name+"-test")
	if err != nil {
		return "", func() {}, err
	}
	remove = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", remove, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, remove, nil
}
