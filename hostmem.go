package kern

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
)

// hostMemory is the machine's physical memory in bytes, the most one
// emulator or native-mode allocation can take: asking for more would end
// the process with Go's fatal out-of-memory error instead of returning
// one. 0 where it is unknown (no /proc/meminfo).
var hostMemory = sync.OnceValue(func() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "MemTotal:       131891348 kB"
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb * 1024
	}
	return 0
})

// hostLimits are the launch limits of the emulator and native mode.
func hostLimits() Limits {
	l := defaultLimits
	l.MaxAlloc = hostMemory()
	return l
}
