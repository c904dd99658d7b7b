#!/usr/bin/env bash
# scripts/fresh-module.sh — use kern from a brand-new module, as a user would
# (README "Use kern in your own module"), and check that it works:
#
#   go mod init; a replace directive to this checkout (kern is not
#   published); a `tool github.com/gokern/kern/cmd/kern` line; go mod tidy;
#   a kernel with //go:generate go tool kern gen that calls a kernel
#   library of the module (//kern:library); go generate; go run . on the
#   emulator. Then edit the kernel without regenerating: the program
#   must refuse to launch the stale kernel, naming it and the command; and
#   with kern's dependencies missing from go.sum, kern gen must say how to
#   add them.
#
# kern's own dependencies come into an empty module cache (from the Go
# module proxy) unless KERN_FRESH_MODCACHE=0. CI runs this (.ci/run).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
if [[ "${KERN_FRESH_MODCACHE:-1}" != 0 ]]; then
	export GOMODCACHE="$work/modcache"
fi
export GOFLAGS=-modcacherw KERN_DEVICE=emu
mkdir "$work/hello"
cd "$work/hello"

go mod init example.com/hello
go mod edit -require=github.com/gokern/kern@v0.0.0-00010101000000-000000000000 \
	-replace=github.com/gokern/kern="$repo" -tool=github.com/gokern/kern/cmd/kern

mkdir lib
cat >lib/lib.go <<'GO'
//kern:library

// Package lib is a kernel library: device helpers that kernels of any
// package call.
package lib

// Mul returns a·x.
func Mul(a, x float32) float32 { return a * x }
GO
cat >kernels.go <<'GO'
package main

import (
	"example.com/hello/lib"
	"github.com/gokern/kern/gpu"
)

//go:generate go tool kern gen

//kern:kernel block=128
func Scale(t gpu.Thread, a float32, x []float32) {
	if i := t.GlobalX(); i < len(x) {
		x[i] = lib.Mul(a, x[i])
	}
}
GO
cat >main.go <<'GO'
package main

import (
	"fmt"
	"os"

	"github.com/gokern/kern"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	dev, err := kern.Open()
	if err != nil {
		return err
	}
	defer dev.Close()
	const n = 1000
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)
	}
	x, err := kern.Upload(dev, xs)
	if err != nil {
		return err
	}
	if err := ScaleKernel.Launch(dev, kern.Cover(n), 3, x); err != nil {
		return err
	}
	ys, err := x.Download()
	if err != nil {
		return err
	}
	for i, y := range ys {
		if y != 3*float32(i) {
			return fmt.Errorf("y[%d] = %v, want %v", i, y, 3*float32(i))
		}
	}
	fmt.Printf("scaled %d floats on %s\n", n, dev)
	return nil
}
GO

echo "+ go mod tidy"
go mod tidy
echo "+ go generate"
go generate
ls
echo "+ go run ."
out="$(go run .)"
echo "$out"
[[ "$out" == "scaled 1000 floats on "* ]] || { echo "fresh-module: unexpected output" >&2; exit 1; }
if grep -q gonum go.sum; then
	echo "fresh-module: go.sum has gonum entries; the kern tool pulls plotting dependencies" >&2
	exit 1
fi

echo "+ edit the kernel without go generate; go run . must refuse the stale kernel"
sed -i.bak 's/x\[i\] = lib.Mul(a, x\[i\])/x[i] = lib.Mul(a, x[i]) + 1/' kernels.go && rm kernels.go.bak
grep -q 'lib.Mul(a, x\[i\]) + 1' kernels.go || { echo "fresh-module: the edit did not apply" >&2; exit 1; }
if out="$(go run . 2>&1)"; then
	echo "fresh-module: the stale kernel ran: $out" >&2
	exit 1
fi
echo "$out"
for want in "kernel Scale" "older than the kernel's source" "go generate"; do
	[[ "$out" == *"$want"* ]] || { echo "fresh-module: the error lacks \"$want\"" >&2; exit 1; }
done
echo "+ go tool kern check reports it too"
if go tool kern check 2>/dev/null; then
	echo "fresh-module: kern check passed a stale package" >&2
	exit 1
fi
echo "+ a go.sum without kern's dependencies (a module that imported only gpu so far): kern gen names the fix"
go build -o "$work/kern" github.com/gokern/kern/cmd/kern
cp go.sum "$work/go.sum.full"
grep -v ebitengine/purego "$work/go.sum.full" >go.sum
if out="$("$work/kern" gen 2>&1)"; then
	echo "fresh-module: kern gen passed without purego in go.sum" >&2
	exit 1
fi
echo "$out" | head -n 5
[[ "$out" == *"go mod edit -tool=github.com/gokern/kern/cmd/kern && go mod tidy"* ]] || { echo "fresh-module: kern gen did not name the fix" >&2; exit 1; }
cp "$work/go.sum.full" go.sum
echo "fresh-module: ok"
