package bench

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Go's timers can fire up to a millisecond late on Linux when the process is otherwise idle: the
// runtime's poller sleeps in epoll_wait, whose timeout is in whole milliseconds. A timerfd, which
// the poller watches like any other file, wakes it within microseconds instead, without blocking a
// thread. fineTimer wraps one; it is used for the last stretch of each wait.
type fineTimer struct {
	f *os.File
}

// Values from <sys/timerfd.h>; the syscall package has the syscall numbers but not these.
const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

type itimerspec struct {
	interval, value syscall.Timespec
}

// newFineTimer returns a timerfd-backed timer, or nil when the kernel refuses one (then the
// caller keeps to Go's timers).
func newFineTimer() *fineTimer {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil
	}
	// A non-blocking descriptor is registered with the runtime poller, so Read parks the
	// goroutine, not the thread.
	return &fineTimer{f: os.NewFile(fd, "timerfd")}
}

// sleep waits d (at most a few milliseconds; it does not watch a context).
func (t *fineTimer) sleep(d time.Duration) bool {
	spec := itimerspec{value: syscall.NsecToTimespec(int64(d))}
	raw, err := t.f.SyscallConn()
	if err != nil {
		return false
	}
	var errno syscall.Errno
	if err := raw.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	}); err != nil || errno != 0 {
		return false
	}
	var expirations [8]byte
	_, err = t.f.Read(expirations[:])
	return err == nil
}

func (t *fineTimer) close() { _ = t.f.Close() }
