// A local variable whose address is stored in memory escapes to the heap.
package escape

import "github.com/gokern/kern/gpu"

type node struct {
	val  int
	next *node
}

//kern:kernel
func StoreAddress(t gpu.Thread, out []int) {
	var a, b node // ERROR HeapAllocation "address escapes"
	a.next = &b
	out[0] = a.next.val
}

func link(n *node, to *node) { n.next = to } // ERROR HeapAllocation "storing the address of a local variable"

//kern:kernel
func StoreInHelper(t gpu.Thread, out []int) {
	var a node
	var b node
	link(&a, &b)
	out[0] = a.val + b.val
}
