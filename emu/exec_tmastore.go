package emu

// TMA stores (cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group,
// PTX ISA §9.7.9.25.5.1) and the bulk async-group instructions
// (cp.async.bulk.commit_group, cp.async.bulk.wait_group{.read},
// §9.7.9.25.6), from a tensor map in kern's layout (gpu.EncodeTensorMap).
//
// Model: a store is recorded at issue and performed (shared memory read,
// global memory written, elements outside the tensor skipped) when the
// issuing warp waits on a bulk group or its turn ends, whichever is
// first; a wait completes every store the warp issued (the hardware may
// complete earlier than asked). A kernel that overwrites the shared box
// before cp.async.bulk.wait_group.read therefore stores the new contents,
// as it may on a GPU. Group counts are not tracked beyond that.

import (
	"math/bits"

	"github.com/gokern/kern/gpu"
)

// tmaStore is an issued store waiting to be performed.
type tmaStore struct {
	lane int
	tm   gpu.TensorMap2D
	x, y int64
	src  uint64
}

// decBulkGroup decodes cp.async.bulk.commit_group and
// cp.async.bulk.wait_group{.read} n.
func decBulkGroup(d *decoder, s *astStmt, in *inst) {
	switch {
	case containsWord(s.op, "commit_group"):
		d.want(s, 0)
		in.fn = func(*warp, *inst, uint32) error { return nil }
	case containsWord(s.op, "wait_group"):
		if !d.want(s, 1) {
			return
		}
		in.ops[0] = d.src(s.args[0], tU32)
		if in.ops[0].kind != oImm {
			d.errorf("%s: the group count must be a constant", s.op)
		}
		in.fn = func(w *warp, in *inst, m uint32) error { return w.b.flushTMAStores(w) }
	default:
		d.errorf("%s: unsupported bulk group operation", s.op)
	}
}

// decTMAStore decodes cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// [tensorMap, {x, y}], [src].
func decTMAStore(d *decoder, s *astStmt, in *inst) {
	if !containsWord(s.op, "2d") || !containsWord(s.op, "shared::cta") {
		d.errorf("%s: emu supports cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", s.op)
		return
	}
	if len(s.args) != 2 || s.args[0].kind != aAddr || len(s.args[0].elems) != 1 {
		d.errorf("%s: want [tensorMap, {x, y}], [src]", s.op)
		return
	}
	mapArg := s.args[0]
	coords := mapArg.elems[0]
	mapArg.elems = nil
	in.ops[0] = d.addr(mapArg, spGeneric)
	in.ops[1] = d.vecRegs(coords, 2, tS32, true)
	in.ops[2] = d.addr(s.args[1], spShared)
	in.space = spShared
	in.fn = func(w *warp, in *inst, mask uint32) error {
		for mm := mask; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			tm, err := w.tensorMap(&in.ops[0], l)
			if err != nil {
				return err
			}
			vec := func(i int) int64 { return w.tensorCoord(&in.ops[1], i, l) }
			src := w.addrOf(&in.ops[2], l)
			sw := tm.Swizzle.Bytes()
			if src%128 != 0 || tm.Swizzle != gpu.SwizzleNone && src%uint64(8*sw) != 0 {
				return faultf(l, ErrMisaligned, "cp.async.bulk.tensor: shared source %#x is not aligned to %d bytes", src, max(128, 8*sw))
			}
			w.b.stores = append(w.b.stores, tmaStore{lane: l, tm: tm, x: vec(0), y: vec(1), src: src})
		}
		return nil
	}
}

// flushTMAStores performs the TMA stores the current warp issued; an
// error is a lane error of the instruction that issued the wait (or, at
// the end of a turn, of the warp's current instruction).
func (b *block) flushTMAStores(w *warp) error {
	for _, st := range b.stores {
		tm, eb, sw := st.tm, st.tm.ElemBytes, st.tm.Swizzle.Bytes()
		for r := 0; r < tm.Box[1]; r++ {
			for col := 0; col < tm.Box[0]; col++ {
				gx, gy := st.x+int64(col), st.y+int64(r)
				if gx < 0 || gy < 0 || gx >= int64(tm.Dims[0]) || gy >= int64(tm.Dims[1]) {
					continue
				}
				off := int(st.src) + (r*tm.Box[0]+col)*eb
				if tm.Swizzle != gpu.SwizzleNone {
					off = swizzleAddr(off, sw)
				}
				in, err := w.access(spShared, uint64(off), eb, eb, st.lane, AccessLoad)
				if err != nil {
					return err
				}
				val := append([]byte(nil), in...)
				out, err := w.access(spGlobal, uint64(tm.Base)+uint64(gy)*uint64(tm.RowBytes)+uint64(gx)*uint64(eb), eb, eb, st.lane, AccessStore)
				if err != nil {
					return err
				}
				copy(out, val)
			}
		}
	}
	b.stores = b.stores[:0]
	return nil
}
