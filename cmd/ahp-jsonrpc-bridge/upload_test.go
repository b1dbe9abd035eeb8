package main

import (
	"strings"
	"testing"
)

// TestParseUploadPrincipalQuota: the per-principal quota flags are checked against the totals.
func TestParseUploadPrincipalQuota(t *testing.T) {
	t.Parallel()
	flags := func(maxBytes, maxItems, pBytes, pItems string) uploadFlags {
		path, ttl := "/hooks/content", "10m"
		return uploadFlags{path: &path, maxBytes: &maxBytes, maxItems: &maxItems, ttl: &ttl, principalBytes: &pBytes, principalItems: &pItems}
	}
	_, l, err := parseUpload(flags("1024", "100", "4096", "10"))
	if err != nil || l.MaxOwnerBytes != 4096 || l.MaxOwnerItems != 10 {
		t.Errorf("valid quota: %+v, %v", l, err)
	}
	for _, tc := range []struct{ name, maxBytes, maxItems, pBytes, pItems, flag string }{
		{"bytes under one item", "1024", "100", "512", "0", "upload-principal-max-bytes"},
		{"bytes not a number", "1024", "100", "lots", "0", "upload-principal-max-bytes"},
		{"items over the total", "1024", "100", "0", "101", "upload-principal-max-items"},
		{"negative items", "1024", "100", "0", "-1", "upload-principal-max-items"},
	} {
		if _, _, err := parseUpload(flags(tc.maxBytes, tc.maxItems, tc.pBytes, tc.pItems)); err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%s: %v, want an error naming -%s", tc.name, err, tc.flag)
		}
	}
}
