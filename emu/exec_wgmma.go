package emu

// Warpgroup MMA (PTX ISA §9.7.15): wgmma.fence, wgmma.commit_group,
// wgmma.wait_group and wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}
// with A from a shared-memory matrix descriptor or registers and B from a
// descriptor, each K-major (imm-trans 0) or MN-major (imm-trans 1,
// wgmma_major.go).
//
// Warp i of a warpgroup (warp id mod 4) owns rows 16i..16i+15 of the
// 64×N result, so emu executes the instruction per warp: no warp needs
// another's registers. D layout (PTX ISA §9.7.15, "Register Fragments"),
// g = lane/4, q = lane%4: d[4j+c] is D[16i+g+8(c/2)][8j+2q+c%2]. A in
// registers uses mma.m16n8k16's A layout for the warp's 16 rows.
//
// Descriptor addressing (§9.7.15, "Matrix Descriptor Format" and the
// shared-memory layouts), for a 16-bit element (row, k) of a K-major
// operand, start/lbo/sbo from bits 0-13/16-29/32-45 (×16 bytes):
//
//	no swizzle:       start + row/8·sbo + k/8·lbo + row%8·16 + k%8·2
//	W-byte swizzle:   a = start + row/8·sbo + row%8·W + 2k, then bits
//	                  4.. of a XORed with bits 7.. (1, 2, 3 bits for
//	                  W = 32, 64, 128)
//
// gpu.WGMMAElemOffset is the same function in native mode.
//
// Asynchrony: mma_async computes its result at issue but writes the D
// registers only when a wait_group retires its group; a later mma_async on
// the same registers reads the pending value, as the hardware chains
// accumulators. A kernel that reads D before waiting sees the old values,
// so a missing wait fails on emu as it can on a GPU. Sums: C plus the
// products in k order in float64, rounded once to f32, as emu's mma.sync.

import (
	"encoding/binary"

	"math"
	"math/bits"
	"strconv"
	"strings"
)

// wgOp is one issued mma_async: its D registers and their new values.
type wgOp struct {
	seq  uint64
	regs []int32
	vals [][32]uint64
}

type wgState struct {
	seq    uint64
	open   []wgOp   // issued since the last commit
	groups [][]wgOp // committed, oldest first
	latest map[int32]wgLatest
}

type wgLatest struct {
	seq  uint64
	vals *[32]uint64
}

func (w *warp) wgmmaState() *wgState {
	if w.wg == nil {
		w.wg = &wgState{latest: map[int32]wgLatest{}}
	}
	return w.wg
}

// wgRead returns register r of lane l as the next mma_async sees it.
func (w *warp) wgRead(r int32, l int) uint64 {
	if w.wg != nil {
		if p, ok := w.wg.latest[r]; ok {
			return p.vals[l]
		}
	}
	return w.regs[int(r)+l]
}

// wgRetire writes the results of all but the newest keep groups.
func (w *warp) wgRetire(keep int) {
	s := w.wg
	if s == nil {
		return
	}
	for len(s.groups) > keep {
		for _, op := range s.groups[0] {
			for i, r := range op.regs {
				copy(w.regs[int(r):int(r)+32], op.vals[i][:])
				if p, ok := s.latest[r]; ok && p.seq == op.seq {
					delete(s.latest, r)
				}
			}
		}
		s.groups = s.groups[1:]
	}
}

// decWgmma decodes the wgmma family.
func decWgmma(d *decoder, s *astStmt, m *mods, in *inst) {
	switch {
	case m.word("fence"):
		m.words = nil
		in.fn = func(*warp, *inst, uint32) error { return nil }
	case m.word("commit_group"):
		m.words = nil
		in.fn = func(w *warp, in *inst, mask uint32) error {
			st := w.wgmmaState()
			st.groups = append(st.groups, st.open)
			st.open = nil
			return nil
		}
	case m.word("wait_group"):
		m.words = nil
		if !d.want(s, 1) {
			return
		}
		in.ops[0] = d.src(s.args[0], tU32)
		if in.ops[0].kind != oImm {
			d.errorf("%s: the group count must be a constant", s.op)
		}
		in.fn = func(w *warp, in *inst, mask uint32) error {
			w.wgRetire(int(in.ops[0].imm))
			return nil
		}
	case m.word("mma_async"):
		decWgmmaMMA(d, s, m, in)
	default:
		d.errorf("%s: unsupported wgmma operation", s.op)
		m.words = nil
	}
}

func decWgmmaMMA(d *decoder, s *astStmt, m *mods, in *inst) {
	n := 0
	for _, w := range m.words {
		if strings.HasPrefix(w, "m64n") && strings.HasSuffix(w, "k16") {
			n, _ = strconv.Atoi(w[4 : len(w)-3])
			m.word(w)
			break
		}
	}
	if n < 8 || n > 256 || n%8 != 0 || len(m.types) != 3 || m.types[0] != tF32 || m.types[1] != m.types[2] || (m.types[1] != tF16 && m.types[1] != tBF16) {
		d.errorf("%s: emu supports wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}", s.op)
		m.words = nil
		return
	}
	conv := f16Table()
	if m.types[1] == tBF16 {
		conv = bf16Table()
	}
	m.words, m.types = nil, nil
	regA := len(s.args) == 7
	if !regA && len(s.args) != 8 {
		d.errorf("%s: want d, a-desc|{a}, b-desc, scale-d, imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b", s.op)
		return
	}
	in.ops[0] = d.vecRegs(s.args[0], n/2, tNone, false)
	if regA {
		in.ops[1] = d.vecRegs(s.args[1], 4, tNone, false)
	} else {
		in.ops[1] = d.src(s.args[1], tU64)
	}
	in.ops[2] = d.src(s.args[2], tU64)
	in.ops[3] = d.src(s.args[3], tPred)
	var imm []int64
	for _, a := range s.args[4:] {
		o := d.src(a, tS32)
		if o.kind != oImm {
			d.errorf("%s: imm-scale and imm-trans operands must be constants", s.op)
			return
		}
		imm = append(imm, int64(int32(o.imm)))
	}
	scaleA, scaleB := float64(imm[0]), float64(imm[1])
	if math.Abs(scaleA) != 1 || math.Abs(scaleB) != 1 {
		d.errorf("%s: imm-scale-a and imm-scale-b must be 1 or -1", s.op)
		return
	}
	// imm-trans-a (descriptor A only) and imm-trans-b: 0 K-major, 1
	// MN-major (wgmma_major.go).
	var transA, transB bool
	for i, t := range imm[2:] {
		if t != 0 && t != 1 {
			d.errorf("%s: imm-trans must be 0 or 1", s.op)
			return
		}
		if i == len(imm)-3 {
			transB = t == 1
		} else {
			transA = t == 1
		}
	}
	in.ctl = ctlWarp
	in.fn = func(w *warp, in *inst, mask uint32) error {
		if mask != 0xffffffff || w.valid&^w.exited != 0xffffffff {
			return faultf(bits.TrailingZeros32(^mask), ErrTrap, "wgmma.mma_async needs all 32 lanes of each warp of the warpgroup, have %#08x", mask)
		}
		wi := w.id % 4
		load := func(desc uint64, mn bool, row, k, l int) (float64, error) {
			off := uint64(wgmmaOperandOffset(desc, mn, row, k))
			b, err := w.access(spShared, off, 2, 2, l, AccessLoad)
			if err != nil {
				return 0, err
			}
			return conv[binary.LittleEndian.Uint16(b)], nil
		}
		// A: 16 rows × 16 k for this warp, B: n × 16, read once per warp
		// (every lane's descriptors must agree).
		var A [16][16]float64
		B := make([][16]float64, n)
		bDesc := w.get(&in.ops[2], 0)
		var aDesc uint64
		if !regA {
			aDesc = w.get(&in.ops[1], 0)
		}
		for l := 1; l < 32; l++ {
			if w.get(&in.ops[2], l) != bDesc || !regA && w.get(&in.ops[1], l) != aDesc {
				return faultf(l, ErrTrap, "wgmma.mma_async: lanes of the warp pass different matrix descriptors")
			}
		}
		var err error
		for r := range 16 {
			for k := range 16 {
				if regA {
					g, q := r%8, k%8/2
					reg := r/8 + 2*(k/8)
					v := w.regs[int(in.ops[1].vec[reg])+4*g+q] >> (16 * uint(k%2)) & 0xffff
					A[r][k] = conv[v]
				} else if A[r][k], err = load(aDesc, transA, 16*wi+r, k, 0); err != nil {
					return err
				}
				A[r][k] *= scaleA
			}
		}
		for c := range n {
			for k := range 16 {
				if B[c][k], err = load(bDesc, transB, c, k, 0); err != nil {
					return err
				}
				B[c][k] *= scaleB
			}
		}
		st := w.wgmmaState()
		st.seq++
		op := wgOp{seq: st.seq, regs: in.ops[0].vec, vals: make([][32]uint64, n/2)}
		for l := 0; l < 32; l++ {
			g, q := l/4, l%4
			acc := w.get(&in.ops[3], l)&1 != 0
			for j := 0; j < n/8; j++ {
				for c := 0; c < 4; c++ {
					i := 4*j + c
					row, col := &A[g+8*(c/2)], &B[8*j+2*q+c%2]
					var sum float64
					if acc {
						sum = float64(math.Float32frombits(uint32(w.wgRead(op.regs[i], l))))
					}
					for k := 0; k < 16; k++ {
						sum += row[k] * col[k]
					}
					op.vals[i][l] = out32(float32(sum), 0)
				}
			}
		}
		for i, r := range op.regs {
			st.latest[r] = wgLatest{seq: op.seq, vals: &op.vals[i]}
		}
		st.open = append(st.open, op)
		return nil
	}
}

// wgmmaElemOffset is the shared address of element (row, k) of a K-major
// 16-bit operand described by desc (see the file comment).
func wgmmaElemOffset(desc uint64, row, k int) int {
	start := int(desc&0x3fff) << 4
	lbo := int(desc>>16&0x3fff) << 4
	sbo := int(desc>>32&0x3fff) << 4
	var wdt int
	switch desc >> 62 {
	case 0:
		return start + row/8*sbo + k/8*lbo + row%8*16 + k%8*2
	case 1:
		wdt = 128
	case 2:
		wdt = 64
	default:
		wdt = 32
	}
	return swizzleAddr(start+row/8*sbo+row%8*wdt+2*k, wdt)
}

// swizzleAddr XORs the 16-byte chunk bits of a with its 128-byte row
// bits, log2(w/16) of them.
func swizzleAddr(a, w int) int {
	return a ^ (a>>7&(w/16-1))<<4
}
