package cuda

import (
	"errors"
	"testing"
)

// TestEncodeTensorMapTiledStub passes a 2-D f16 tensor to the stub driver,
// which checks the arguments as the driver documents and records them in
// the map; a box row wider than the swizzle is refused.
func TestEncodeTensorMapTiledStub(t *testing.T) {
	useStub(t)
	stubContext(t)
	const base = DevicePtr(0x10000)
	m, err := EncodeTensorMapTiled(TensorFloat16, base, []uint64{150, 100}, []uint64{304}, []uint32{64, 64}, TensorSwizzle128B)
	if err != nil {
		t.Fatal(err)
	}
	if m[0] != 0x5455425354414d54 || m[1] != uint64(base) || m[2] != uint64(TensorFloat16)|2<<8|3<<16 ||
		m[3] != 150 || m[4] != 100 || m[5] != 304 || m[6] != 64|64<<32 {
		t.Errorf("map %x does not record the arguments", m[:7])
	}
	_, err = EncodeTensorMapTiled(TensorFloat16, base, []uint64{150, 100}, []uint64{304}, []uint32{128, 64}, TensorSwizzle128B)
	if !errors.Is(err, ErrorInvalidValue) {
		t.Errorf("a 256-byte box row with 128-byte swizzle: got %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
	_, err = EncodeTensorMapTiled(TensorFloat16, base, []uint64{150, 100}, nil, []uint32{64, 64}, TensorSwizzle128B)
	if !errors.Is(err, ErrorInvalidValue) {
		t.Errorf("missing strides: got %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
}
