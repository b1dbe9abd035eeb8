package testkit

import (
	"os"
	"path/filepath"
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

// SocketPath is a path for a Unix socket in a new directory that is removed when the test ends.
// The directory is not t.TempDir(), whose long names can pass the limit of a socket path (about
// 100 bytes).
func SocketPath(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ahp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "ahp.sock")
}

// File is one file ReadFiles read: its path and its content.
type File struct {
	Path string
	Data []byte
}

// ReadFiles reads every file matching the filepath.Glob pattern, in name order; a bad pattern
// or a file that cannot be read fails the test. It is how fuzz targets take their seeds and
// table tests their cases from testdata.
func ReadFiles(t testing.TB, pattern string) []File {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	files := make([]File, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = File{Path: p, Data: data}
	}
	return files
}
