package gomlx_test

import (
	"fmt"

	_ "github.com/gokern/kern/gomlx" // registers the backend "kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
)

// A GoMLX graph on kern's emulator: GOMLX_BACKEND="kern:emu" selects the
// same backend without changing the program.
func Example() {
	backend, err := backends.NewWithConfig("kern:emu")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer backend.Finalize()
	softplus, err := graph.NewExec(backend, func(x *graph.Node) *graph.Node {
		return graph.Log(graph.OnePlus(graph.Exp(x)))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := softplus.Exec([]float32{-1, 0, 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", out[0].Value())
	// Output: [0.3133 0.6931 1.3133]
}
