package gomlx

// DotGeneral and Dot: strided copies bring lhs to [batch, M, K] and rhs
// to [batch, K, N] (skipped when already so), then one batched matmul
// kernel writes [batch, M, N], which is the output's row-major layout
// [batch..., lhs free..., rhs free...]: v2 (shared-memory tiles,
// kernels_matmul.go) when M and N are at least a tile, else v1 (one
// thread per output).

import (
	"fmt"
	"slices"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// DotGeneral implements backends.Builder.
func (bl *Builder) DotGeneral(lhs backends.Op, lhsContracting, lhsBatch []int, rhs backends.Op, rhsContracting, rhsBatch []int) (backends.Op, error) {
	op := backends.OpTypeDotGeneral
	ns, err := bl.in(op, lhs, rhs)
	if err != nil {
		return nil, err
	}
	ls, rs := ns[0].shape, ns[1].shape
	if ls.DType != rs.DType {
		return nil, opErr(op, fmt.Errorf("dtypes differ: %s and %s", ls, rs))
	}
	if err := need(op, matmulK, ls.DType); err != nil {
		return nil, err
	}
	if len(lhsContracting) != len(rhsContracting) || len(lhsBatch) != len(rhsBatch) {
		return nil, opErr(op, fmt.Errorf("axes do not pair up: contracting %v/%v, batch %v/%v", lhsContracting, rhsContracting, lhsBatch, rhsBatch))
	}
	dims := func(s shapes.Shape, axes []int) ([]int, int, error) {
		d, n := make([]int, len(axes)), 1
		for i, a := range axes {
			if a < 0 || a >= s.Rank() {
				return nil, 0, fmt.Errorf("axis %d out of range for %s", a, s)
			}
			d[i] = s.Dimensions[a]
			n *= d[i]
		}
		return d, n, nil
	}
	free := func(s shapes.Shape, used ...[]int) []int {
		var f []int
		for a := range s.Rank() {
			if !slices.Contains(used[0], a) && !slices.Contains(used[1], a) {
				f = append(f, a)
			}
		}
		return f
	}
	lFree, rFree := free(ls, lhsContracting, lhsBatch), free(rs, rhsContracting, rhsBatch)
	bd, B, err := dims(ls, lhsBatch)
	if err != nil {
		return nil, opErr(op, err)
	}
	rbd, _, err := dims(rs, rhsBatch)
	if err != nil {
		return nil, opErr(op, err)
	}
	lcd, K, err := dims(ls, lhsContracting)
	if err != nil {
		return nil, opErr(op, err)
	}
	rcd, _, err := dims(rs, rhsContracting)
	if err != nil {
		return nil, opErr(op, err)
	}
	if !slices.Equal(bd, rbd) || !slices.Equal(lcd, rcd) {
		return nil, opErr(op, fmt.Errorf("%s and %s: batch dims %v/%v or contracting dims %v/%v differ", ls, rs, bd, rbd, lcd, rcd))
	}
	lfd, M, _ := dims(ls, lFree)
	rfd, N, _ := dims(rs, rFree)
	shape := shapes.Make(ls.DType, slices.Concat(bd, lfd, rfd)...)
	a, err := bl.permute(op, ns[0], slices.Concat(lhsBatch, lFree, lhsContracting))
	if err != nil {
		return nil, err
	}
	c, err := bl.permute(op, ns[1], slices.Concat(rhsBatch, rhsContracting, rFree))
	if err != nil {
		return nil, err
	}
	k, grid := matmulK[ls.DType], kern.Cover(shape.Size())
	if kt := matmulTileK[ls.DType]; kt != nil && M >= tileDim && N >= tileDim && B <= 65535 {
		// v2: shared-memory tiles (kernels_matmul.go).
		k = kt
		grid = kern.Blocks(gpu.Dim3{X: (N + tileDim - 1) / tileDim, Y: (M + tileDim - 1) / tileDim, Z: B}, kt.Spec().Block)
	}
	return bl.add(op, shape, func(b *Backend, ins []*Buffer) (*Buffer, error) {
		out, err := b.alloc(shape)
		if err != nil {
			return nil, err
		}
		return out, k.Launch(b.dev, grid, out.arr.arg(), ins[0].arr.arg(), ins[1].arr.arg(),
			kern.ScalarArg(M), kern.ScalarArg(K), kern.ScalarArg(N))
	}, a, c), nil
}

// permute records x transposed by perm, or x itself when perm is the
// identity.
func (bl *Builder) permute(op backends.OpType, x *node, perm []int) (*node, error) {
	if isIdentity(perm) {
		return x, nil
	}
	shape := x.shape.Clone()
	for j, p := range perm {
		shape.Dimensions[j] = x.shape.Dimensions[p]
	}
	return bl.transpose(op, x, shape, perm)
}

// Dot implements backends.Builder for vector·vector, matrix·vector and
// matrix·matrix, as DotGeneral.
func (bl *Builder) Dot(lhs, rhs backends.Op) (backends.Op, error) {
	ns, err := bl.in(backends.OpTypeDot, lhs, rhs)
	if err != nil {
		return nil, err
	}
	lr, rr := ns[0].shape.Rank(), ns[1].shape.Rank()
	if lr < 1 || lr > 2 || rr < 1 || rr > 2 || (lr == 1 && rr == 2) {
		return nil, opErr(backends.OpTypeDot, fmt.Errorf("ranks %d·%d: want vector·vector, matrix·vector or matrix·matrix", lr, rr))
	}
	return bl.DotGeneral(lhs, []int{lr - 1}, nil, rhs, []int{0}, nil)
}
