package gpu

import "time"

// Clock64 returns the thread's SM cycle counter (the %clock64 special
// register, PTX ISA "Special Registers"): the difference of two reads in
// one thread is the cycles between them, the way CUDA's clock64() times a
// stretch of a kernel. Counters of different SMs are not synchronized, so
// compare reads of one block only. The compiler neither merges nor moves
// two reads. On the emulator the counter is the block's executed
// instructions; in native mode, nanoseconds since the process started.
func Clock64(t Thread) int64 { return int64(time.Since(clockStart)) }

var clockStart = time.Now()
