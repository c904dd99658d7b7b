package emu

// TMA tile loads (cp.async.bulk.tensor.2d.shared::cluster.global.tile.
// mbarrier::complete_tx::bytes, PTX ISA §9.7.9.25.5.1) from a tensor map
// in kern's layout (gpu.EncodeTensorMap; a GPU's maps come from the
// driver and are opaque).
//
// Model: the copy reads global memory when issued and lands in shared
// memory, completing its bytes on the mbarrier, when the issuing warp's
// turn ends (block.go, landTMA): a thread that reads the box without
// waiting on the mbarrier sees the old contents, as it may on a GPU.
// Boxes are written row by row from the destination, each element's
// shared address swizzled by the map's mode (exec_wgmma.go, swizzleAddr);
// elements outside the tensor are zeros.

import (
	"encoding/binary"
	"math/bits"

	"github.com/gokern/kern/gpu"
)

// tmaCopy is an issued load waiting to land.
type tmaCopy struct {
	lane  int
	data  []byte   // the box, row-major
	offs  []uint64 // shared offset of each element
	eb    int
	bar   uint64
	bytes int
	// racecheck with mbarriers (race_mbarrier.go): the issuing warp's
	// clocks at issue and the instruction.
	view []uint32
	pc   int32
}

func decBulk(d *decoder, s *astStmt, m *mods, in *inst) {
	m.words, m.types = nil, nil
	switch { // stores and bulk groups: exec_tmastore.go; prefetch: exec_prefetch.go
	case containsWord(s.op, "prefetch"):
		decBulkPrefetch(d, s, in)
		return
	case containsWord(s.op, "commit_group") || containsWord(s.op, "wait_group"):
		decBulkGroup(d, s, in)
		return
	case containsWord(s.op, "bulk_group"):
		decTMAStore(d, s, in)
		return
	}
	if !containsWord(s.op, "tensor") || !containsWord(s.op, "2d") || !containsWord(s.op, "global") ||
		!containsWord(s.op, "mbarrier::complete_tx::bytes") || (!containsWord(s.op, "shared::cluster") && !containsWord(s.op, "shared::cta")) {
		d.errorf("%s: emu supports cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes", s.op)
		return
	}
	if len(s.args) != 3 || s.args[1].kind != aAddr || len(s.args[1].elems) != 1 {
		d.errorf("%s: want [dst], [tensorMap, {x, y}], [mbar]", s.op)
		return
	}
	in.ops[0] = d.addr(s.args[0], spShared)
	mapArg := s.args[1]
	coords := mapArg.elems[0]
	mapArg.elems = nil
	in.ops[1] = d.addr(mapArg, spGeneric)
	in.ops[2] = d.vecRegs(coords, 2, tS32, true)
	in.ops[3] = d.addr(s.args[2], spShared)
	in.space = spShared
	in.fn = func(w *warp, in *inst, mask uint32) error {
		for mm := mask; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			tm, err := w.tensorMap(&in.ops[1], l)
			if err != nil {
				return err
			}
			vec := func(i int) int64 { return w.tensorCoord(&in.ops[2], i, l) }
			x, y := vec(0), vec(1)
			dst := w.addrOf(&in.ops[0], l)
			sw := tm.Swizzle.Bytes()
			if dst%128 != 0 || tm.Swizzle != gpu.SwizzleNone && dst%uint64(8*sw) != 0 {
				return faultf(l, ErrMisaligned, "cp.async.bulk.tensor: shared destination %#x is not aligned to %d bytes", dst, max(128, 8*sw))
			}
			eb := tm.ElemBytes
			c := tmaCopy{lane: l, eb: eb, bar: w.addrOf(&in.ops[3], l), bytes: tm.BoxBytes(),
				data: make([]byte, tm.BoxBytes()), offs: make([]uint64, tm.Box[0]*tm.Box[1])}
			for r := 0; r < tm.Box[1]; r++ {
				for col := 0; col < tm.Box[0]; col++ {
					i := r*tm.Box[0] + col
					off := int(dst) + i*eb
					if tm.Swizzle != gpu.SwizzleNone {
						off = swizzleAddr(off, sw)
					}
					c.offs[i] = uint64(off)
					gx, gy := x+int64(col), y+int64(r)
					if gx < 0 || gy < 0 || gx >= int64(tm.Dims[0]) || gy >= int64(tm.Dims[1]) {
						continue // zero fill
					}
					src, err := w.access(spGlobal, uint64(tm.Base)+uint64(gy)*uint64(tm.RowBytes)+uint64(gx)*uint64(eb), eb, eb, l, AccessLoad)
					if err != nil {
						return err
					}
					copy(c.data[i*eb:], src)
				}
			}
			if r := w.b.race; r != nil && r.hb != nil {
				c.view, c.pc = append([]uint32(nil), r.hb.vc[w.id]...), in.pc
			}
			w.b.tma = append(w.b.tma, c)
		}
		return nil
	}
}

// landTMA writes the issued TMA loads to shared memory and completes
// their bytes on their mbarriers.
func (b *block) landTMA(w *warp) error {
	for _, c := range b.tma {
		if b.race != nil && b.race.hb != nil {
			b.race.landHB(w, &c)
		}
		for i, off := range c.offs {
			dst, err := w.access(spShared, off, c.eb, c.eb, c.lane, AccessAsync)
			if err != nil {
				return w.fault(w.cur, err)
			}
			copy(dst, c.data[i*c.eb:(i+1)*c.eb])
		}
		buf, err := w.access(spShared, c.bar, 8, 8, c.lane, AccessAtomic)
		if err != nil {
			return w.fault(w.cur, err)
		}
		prev := mbar(binary.LittleEndian.Uint64(buf))
		next, err := prev.step(0, -c.bytes)
		if err != nil {
			return w.fault(w.cur, faultf(c.lane, ErrMbarrier, "TMA completion: %v", err))
		}
		if b.race != nil && b.race.hb != nil && next.parity() != prev.parity() {
			b.race.hb.completed(c.bar, prev.parity())
		}
		binary.LittleEndian.PutUint64(buf, uint64(next))
		b.mbarGen++
	}
	b.tma = b.tma[:0]
	return nil
}

// tensorMap reads and decodes the tensor map lane l addresses through op
// (16 words of kern's layout, gpu.EncodeTensorMap).
func (w *warp) tensorMap(op *opnd, l int) (gpu.TensorMap2D, error) {
	raw, err := w.access(spGeneric, w.addrOf(op, l), 8*gpu.TensorMapWords, 64, l, AccessLoad)
	if err != nil {
		return gpu.TensorMap2D{}, err
	}
	words := make([]uint64, gpu.TensorMapWords)
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	tm, err := gpu.DecodeTensorMap(words)
	if err != nil {
		return gpu.TensorMap2D{}, faultf(l, ErrTrap, "cp.async.bulk.tensor: %v", err)
	}
	return tm, nil
}

// tensorCoord is lane l's i-th coordinate of a tensor copy's {x, y}
// operand: a signed 32-bit register or immediate.
func (w *warp) tensorCoord(op *opnd, i, l int) int64 {
	if op.vimm != nil && op.vec[i] < 0 {
		return int64(int32(op.vimm[i]))
	}
	return int64(int32(w.regs[int(op.vec[i])+l]))
}
