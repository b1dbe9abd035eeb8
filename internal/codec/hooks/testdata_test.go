package hooks_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-gateway/ahp/internal/codec/hooks"
)

// TestTestdata runs every case of testdata/hooks: valid cases must round-trip losslessly,
// invalid ones must fail at the JSON path and with the JSON-RPC code the manifest names.
func TestTestdata(t *testing.T) {
	t.Parallel()
	for _, c := range loadCases(t) {
		t.Run(c.Path, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(testdataDir, c.Path))
			if err != nil {
				t.Fatal(err)
			}
			switch c.Kind {
			case "stdio":
				err := hooks.CheckStdioFraming(data)
				if !c.Valid {
					wantError(t, err, c.ErrorPath, c.ErrorCode)
					return
				}
				if err != nil {
					t.Fatalf("CheckStdioFraming: %v", err)
				}
				msg := roundTripMessage(t, bytes.TrimSuffix(data, []byte("\n")))
				out, err := hooks.EncodeMessage(msg)
				if err != nil {
					t.Fatal(err)
				}
				if err := hooks.CheckStdioFraming(append(out, '\n')); err != nil {
					t.Errorf("encoded message breaks stdio framing: %v", err)
				}
			case "message":
				messageDoc.check(t, data, c.Valid, c.ErrorPath, c.ErrorCode)
			case "registration":
				registrationDoc.check(t, data, c.Valid, c.ErrorPath, c.ErrorCode)
			case "draft":
				draftDoc.check(t, data, c.Valid, c.ErrorPath, c.ErrorCode)
			case "draft-registration":
				draftRegistrationDoc.check(t, data, c.Valid, c.ErrorPath, c.ErrorCode)
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
		})
	}
}

// TestTestdataManifestComplete keeps the manifest and the files in step, so no fixture is
// silently skipped.
func TestTestdataManifestComplete(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, c := range loadCases(t) {
		if listed[c.Path] {
			t.Errorf("%s listed twice", c.Path)
		}
		listed[c.Path] = true
		if !c.Valid && c.ErrorCode == 0 {
			t.Errorf("%s: invalid case without errorCode", c.Path)
		}
	}
	err := filepath.WalkDir(testdataDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path == filepath.Join(testdataDir, "fuzz") {
			return filepath.SkipDir // the fuzz seed corpora, not cases
		}
		if err != nil || d.IsDir() || d.Name() == "manifest.json" {
			return err
		}
		rel, _ := filepath.Rel(testdataDir, path)
		rel = filepath.ToSlash(rel)
		if !listed[rel] {
			t.Errorf("%s is not in manifest.json", rel)
		}
		delete(listed, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range listed {
		t.Errorf("%s is in manifest.json but missing", p)
	}
}
