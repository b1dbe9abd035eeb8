package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/ahp-gateway/ahp/internal/cli"
	"github.com/ahp-gateway/ahp/internal/contentstore"
)

// uploadFlags are the flags of the Agent Hooks "draft" content upload binding on the HTTP listener.
type uploadFlags struct {
	path, maxBytes, maxItems, ttl  *string
	principalBytes, principalItems *string
}

func defineUpload(fs *cli.Flags) uploadFlags {
	return uploadFlags{
		path:           fs.String("upload-path", "", "HTTP `path` of the Agent Hooks draft content upload binding (POST application/octet-stream with AHP-Content-SHA256); empty: off", "AHP_BRIDGE_UPLOAD_PATH"),
		maxBytes:       fs.String("upload-max-bytes", strconv.Itoa(contentstore.DefaultMaxItemBytes), "largest upload in `bytes`", "AHP_BRIDGE_UPLOAD_MAX_BYTES"),
		maxItems:       fs.String("upload-max-items", strconv.Itoa(contentstore.DefaultMaxItems), "`number` of uploads kept at once (64 MiB in total at most)", "AHP_BRIDGE_UPLOAD_MAX_ITEMS"),
		ttl:            fs.String("upload-ttl", contentstore.DefaultTTL.String(), "`duration` an upload stays referable", "AHP_BRIDGE_UPLOAD_TTL"),
		principalBytes: fs.String("upload-principal-max-bytes", "0", "`bytes` of uploads one principal holds at once; 0: a quarter of the 64 MiB total, at least -upload-max-bytes", "AHP_BRIDGE_UPLOAD_PRINCIPAL_MAX_BYTES"),
		principalItems: fs.String("upload-principal-max-items", "0", "`number` of uploads one principal holds at once; 0: a quarter of -upload-max-items, at least 1", "AHP_BRIDGE_UPLOAD_PRINCIPAL_MAX_ITEMS"),
	}
}

// parseUpload checks the upload flags; the path is "" when the binding is off.
func parseUpload(f uploadFlags) (path string, limits contentstore.Limits, err error) {
	path = *f.path
	if path != "" && !strings.HasPrefix(path, "/") {
		return "", limits, cli.BadValue("upload-path", "-upload-path must start with /, got %q", path)
	}
	n, err := strconv.ParseInt(*f.maxBytes, 10, 64)
	if err != nil || n < 1 || n > contentstore.DefaultMaxTotalBytes {
		return "", limits, cli.BadValue("upload-max-bytes", "-upload-max-bytes: want 1 to %d, got %q", contentstore.DefaultMaxTotalBytes, *f.maxBytes)
	}
	limits.MaxItemBytes = n
	items, err := strconv.Atoi(*f.maxItems)
	if err != nil || items < 1 || items > 1<<16 {
		return "", limits, cli.BadValue("upload-max-items", "-upload-max-items: want 1 to 65536, got %q", *f.maxItems)
	}
	limits.MaxItems = items
	ttl, err := time.ParseDuration(*f.ttl)
	if err != nil || ttl < time.Second || ttl > 24*time.Hour {
		return "", limits, cli.BadValue("upload-ttl", "-upload-ttl: want a duration from 1s to 24h, got %q", *f.ttl)
	}
	limits.TTL = ttl
	pb, err := strconv.ParseInt(*f.principalBytes, 10, 64)
	if err != nil || pb < 0 || pb > contentstore.DefaultMaxTotalBytes {
		return "", limits, cli.BadValue("upload-principal-max-bytes", "-upload-principal-max-bytes: want 0 to %d, got %q", contentstore.DefaultMaxTotalBytes, *f.principalBytes)
	}
	if pb > 0 && pb < limits.MaxItemBytes {
		return "", limits, cli.BadValue("upload-principal-max-bytes", "-upload-principal-max-bytes: want at least -upload-max-bytes (%d), got %q", limits.MaxItemBytes, *f.principalBytes)
	}
	limits.MaxOwnerBytes = pb
	pi, err := strconv.Atoi(*f.principalItems)
	if err != nil || pi < 0 || pi > items {
		return "", limits, cli.BadValue("upload-principal-max-items", "-upload-principal-max-items: want 0 to -upload-max-items (%d), got %q", items, *f.principalItems)
	}
	limits.MaxOwnerItems = pi
	return path, limits, nil
}

// uploadMaxBytes is what the draft manifest states as maxUploadBytes: 0 unless the binding is
// served (an HTTP listener with -upload-path).
func uploadMaxBytes(cfg *config) int64 {
	if cfg.uploadPath == "" || cfg.httpAddr == "" {
		return 0
	}
	return cfg.uploadLimits.MaxItemBytes
}

// uploadStore is the content store of the upload binding, made once and shared by the HTTP
// listener's upload handler and the bridge (which resolves draft events' attachment refs in it);
// nil unless the binding is served.
func uploadStore(cfg *config) *contentstore.Store {
	if cfg.uploadPath == "" || cfg.httpAddr == "" {
		return nil
	}
	if cfg.uploadStore == nil {
		cfg.uploadStore = contentstore.New(cfg.uploadLimits, nil)
	}
	return cfg.uploadStore
}
