package convert_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-gateway/ahp/internal/convert"
)

// TestHooksTestdata runs every case of testdata/hooks: valid cases must round-trip losslessly,
// invalid ones must fail at the JSON path and with the JSON-RPC code the manifest names.
func TestHooksTestdata(t *testing.T) {
	t.Parallel()
	for _, c := range hooksLoadCases(t) {
		t.Run(c.Path, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(hooksTestdata, c.Path))
			if err != nil {
				t.Fatal(err)
			}
			switch c.Kind {
			case "stdio":
				err := convert.CheckHooksStdioFraming(data)
				if !c.Valid {
					hooksWantError(t, err, c.ErrorPath, c.ErrorCode)
					return
				}
				if err != nil {
					t.Fatalf("CheckHooksStdioFraming: %v", err)
				}
				msg := hooksRoundTripMessage(t, bytes.TrimSuffix(data, []byte("\n")))
				out, err := convert.EncodeHooksMessage(msg)
				if err != nil {
					t.Fatal(err)
				}
				if err := convert.CheckHooksStdioFraming(append(out, '\n')); err != nil {
					t.Errorf("encoded message breaks stdio framing: %v", err)
				}
			case "message":
				if !c.Valid {
					_, err := convert.DecodeHooksMessage(data)
					hooksWantError(t, err, c.ErrorPath, c.ErrorCode)
					return
				}
				hooksRoundTripMessage(t, data)
			case "registration":
				if !c.Valid {
					_, err := convert.DecodeHooksRegistration(data)
					hooksWantError(t, err, c.ErrorPath, c.ErrorCode)
					return
				}
				hooksRoundTripRegistration(t, data)
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
		})
	}
}

// TestHooksTestdataManifestComplete keeps the manifest and the files in step, so no fixture is
// silently skipped.
func TestHooksTestdataManifestComplete(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, c := range hooksLoadCases(t) {
		if listed[c.Path] {
			t.Errorf("%s listed twice", c.Path)
		}
		listed[c.Path] = true
		if !c.Valid && c.ErrorCode == 0 {
			t.Errorf("%s: invalid case without errorCode", c.Path)
		}
	}
	err := filepath.WalkDir(hooksTestdata, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "manifest.json" {
			return err
		}
		rel, _ := filepath.Rel(hooksTestdata, path)
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
