package main

import (
	"math/bits"
	"sync/atomic"

	"github.com/gokern/kern/emu"
)

// stepCounter is an emu.Observer counting what the emulator executed:
// warp-instructions (one per instruction a warp issued) and
// thread-instructions (one per lane that executed it, guard passed).
type stepCounter struct{ warp, thread atomic.Uint64 }

func (c *stepCounter) Step(s *emu.Step) {
	c.warp.Add(1)
	c.thread.Add(uint64(bits.OnesCount32(s.Exec)))
}

func (c *stepCounter) Access(*emu.Access) {}

func (c *stepCounter) load() (warp, thread uint64) { return c.warp.Load(), c.thread.Load() }
