//go:build !linux

package unixsock

import (
	"errors"
	"net"
)

// peerUID is not available on this platform: with AllowUIDs set, every peer is refused.
func peerUID(net.Conn) (uint32, error) {
	return 0, errors.New("peer credentials are only checked on Linux")
}
