// Package exampleutil holds the one snippet every example shares: opening
// a device the way examples/hello does.
package exampleutil

import (
	"fmt"
	"os"

	"github.com/gokern/kern"
)

// Open opens the device kern.Open picks (the GPU if there is one, else
// the emulator, which kern.Open announces on stderr) and prints it.
func Open() (*kern.Device, error) {
	dev, err := kern.Open()
	if err != nil {
		return nil, err
	}
	fmt.Println("device:", dev)
	return dev, nil
}

// Main opens a device, calls run with it and exits with status 1, after
// printing the error prefixed by name, if anything fails.
func Main(name string, run func(dev *kern.Device) error) {
	dev, err := Open()
	if err == nil {
		err = run(dev)
		dev.Close()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
