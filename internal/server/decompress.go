package server

import (
	"compress/gzip"
	"errors"
	"io"

	"connectrpc.com/connect"
)

// errInflatedTooLarge ends a decompression that has produced more than a message may hold.
var errInflatedTooLarge = errors.New("decompressed message exceeds the limit")

// cappedGzip is connect's gzip support with a decompressor that stops producing data one byte past
// maxBytes. connect reads limit+1 decompressed bytes to see that a message is too large, then
// drains the decompressor to report its size; without the cap a small compressed body can make
// that drain inflate gigabytes. It applies to every protocol and to every message of a stream.
func cappedGzip(maxBytes int) connect.HandlerOption {
	return connect.WithCompression("gzip",
		func() connect.Decompressor { return &gzipReader{max: int64(maxBytes) + 1} },
		func() connect.Compressor { return gzip.NewWriter(io.Discard) },
	)
}

// gzipReader is a gzip.Reader that fails with errInflatedTooLarge once it has produced max bytes.
type gzipReader struct {
	gzip.Reader
	max, left int64
}

// Reset implements connect.Decompressor; the budget starts anew for each message.
func (r *gzipReader) Reset(src io.Reader) error {
	r.left = r.max
	return r.Reader.Reset(src)
}

// Read implements io.Reader.
func (r *gzipReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, errInflatedTooLarge
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.Reader.Read(p)
	r.left -= int64(n)
	return n, err
}
