//go:build unix

package emu

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time, a steadier measure than
// wall time on a busy machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
