package ir

import (
	"fmt"
	"strings"
)

// Check verifies the invariants the PTX printer and ptxas rely on: every
// block ends in exactly one terminator and has no other, operand counts
// match the op table, register operands are declared, and branch targets
// exist. It returns the first violation.
func Check(f *Func) error {
	labels := map[string]bool{}
	for _, b := range f.Blocks {
		labels[b.Label] = true
	}
	reg := func(r Reg) error {
		if r < 0 || int(r) >= len(f.Regs) {
			return fmt.Errorf("undeclared register %%%d", r)
		}
		return nil
	}
	for _, b := range f.Blocks {
		if len(b.Instrs) == 0 {
			return fmt.Errorf("%s: block %s is empty", f.Name, b.Label)
		}
		for i, in := range b.Instrs {
			info := Ops[in.Op]
			if in.Op == OpInvalid || in.Op >= numOps {
				return fmt.Errorf("%s: %s: invalid op", f.Name, b.Label)
			}
			last := i == len(b.Instrs)-1
			if info.Term != last && !(in.Op == OpBra && in.Guarded && !last) {
				if last {
					return fmt.Errorf("%s: block %s does not end in a terminator (%s)", f.Name, b.Label, in.Text)
				}
				return fmt.Errorf("%s: block %s: terminator %s before its end", f.Name, b.Label, in.Text)
			}
			if last && in.Guarded {
				return fmt.Errorf("%s: block %s ends in a predicated %s", f.Name, b.Label, in.Text)
			}
			if info.Args >= 0 && len(in.Args) != info.Args {
				return fmt.Errorf("%s: %s: %s has %d operands, want %d", f.Name, b.Label, in.Text, len(in.Args), info.Args)
			}
			if !strings.HasPrefix(in.Text, info.Name) {
				return fmt.Errorf("%s: %s: mnemonic %q is not a %s", f.Name, b.Label, in.Text, info.Name)
			}
			if in.Guarded {
				if err := reg(in.Guard); err != nil {
					return fmt.Errorf("%s: %s: guard: %v", f.Name, b.Label, err)
				}
				if f.Regs[in.Guard] != Pred {
					return fmt.Errorf("%s: %s: guard of %s is not a predicate", f.Name, b.Label, in.Text)
				}
			}
			for _, a := range in.Args {
				var err error
				switch a.Kind {
				case KReg:
					err = reg(a.Reg)
				case KAddr:
					if a.Sym == "" {
						err = reg(a.Reg)
					}
					for _, r := range a.Vec { // a tensor address's coordinates
						if err == nil {
							err = reg(r)
						}
					}
				case KVec:
					for _, r := range a.Vec {
						if err == nil {
							err = reg(r)
						}
					}
				case KLabel:
					if !labels[a.Sym] {
						err = fmt.Errorf("branch to unknown label %s", a.Sym)
					}
				}
				if err != nil {
					return fmt.Errorf("%s: %s: %s: %v", f.Name, b.Label, in.Text, err)
				}
			}
		}
	}
	return nil
}
