package compiler

import (
	"go/types"

	"github.com/gokern/kern/compiler/ir"
)

// scalarType maps a Go basic type (after underlying) to its IR type, or
// ir.Invalid when kernels cannot hold it. int and uint are 64 bits, as in
// Go on every 64-bit host.
func scalarType(t types.Type) ir.Type {
	b, ok := t.Underlying().(*types.Basic)
	if !ok {
		return ir.Invalid
	}
	switch b.Kind() {
	case types.Bool, types.UntypedBool:
		return ir.Pred
	case types.Int, types.Int64, types.UntypedInt, types.UntypedRune:
		return ir.S64
	case types.Uint, types.Uint64:
		return ir.U64
	case types.Int32:
		return ir.S32
	case types.Uint32:
		return ir.U32
	case types.Int16:
		return ir.S16
	case types.Uint16:
		return ir.U16
	case types.Int8:
		return ir.S8
	case types.Uint8:
		return ir.U8
	case types.Float32:
		return ir.F32
	case types.Float64, types.UntypedFloat:
		return ir.F64
	}
	return ir.Invalid
}

// flatten lists the scalars a value of type t occupies, in order: a slice
// is (pointer, length, capacity); arrays and structs are their elements in
// order. ok is false for types kernels cannot hold.
func flatten(t types.Type) (out []ir.Type, ok bool) {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		s := scalarType(u)
		if s == ir.Invalid {
			return nil, false
		}
		return []ir.Type{s}, true
	case *types.Pointer:
		return []ir.Type{ir.U64}, true
	case *types.Slice:
		if scalarType(u.Elem()) == ir.Invalid {
			return nil, false
		}
		return []ir.Type{ir.U64, ir.S64, ir.S64}, true
	case *types.Array:
		e, ok := flatten(u.Elem())
		// At most 1<<16 scalars in all: nested arrays multiply.
		if !ok || u.Len() > 1<<16 || int64(len(e))*u.Len() > 1<<16 {
			return nil, false
		}
		for i := int64(0); i < u.Len(); i++ {
			out = append(out, e...)
		}
		return out, true
	case *types.Struct:
		if isThread(t) {
			return nil, true
		}
		for i := 0; i < u.NumFields(); i++ {
			f, ok := flatten(u.Field(i).Type())
			if !ok || len(out)+len(f) > 1<<16 {
				return nil, false
			}
			out = append(out, f...)
		}
		return out, true
	case *types.Tuple:
		for i := 0; i < u.Len(); i++ {
			f, ok := flatten(u.At(i).Type())
			if !ok {
				return nil, false
			}
			out = append(out, f...)
		}
		return out, true
	}
	return nil, false
}

func flatLen(t types.Type) int {
	f, _ := flatten(t)
	return len(f)
}

// isThread reports whether t is gpu.Thread.
func isThread(t types.Type) bool { return isGPUNamed(t, "Thread") }

func isGPUNamed(t types.Type, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	o := n.Obj()
	return o.Pkg() != nil && o.Pkg().Path() == GPUPath && o.Name() == name
}

// sizes is Go's layout on 64-bit hosts, used for .local arrays.
var sizes = types.SizesFor("gc", "amd64")

// typeName is the Go spelling of t in messages.
func typeName(t types.Type) string {
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		if n.Obj().Pkg().Path() == GPUPath {
			return "gpu." + n.Obj().Name()
		}
	}
	return types.TypeString(t, func(p *types.Package) string { return p.Name() })
}

// goTypeIn spells t as code in package pkg writes it (generated
// launchers): the package's own types unqualified, others by package name.
func goTypeIn(t types.Type, pkg *types.Package) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	})
}
