package approval_test

import "runtime"

func yield() { runtime.Gosched() }
