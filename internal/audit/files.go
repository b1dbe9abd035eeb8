package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultFileName is the active file's name inside Config.Dir.
const DefaultFileName = "audit.jsonl"

// DefaultDir is where the log lives when Config names no place: $XDG_STATE_HOME/ahp-server/audit,
// or ~/.local/state/ahp-server/audit.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "ahp-server", "audit"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("audit: no directory for the log: set a path (%w)", err)
	}
	return filepath.Join(home, ".local", "state", "ahp-server", "audit"), nil
}

// rotatedName is the name of the n-th rotated file of the log whose active file is path.
func rotatedName(path string, n int) string {
	return fmt.Sprintf("%s.%06d", path, n)
}

// rotatedNumber parses the rotation number of name, a file in the same directory as path.
func rotatedNumber(path, name string) (int, bool) {
	suffix, ok := strings.CutPrefix(name, filepath.Base(path)+".")
	if !ok || suffix == "" || strings.Trim(suffix, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(suffix)
	return n, err == nil && n > 0
}

// Files lists the files of the log whose active file is path, oldest first: the rotated files
// (path.000001, path.000002, …, by number) and then path itself if it exists. This is the order
// Verify needs.
func Files(path string) ([]string, error) {
	rotated, err := rotatedFiles(path)
	if err != nil {
		return nil, err
	}
	files := make([]string, 0, len(rotated)+1)
	for _, r := range rotated {
		files = append(files, r.name)
	}
	if _, err := os.Stat(path); err == nil {
		files = append(files, path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return files, nil
}

type rotated struct {
	name string
	n    int
}

func rotatedFiles(path string) ([]rotated, error) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []rotated
	for _, e := range entries {
		if n, ok := rotatedNumber(path, e.Name()); ok && e.Type().IsRegular() {
			out = append(out, rotated{name: filepath.Join(filepath.Dir(path), e.Name()), n: n})
		}
	}
	slices.SortFunc(out, func(a, b rotated) int { return a.n - b.n })
	return out, nil
}
