package emu

// Warp-level matrix instructions: mma.sync and ldmatrix (PTX ISA §9.7.14.5
// "Matrix multiply-accumulate operation using mma instruction", §9.7.14.5.15
// ldmatrix).
//
// Fragment layouts (PTX ISA "Matrix Fragments for mma.m16n8k16 with
// floating point type" and "Matrix Fragments for mma.m16n8k32"), with
// g = laneid/4 (groupID) and t = laneid%4 (threadID_in_group); elements
// are numbered low to high across the registers of an operand:
//
//	m16n8k16 .f16/.bf16, 2 per .b32 register:
//	  A (16x16, .row) a_i: row g + 8*((i>>1)&1), col 2t + (i&1) + 8*(i>>2)
//	  B (16x8,  .col) b_i: row 2t + (i&1) + 8*(i>>1), col g
//	m16n8k32 .s8/.u8, 4 per .b32 register:
//	  A (16x32) a_i: row g + 8*((i>>2)&1), col 4t + (i&3) + 16*(i>>3)
//	  B (32x8)  b_i: row 4t + (i&3) + 16*(i>>2), col g
//	C, D (16x8) c_i: row g + 8*(i>>1), col 2t + (i&1)
//
// emu computes each D element as C plus the products summed in k order in
// float64 and rounded once to f32; a tensor core's accumulation order and
// intermediate precision are implementation-defined, so results with
// rounding in the sums may differ from a GPU in the last bits. Integer
// shapes wrap modulo 2^32 (or clamp with .satfinite).

import (
	"math"
	"math/bits"
	"sync"
)

// mmaShape describes one supported mma form.
type mmaShape struct {
	m, n, k    int
	aRegs      int
	bRegs      int
	perReg     int // A and B elements per register
	elemBits   int
	aRow, aCol func(g, t, i int) int
	bRow, bCol func(g, t, i int) int
}

var (
	shapeM16N8K16 = mmaShape{m: 16, n: 8, k: 16, aRegs: 4, bRegs: 2, perReg: 2, elemBits: 16,
		aRow: func(g, t, i int) int { return g + 8*(i>>1&1) },
		aCol: func(g, t, i int) int { return 2*t + i&1 + 8*(i>>2) },
		bRow: func(g, t, i int) int { return 2*t + i&1 + 8*(i>>1) },
		bCol: func(g, t, i int) int { return g },
	}
	shapeM16N8K32 = mmaShape{m: 16, n: 8, k: 32, aRegs: 4, bRegs: 2, perReg: 4, elemBits: 8,
		aRow: func(g, t, i int) int { return g + 8*(i>>2&1) },
		aCol: func(g, t, i int) int { return 4*t + i&3 + 16*(i>>3) },
		bRow: func(g, t, i int) int { return 4*t + i&3 + 16*(i>>2) },
		bCol: func(g, t, i int) int { return g },
	}
)

func cRow(g, t, i int) int { return g + 8*(i>>1) }
func cCol(g, t, i int) int { return 2*t + i&1 }

// decMma decodes mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype.
func decMma(d *decoder, s *astStmt, m *mods, in *inst) {
	shape := m.oneOf("m16n8k16", "m16n8k32")
	row, col := m.word("row"), m.word("col")
	satf := m.flags&fSatFinite != 0
	if shape == "" || !row || !col || len(m.types) != 4 {
		d.errorf("%s: supported forms are mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 and m16n8k32.row.col.s32.{s8,u8}.{s8,u8}.s32", s.op)
		m.words = nil
		return
	}
	dt, at, bt, ct := m.types[0], m.types[1], m.types[2], m.types[3]
	var sh mmaShape
	var elem func(v uint64, signed bool) float64
	isInt := false
	switch {
	case shape == "m16n8k16" && dt == tF32 && ct == tF32 && at == bt && (at == tF16 || at == tBF16):
		sh = shapeM16N8K16
		if at == tF16 {
			elem = func(v uint64, _ bool) float64 { return f16ToF64(v) }
		} else {
			elem = func(v uint64, _ bool) float64 { return bf16ToF64(v) }
		}
	case shape == "m16n8k32" && dt == tS32 && ct == tS32 && (at == tS8 || at == tU8) && (bt == tS8 || bt == tU8):
		sh = shapeM16N8K32
		isInt = true
	default:
		d.errorf("%s: unsupported type combination", s.op)
		return
	}
	if !d.want(s, 4) {
		return
	}
	in.ops[0] = d.vecRegs(s.args[0], 4, tNone, false)
	in.ops[1] = d.vecRegs(s.args[1], sh.aRegs, tNone, false)
	in.ops[2] = d.vecRegs(s.args[2], sh.bRegs, tNone, false)
	in.ops[3] = d.vecRegs(s.args[3], 4, tNone, false)
	in.ctl = ctlWarp // .aligned: the whole warp executes it together
	aSigned, bSigned := at == tS8, bt == tS8
	if !isInt {
		conv := f16Table()
		if at == tBF16 {
			conv = bf16Table()
		}
		in.fn = func(w *warp, in *inst, m uint32) error { return mmaF32(w, in, m, conv) }
		return
	}
	in.fn = func(w *warp, in *inst, m uint32) error {
		if m != w.valid&^w.exited || m != 0xffffffff {
			return faultf(bits.TrailingZeros32(^m), ErrTrap, "mma.sync.aligned needs all 32 lanes of the warp, have %#08x", m)
		}
		var A [16][32]float64
		var B [32][8]float64
		var Ai [16][32]int64
		var Bi [32][8]int64
		per, eb := sh.perReg, uint(sh.elemBits)
		emask := uint64(1)<<eb - 1
		for l := 0; l < 32; l++ {
			g, t := l/4, l%4
			for i := 0; i < sh.aRegs*per; i++ {
				v := w.regs[int(in.ops[1].vec[i/per])+l] >> (eb * uint(i%per)) & emask
				r, c := sh.aRow(g, t, i), sh.aCol(g, t, i)
				if isInt {
					Ai[r][c] = intElem(v, aSigned)
				} else {
					A[r][c] = elem(v, false)
				}
			}
			for i := 0; i < sh.bRegs*per; i++ {
				v := w.regs[int(in.ops[2].vec[i/per])+l] >> (eb * uint(i%per)) & emask
				r, c := sh.bRow(g, t, i), sh.bCol(g, t, i)
				if isInt {
					Bi[r][c] = intElem(v, bSigned)
				} else {
					B[r][c] = elem(v, false)
				}
			}
		}
		// Compute every lane's D before writing any: D may alias A, B or C.
		var D [32][4]uint64
		for l := 0; l < 32; l++ {
			g, t := l/4, l%4
			for i := 0; i < 4; i++ {
				r, c := cRow(g, t, i), cCol(g, t, i)
				cv := w.regs[int(in.ops[3].vec[i])+l]
				if isInt {
					acc := int64(int32(cv))
					for k := 0; k < sh.k; k++ {
						acc += Ai[r][k] * Bi[k][c]
					}
					if satf {
						acc = min(max(acc, math.MinInt32), math.MaxInt32)
					}
					D[l][i] = uint64(uint32(int32(acc)))
					continue
				}
				acc := float64(math.Float32frombits(uint32(cv)))
				for k := 0; k < sh.k; k++ {
					acc += A[r][k] * B[k][c]
				}
				D[l][i] = out32(float32(acc), 0)
			}
		}
		for l := 0; l < 32; l++ {
			for i, r := range in.ops[0].vec {
				w.regs[int(r)+l] = D[l][i]
			}
		}
		return nil
	}
}

func intElem(v uint64, signed bool) int64 {
	if signed {
		return int64(int8(v))
	}
	return int64(v)
}

// decLdmatrix decodes ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}
// {.shared}.b16 {r...}, [p]: lanes 8i..8i+7 give the row addresses of
// matrix i (16 bytes per row); lane L receives in register i the elements
// (L/4, 2(L%4)) and (L/4, 2(L%4)+1) of matrix i, low half first, or with
// .trans the elements (2(L%4), L/4) and (2(L%4)+1, L/4).
func decLdmatrix(d *decoder, s *astStmt, m *mods, in *inst) {
	shape := m.word("m8n8")
	num := m.oneOf("x1", "x2", "x4")
	t := d.oneType(s, m)
	if !shape || num == "" || t != tB16 || !d.want(s, 2) {
		d.errorf("%s: want ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16", s.op)
		return
	}
	if m.hasSp && m.space != spShared {
		d.errorf("%s: ldmatrix reads .shared memory", s.op)
		return
	}
	n := int(num[1] - '0')
	in.space = m.space
	if !m.hasSp {
		in.space = spGeneric
	}
	in.ops[0] = d.vecRegs(s.args[0], n, tNone, false)
	in.ops[1] = d.addr(s.args[1], in.space)
	in.ctl = ctlWarp
	trans := m.flags&fTrans != 0
	in.fn = func(w *warp, in *inst, m uint32) error {
		if m != w.valid&^w.exited || m != 0xffffffff {
			return faultf(bits.TrailingZeros32(^m), ErrTrap, "ldmatrix.sync.aligned needs all 32 lanes of the warp, have %#08x", m)
		}
		var mat [4][8][8]uint16
		for i := 0; i < n; i++ {
			for r := 0; r < 8; r++ {
				l := 8*i + r
				addr := w.addrOf(&in.ops[1], l)
				if sp, _ := resolve(in.space, addr); sp != spShared {
					return faultf(l, ErrOutOfBounds, "ldmatrix row address %#x is not in shared memory", addr)
				}
				buf, err := w.access(in.space, addr, 16, 16, l, AccessLoad)
				if err != nil {
					return err
				}
				for c := 0; c < 8; c++ {
					mat[i][r][c] = uint16(loadLE(buf[2*c:], 2))
				}
			}
		}
		for l := 0; l < 32; l++ {
			r, c := l/4, 2*(l%4)
			for i := 0; i < n; i++ {
				lo, hi := mat[i][r][c], mat[i][r][c+1]
				if trans {
					lo, hi = mat[i][c][r], mat[i][c+1][r]
				}
				w.regs[int(in.ops[0].vec[i])+l] = uint64(lo) | uint64(hi)<<16
			}
		}
		if w.obs != nil {
			w.observe(in, &in.ops[1], uint32(1<<(8*n)-1), AccessLoad, 16)
		}
		return nil
	}
}

// f16Table and bf16Table map every 16-bit pattern to its value, so the
// m16n8k16 path converts an element with one load.
var (
	f16Table  = sync.OnceValue(func() *[1 << 16]float64 { return halfTable(f16ToF64) })
	bf16Table = sync.OnceValue(func() *[1 << 16]float64 { return halfTable(bf16ToF64) })
)

func halfTable(conv func(uint64) float64) *[1 << 16]float64 {
	t := new([1 << 16]float64)
	for i := range t {
		t[i] = conv(uint64(i))
	}
	return t
}

// mmaF32 executes mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.*.f32:
// it gathers A (16×16) and B (16×8, kept transposed so each column is
// contiguous) from the lanes' fragments (layout in shapeM16N8K16), then
// for each lane's four D elements sums C and the k products in float64,
// in k order, rounding once to float32.
func mmaF32(w *warp, in *inst, m uint32, conv *[1 << 16]float64) error {
	if m != w.valid&^w.exited || m != 0xffffffff {
		return faultf(bits.TrailingZeros32(^m), ErrTrap, "mma.sync.aligned needs all 32 lanes of the warp, have %#08x", m)
	}
	var A [16][16]float64
	var Bt [8][16]float64
	a, b := in.ops[1].vec, in.ops[2].vec
	for l := 0; l < 32; l++ {
		g, t := l/4, l%4
		for i := 0; i < 8; i++ {
			v := w.regs[int(a[i>>1])+l] >> (16 * uint(i&1)) & 0xffff
			A[g+8*(i>>1&1)][2*t+i&1+8*(i>>2)] = conv[v]
		}
		for i := 0; i < 4; i++ {
			v := w.regs[int(b[i>>1])+l] >> (16 * uint(i&1)) & 0xffff
			Bt[g][2*t+i&1+8*(i>>1)] = conv[v]
		}
	}
	// Compute every lane's D before writing any: D may alias A, B or C.
	var D [32][4]uint64
	c := in.ops[3].vec
	for l := 0; l < 32; l++ {
		g, t := l/4, l%4
		for i := 0; i < 4; i++ {
			row, col := &A[g+8*(i>>1)], &Bt[2*t+i&1]
			acc := float64(math.Float32frombits(uint32(w.regs[int(c[i])+l])))
			for k := 0; k < 16; k++ {
				acc += row[k] * col[k]
			}
			D[l][i] = out32(float32(acc), 0)
		}
	}
	for l := 0; l < 32; l++ {
		for i, r := range in.ops[0].vec {
			w.regs[int(r)+l] = D[l][i]
		}
	}
	return nil
}
