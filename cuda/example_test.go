package cuda_test

import (
	"fmt"
	"log"

	"github.com/gokern/kern/cuda"
)

// The whole path from PTX text to a result: initialize, take the primary
// context, and do every context-bound call inside Context.Do.
func Example() {
	if err := cuda.Init(); err != nil {
		log.Fatal(err) // errors.Is(err, cuda.ErrNoDriver) on a machine without a GPU
	}
	dev, err := cuda.DeviceGet(0)
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := cuda.PrimaryCtxRetain(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Release()

	var ptx []byte // .entry scale(.param .u64 data, .param .u64 n, .param .f32 k)
	host := []float32{1, 2, 3}
	err = ctx.Do(func() error {
		m, err := cuda.LoadModuleData(ptx) // a JIT failure's error carries the log
		if err != nil {
			return err
		}
		defer m.Unload()
		fn, err := m.Function("scale")
		if err != nil {
			return err
		}
		p, err := cuda.MemAlloc(uint64(4 * len(host)))
		if err != nil {
			return err
		}
		defer cuda.MemFree(p)
		if err := cuda.CopyHtoD(p, host); err != nil {
			return err
		}
		args := new(cuda.Args).Slice(p, len(host)).Float32(2)
		if err := cuda.Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{128, 1, 1}, 0, 0, args); err != nil {
			return err
		}
		return cuda.CopyDtoH(host, p) // synchronous: waits for the kernel
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(host)
}
