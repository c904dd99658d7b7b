package cublas

import (
	"errors"
	"testing"
)

func TestStatusStrings(t *testing.T) {
	if got := StatusInvalidValue.String(); got != "CUBLAS_STATUS_INVALID_VALUE" {
		t.Errorf("String = %q", got)
	}
	if got := Status(42).String(); got != "cublasStatus_t(42)" {
		t.Errorf("unknown status: %q", got)
	}
	e := detailError("cublasGemmEx", StatusNotSupported, "why")
	if !errors.Is(e, StatusNotSupported) || errors.Is(e, StatusInvalidValue) {
		t.Errorf("errors.Is on %v", e)
	}
	want := "cublas: cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED (15): the requested functionality is not supported: why"
	if e.Error() != want {
		t.Errorf("message %q\nwant    %q", e.Error(), want)
	}
}

func TestEnumNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Float16.String(), "CUDA_R_16F"},
		{BFloat16.String(), "CUDA_R_16BF"},
		{Compute32F.String(), "CUBLAS_COMPUTE_32F"},
		{GemmDefaultTensorOp.String(), "CUBLAS_GEMM_DEFAULT_TENSOR_OP"},
		{OpT.String(), "CUBLAS_OP_T"},
	} {
		if c.got != c.want {
			t.Errorf("%s, want %s", c.got, c.want)
		}
	}
}

func TestScalarEncoding(t *testing.T) {
	if got := scalarBits(Compute16F, 2); got != 0x4000 {
		t.Errorf("half 2 = %#x", got)
	}
	if got := scalarBits(Compute32F, 1); got != 0x3f800000 {
		t.Errorf("float 1 = %#x", got)
	}
	if got := scalarBits(Compute64F, 1); got != 0x3ff0000000000000 {
		t.Errorf("double 1 = %#x", got)
	}
	if got := scalarBits(Compute32I, -3); got != 0xfffffffd {
		t.Errorf("int32 -3 = %#x", got)
	}
}

func TestLoadFailsCleanlyWithoutCuBLAS(t *testing.T) {
	_, err := loadLibrary([]string{"libcublas_kern_test_missing.so.99"})
	if !errors.Is(err, ErrNoLibrary) {
		t.Errorf("err = %v", err)
	}
}
