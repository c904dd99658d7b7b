// cuTensorMapEncodeTiled: the stub checks the rules the driver documents
// (CUDA driver API, "Tensor Map Object Management") and fills the 128-byte
// map with a recognisable record of its arguments, which the tests read.
#include "stub.h"

EXPORT CUresult cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *addr,
                                       const uint64_t *dims, const uint64_t *strides,
                                       const uint32_t *box, const uint32_t *estrides,
                                       int interleave, int swizzle, int l2, int oob) {
	ENTER();
	static const int esize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
	if (!map || !dims || !box || !estrides || (rank > 1 && !strides)) return E_INVALID_VALUE;
	if ((uintptr_t)map % 64 != 0 || (uintptr_t)addr % 16 != 0) return E_INVALID_VALUE;
	if (dtype < 0 || dtype > 12 || rank < 1 || rank > 5) return E_INVALID_VALUE;
	if (interleave != 0 || swizzle < 0 || swizzle > 3 || l2 < 0 || l2 > 3 || oob < 0 || oob > 1) return E_INVALID_VALUE;
	int es = esize[dtype];
	for (uint32_t i = 0; i < rank; i++) {
		if (dims[i] == 0 || dims[i] > (1ull << 32)) return E_INVALID_VALUE;
		if (box[i] == 0 || box[i] > 256 || estrides[i] == 0 || estrides[i] > 8) return E_INVALID_VALUE;
		if (i > 0 && (strides[i - 1] % 16 != 0 || strides[i - 1] >= (1ull << 40))) return E_INVALID_VALUE;
	}
	if ((box[0] * es) % 16 != 0) return E_INVALID_VALUE;
	if (swizzle != 0 && box[0] * es > (uint32_t)(16 << swizzle)) return E_INVALID_VALUE;
	uint64_t *w = map;
	memset(w, 0, 128);
	w[0] = 0x5455425354414d54ull; // "TMATSBUT": made by the stub
	w[1] = (uint64_t)(uintptr_t)addr;
	w[2] = (uint64_t)dtype | (uint64_t)rank << 8 | (uint64_t)swizzle << 16;
	w[3] = dims[0];
	w[4] = rank > 1 ? dims[1] : 0;
	w[5] = rank > 1 ? strides[0] : 0;
	w[6] = (uint64_t)box[0] | (uint64_t)(rank > 1 ? box[1] : 0) << 32;
	return OK;
}
