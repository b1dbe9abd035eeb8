package testkit

import (
	"os"
	"testing"
)

// ReplaceFile gives path the content by writing a temporary file beside it and renaming it over
// path, the way editors and Kubernetes ConfigMap updates replace files: a reader sees the old
// file or the new one, never half of one.
func ReplaceFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// CloseAtEnd calls close when the test ends and reports its error, naming what was closed.
func CloseAtEnd(t testing.TB, what string, close func() error) {
	t.Helper()
	t.Cleanup(func() {
		if err := close(); err != nil {
			t.Errorf("closing %s: %v", what, err)
		}
	})
}
