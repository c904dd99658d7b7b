package compiler

// //kern:nounroll above a for loop keeps ptxas from unrolling it: the
// loop's header block starts with `.pragma "nounroll";` (PTX ISA §11.3,
// "pragma strings": at statement level the pragma must be in the header
// of the loop it applies to). ptxas unrolls counted loops whose bodies
// carry no checks up to 4×, issuing the copies' loads together; that
// trades registers for loads in flight, which is not always the better
// side (llm/qwen3's float32 attention: 50 registers with its loops
// unrolled, 36 without, at a block size where occupancy is bounded by the
// blocks per SM, not by registers). The loop's meaning is unchanged.

import (
	"go/ast"

	"golang.org/x/tools/go/ssa"
)

// collectNoUnroll records the for statement on the line below cm.
func (c *pkgCtx) collectNoUnroll(f *ast.File, cm *ast.Comment) {
	loop, ok := c.loopBelow(f, cm).(*ast.ForStmt)
	if !ok {
		c.d.errorf(cm.Pos(), BadUnroll, "//kern:nounroll must be on the line just above a three-clause for loop")
		return
	}
	c.nounroll[loop.Pos()] = true
}

// findNoUnroll returns the header blocks of fn's loops marked
// //kern:nounroll.
func (kb *kernelBuilder) findNoUnroll(fn *ssa.Function) map[*ssa.BasicBlock]bool {
	if len(kb.nounroll) == 0 || fn.Syntax() == nil {
		return nil
	}
	out := map[*ssa.BasicBlock]bool{}
	ast.Inspect(fn.Syntax(), func(n ast.Node) bool {
		s, ok := n.(*ast.ForStmt)
		if !ok || !kb.nounroll[s.Pos()] {
			return true
		}
		// The header tests the condition: the for.loop block holding the
		// comparison (go/ssa names it so).
		if be, ok := s.Cond.(*ast.BinaryExpr); ok {
			for _, b := range fn.Blocks {
				if b.Comment == "for.loop" && blockHasPos(b, be.OpPos) {
					out[b] = true
				}
			}
		}
		return true
	})
	return out
}
