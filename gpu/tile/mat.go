package tile

import "github.com/gokern/kern/gpu"

// 2-D tiles (Mat) and their views. A Mat[R, K] with R = [I][J]float32 is a
// tile of TM×TN elements, TM = I·W and TN = 32·J, W = the block's warps
// (BlockDim().X/32, so the block is a multiple of 32 threads). Warp w
// owns rows w·I … w·I+I-1 of the tile; in each, lane l holds columns
// l, l+32, …, l+32(J-1). Register [i][j] of lane l of warp w is element
// (w·I+i, 32j+l):
//
//   - for each register a warp touches 32 consecutive elements of one
//     row, so loads and stores coalesce;
//   - a row lies in one warp, so a reduction along a row is registers
//     plus a shuffle butterfly, no shared memory and no barrier;
//   - a reduction down a column crosses the warps, through shared memory.
//
// Both extents are powers of two (I in 1…32: Regs2; J in 1…32: Regs; W is
// the caller's); the shape is fixed by the kernel's type argument and its
// block=.

// Regs2 is the per-thread register array of a 2-D tile, [I]K with K =
// [J]float32 (Regs) and I a power of two up to 32. (A 2-D tile names its
// register row type K beside R, Mat[[2][4]float32, [4]float32]: Go
// indexes a type parameter only when every type in its set has the same
// element type, so the row type is a parameter of its own.)
type Regs2[K Regs] interface {
	[1]K | [2]K | [4]K | [8]K | [16]K | [32]K
}

// Mat is a 2-D tile spread over the block's warps (see the layout above).
type Mat[R Regs2[K], K Regs] struct{ v R }

// FullMat returns a 2-D tile with every element v.
func FullMat[R Regs2[K], K Regs](v float32) Mat[R, K] {
	var m Mat[R, K]
	//kern:unroll
	for i := range len(m.v) {
		//kern:unroll
		for j := range len(m.v[i]) {
			m.v[i][j] = v
		}
	}
	return m
}

// Shape is the extent TM×TN of a tile of shape R in the calling block:
// (I·W, 32·J).
func Shape[R Regs2[K], K Regs](t gpu.Thread) (int, int) {
	var r R
	return len(r) * (t.BlockDim().X / gpu.WarpSize), len(r[0]) * gpu.WarpSize
}

// origin is the element of the tile (ti, tj) of shape R held by register
// [0][0] of the calling thread: its warp's first row, its lane's column.
func origin[R Regs2[K], K Regs](t gpu.Thread, ti, tj int) (int, int) {
	var r R
	tm, tn := Shape[R, K](t)
	return ti*tm + t.Warp()*len(r), tj*tn + t.Lane()
}

// InMat is a read-only view of a row-major matrix of rows × cols elements
// (ld elements from one row to the next).
type InMat[T any, C Codec[T]] struct {
	s              In[T, C]
	rows, cols, ld int
}

// Matrix views v as a row-major matrix of rows × cols. Rows past the end
// of v are dropped (so a load never reads past it).
func (v In[T, C]) Matrix(rows, cols int) InMat[T, C] {
	if cols > 0 {
		rows = min(rows, len(v)/cols)
	}
	return InMat[T, C]{s: v, rows: rows, cols: cols, ld: cols}
}

// LoadMat loads tile (ti, tj) of v, the one whose element (0, 0) is
// v(ti·TM, tj·TN): elements outside v's rows and columns are fill (the
// mask of the ragged edges).
func LoadMat[R Regs2[K], K Regs, T any, C Codec[T]](t gpu.Thread, v InMat[T, C], ti, tj int, fill float32) Mat[R, K] {
	var c C
	var m Mat[R, K]
	r0, c0 := origin[R, K](t, ti, tj)
	//kern:unroll
	for i := range len(m.v) {
		//kern:unroll
		for j := range len(m.v[i]) {
			if r, col := r0+i, c0+j*gpu.WarpSize; r < v.rows && col < v.cols {
				m.v[i][j] = c.load(v.s[r*v.ld+col])
			} else {
				m.v[i][j] = fill
			}
		}
	}
	return m
}

// BroadcastRow loads columns tj·TN … of the vector v as a row and
// repeats it down the tile: element (r, c) is v[tj·TN+c] (fill past the
// end of v). Each thread loads J elements.
func BroadcastRow[R Regs2[K], K Regs, T any, C Codec[T]](t gpu.Thread, v In[T, C], tj int, fill float32) Mat[R, K] {
	var c C
	var m Mat[R, K]
	_, c0 := origin[R, K](t, 0, tj)
	//kern:unroll
	for j := range len(m.v[0]) {
		x := fill
		if col := c0 + j*gpu.WarpSize; col < len(v) {
			x = c.load(v[col])
		}
		//kern:unroll
		for i := range len(m.v) {
			m.v[i][j] = x
		}
	}
	return m
}

// BroadcastCol loads rows ti·TM … of the vector v as a column and
// repeats it across the tile: element (r, c) is v[ti·TM+r] (fill past the
// end of v). Each thread loads I elements.
func BroadcastCol[R Regs2[K], K Regs, T any, C Codec[T]](t gpu.Thread, v In[T, C], ti int, fill float32) Mat[R, K] {
	var c C
	var m Mat[R, K]
	r0, _ := origin[R, K](t, ti, 0)
	//kern:unroll
	for i := range len(m.v) {
		x := fill
		if r := r0 + i; r < len(v) {
			x = c.load(v[r])
		}
		//kern:unroll
		for j := range len(m.v[i]) {
			m.v[i][j] = x
		}
	}
	return m
}

// PartMat is the calling block's partition of a matrix output: one tile
// of shape R, the block's own. Its fields are unexported, so it cannot be
// re-pointed; StoreMat takes only tiles of its shape R, so two blocks'
// tiles never overlap.
type PartMat[T any, C Codec[T], R Regs2[K], K Regs] struct {
	s              []T
	r0, c0         int // element (0, 0) of the block's tile
	rows, cols, ld int
}

// Tiles partitions s, a row-major matrix of rows × cols, into tiles of
// shape R, one per block: block (x, y) of the grid owns tile (y, x)
// (TileOf). A block with a Z index above 0 gets an empty partition.
func Tiles[C Codec[T], R Regs2[K], K Regs, T any](t gpu.Thread, s []T, rows, cols int) PartMat[T, C, R, K] {
	ti, tj := TileOf(t)
	tm, tn := Shape[R, K](t)
	if cols > 0 {
		rows = min(rows, len(s)/cols)
	}
	if t.BlockIdx().Z != 0 {
		rows = 0
	}
	return PartMat[T, C, R, K]{s: s, r0: ti * tm, c0: tj * tn, rows: rows, cols: cols, ld: cols}
}

// TileOf is the tile (ti, tj) the calling block owns in a Tiles
// partition, for loading the same tile of an input: (BlockIdx().Y,
// BlockIdx().X).
func TileOf(t gpu.Thread) (int, int) {
	b := t.BlockIdx()
	return b.Y, b.X
}

// StoreMat writes m to the block's tile of p: the elements inside the
// matrix (the ragged edges are masked).
func StoreMat[R Regs2[K], K Regs, T any, C Codec[T]](t gpu.Thread, p PartMat[T, C, R, K], m Mat[R, K]) {
	var c C
	r0 := p.r0 + t.Warp()*len(m.v)
	c0 := p.c0 + t.Lane()
	//kern:unroll
	for i := range len(m.v) {
		//kern:unroll
		for j := range len(m.v[i]) {
			if r, col := r0+i, c0+j*gpu.WarpSize; r < p.rows && col < p.cols {
				p.s[r*p.ld+col] = c.store(m.v[i][j])
			}
		}
	}
}
