package gpu

// mbarriers in native mode. The state lives in the 8 bytes of the barrier
// itself, updated with atomic compare-and-swap, so any number of
// goroutines (threads) can arrive and wait at once; waiters spin, yielding
// the processor, as a GPU's try_wait loop does. A phase nobody completes
// leaves its waiters spinning: the launch's context is what ends such a
// kernel in native mode (the emulator reports it as a deadlock).

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// mbarrierState is the encoding of an mbarrier's 64 bits, shared by native
// mode and package emu (emu/exec_mbarrier.go spells the same layout):
//
//	bits  0..20  arrivals still pending in the current phase
//	bits 21..41  expected arrivals per phase (the init count)
//	bits 42..62  transaction bytes pending, as a signed 21-bit number
//	             (a copy may complete before its expect_tx is counted)
//	bit  63      parity of the current phase
type mbarrierState uint64

const (
	mbarCountBits = 21
	mbarCountMask = 1<<mbarCountBits - 1
	// MbarrierMaxCount is the largest arrival count or transaction byte count
	// an mbarrier holds (2^20-1, PTX ISA §9.7.13.15).
	MbarrierMaxCount = 1<<20 - 1
)

func (s mbarrierState) pending() int  { return int(s & mbarCountMask) }
func (s mbarrierState) expected() int { return int(s >> mbarCountBits & mbarCountMask) }
func (s mbarrierState) tx() int {
	v := int(s >> (2 * mbarCountBits) & mbarCountMask)
	if v >= 1<<(mbarCountBits-1) {
		v -= 1 << mbarCountBits
	}
	return v
}
func (s mbarrierState) parity() int { return int(s >> 63) }

func makeMbarrierState(pending, expected, tx, parity int) mbarrierState {
	return mbarrierState(uint64(pending)&mbarCountMask |
		(uint64(expected)&mbarCountMask)<<mbarCountBits |
		(uint64(tx)&mbarCountMask)<<(2*mbarCountBits) |
		uint64(parity&1)<<63)
}

// step applies arrivals and delivered bytes and completes the phase when
// nothing is pending.
func (s mbarrierState) step(arrivals, txAdd int) (mbarrierState, error) {
	p, tx := s.pending()-arrivals, s.tx()+txAdd
	if p < 0 {
		return s, fmt.Errorf("more arrivals than the %d the mbarrier expects in its phase", s.expected())
	}
	if tx > MbarrierMaxCount || tx < -MbarrierMaxCount {
		return s, fmt.Errorf("transaction count %d is out of range", tx)
	}
	if p == 0 && tx == 0 {
		return makeMbarrierState(s.expected(), s.expected(), 0, s.parity()^1), nil
	}
	return makeMbarrierState(p, s.expected(), tx, s.parity()), nil
}

// mbarrierWord checks that bar is an 8-byte aligned word of the block's
// shared memory and returns it.
func mbarrierWord(th *thread, bar *uint64, what string) *uint64 {
	p := unsafe.Pointer(bar)
	if p == nil || uintptr(p)%8 != 0 || !th.blk.shared.contains(p, 8) {
		panic(fmt.Sprintf("gpu.%s: the mbarrier %p is not an 8-byte aligned word of this block's shared memory", what, p))
	}
	return bar
}

func mbarrierUpdate(th *thread, bar *uint64, what string, arrivals, txAdd int) uint64 {
	w := mbarrierWord(th, bar, what)
	for {
		old := atomic.LoadUint64(w)
		s, err := mbarrierState(old).step(arrivals, txAdd)
		if err != nil {
			panic(fmt.Sprintf("gpu.%s: %v", what, err))
		}
		if atomic.CompareAndSwapUint64(w, old, uint64(s)) {
			return old
		}
	}
}

func mbarrierInit(th *thread, bar *uint64, count int) {
	if count < 1 || count > MbarrierMaxCount {
		panic(fmt.Sprintf("gpu.MbarrierInit: count %d is not in 1..%d", count, MbarrierMaxCount))
	}
	atomic.StoreUint64(mbarrierWord(th, bar, "MbarrierInit"), uint64(makeMbarrierState(count, count, 0, 0)))
}

func mbarrierArrive(th *thread, bar *uint64, bytes int) uint64 {
	if bytes < 0 || bytes > MbarrierMaxCount {
		panic(fmt.Sprintf("gpu.MbarrierArriveExpectTx: %d bytes is not in 0..%d", bytes, MbarrierMaxCount))
	}
	return mbarrierUpdate(th, bar, "MbarrierArrive", 1, bytes)
}

func mbarrierCompleteTx(th *thread, bar *uint64, bytes int) {
	if bytes < 0 || bytes > MbarrierMaxCount {
		panic(fmt.Sprintf("gpu.MbarrierCompleteTx: %d bytes is not in 0..%d", bytes, MbarrierMaxCount))
	}
	mbarrierUpdate(th, bar, "MbarrierCompleteTx", 0, -bytes)
}

func mbarrierTryWait(th *thread, bar *uint64, parity int) bool {
	s := mbarrierState(atomic.LoadUint64(mbarrierWord(th, bar, "MbarrierTryWait")))
	if s.parity() != parity&1 {
		return true
	}
	runtime.Gosched()
	return false
}

func mbarrierInval(th *thread, bar *uint64) {
	atomic.StoreUint64(mbarrierWord(th, bar, "MbarrierInval"), 0)
}
