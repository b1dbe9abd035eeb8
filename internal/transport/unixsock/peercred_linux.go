package unixsock

import (
	"errors"
	"net"
	"syscall"
)

// peerUID returns the user id of the process at the other end of a Unix socket connection.
func peerUID(c net.Conn) (uint32, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, errors.New("not a Unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var (
		cred   *syscall.Ucred
		credEr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, credEr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credEr != nil {
		return 0, credEr
	}
	return cred.Uid, nil
}
