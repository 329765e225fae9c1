package dinput

// The Go constants spell out the numbers of dinput.h, so that the documentation shows them.
// Each line below fails to compile when a constant and its C counterpart differ (converting
// a negative constant to uint is a compile-time error, and one of the two differences is
// negative unless they are equal).

/*
#include "shim.h"
*/
import "C"

const (
	_ = uint(AutoShardOff-C.DINPUT_AUTO_SHARD_OFF) + uint(C.DINPUT_AUTO_SHARD_OFF-AutoShardOff)
	_ = uint(AutoShardAuto-C.DINPUT_AUTO_SHARD_AUTO) + uint(C.DINPUT_AUTO_SHARD_AUTO-AutoShardAuto)
	_ = uint(AutoShardFile-C.DINPUT_AUTO_SHARD_FILE) + uint(C.DINPUT_AUTO_SHARD_FILE-AutoShardFile)
	_ = uint(AutoShardData-C.DINPUT_AUTO_SHARD_DATA) + uint(C.DINPUT_AUTO_SHARD_DATA-AutoShardData)
	_ = uint(AutoShardHint-C.DINPUT_AUTO_SHARD_HINT) + uint(C.DINPUT_AUTO_SHARD_HINT-AutoShardHint)
	_ = uint(Autotune-C.DINPUT_AUTOTUNE) + uint(C.DINPUT_AUTOTUNE-Autotune)
	_ = uint(RepeatForever-C.DINPUT_REPEAT_FOREVER) + uint(C.DINPUT_REPEAT_FOREVER-RepeatForever)
	_ = uint(ShardHint-C.DINPUT_SHARD_HINT) + uint(C.DINPUT_SHARD_HINT-ShardHint)
	_ = uint(InfiniteCardinality-C.DINPUT_INFINITE_CARDINALITY) + uint(C.DINPUT_INFINITE_CARDINALITY-InfiniteCardinality)
	_ = uint(UnknownCardinality-C.DINPUT_UNKNOWN_CARDINALITY) + uint(C.DINPUT_UNKNOWN_CARDINALITY-UnknownCardinality)
	_ = uint(UnknownDim-C.DINPUT_UNKNOWN_DIM) + uint(C.DINPUT_UNKNOWN_DIM-UnknownDim)
	_ = uint(AxisNone-C.DINPUT_AXIS_NONE) + uint(C.DINPUT_AXIS_NONE-AxisNone)
	_ = uint(ReplicationPerWorker-C.DINPUT_REPLICATION_PER_WORKER) + uint(C.DINPUT_REPLICATION_PER_WORKER-ReplicationPerWorker)
	_ = uint(ReplicationPerReplica-C.DINPUT_REPLICATION_PER_REPLICA) + uint(C.DINPUT_REPLICATION_PER_REPLICA-ReplicationPerReplica)
	_ = uint(ReduceSum-C.DINPUT_REDUCE_SUM) + uint(C.DINPUT_REDUCE_SUM-ReduceSum)
	_ = uint(ReduceMean-C.DINPUT_REDUCE_MEAN) + uint(C.DINPUT_REDUCE_MEAN-ReduceMean)
	_ = uint(InvalidDType-C.DINPUT_DTYPE_INVALID) + uint(C.DINPUT_DTYPE_INVALID-InvalidDType)
	_ = uint(Bool-C.DINPUT_BOOL) + uint(C.DINPUT_BOOL-Bool)
	_ = uint(Int8-C.DINPUT_INT8) + uint(C.DINPUT_INT8-Int8)
	_ = uint(Int16-C.DINPUT_INT16) + uint(C.DINPUT_INT16-Int16)
	_ = uint(Int32-C.DINPUT_INT32) + uint(C.DINPUT_INT32-Int32)
	_ = uint(Int64-C.DINPUT_INT64) + uint(C.DINPUT_INT64-Int64)
	_ = uint(Uint8-C.DINPUT_UINT8) + uint(C.DINPUT_UINT8-Uint8)
	_ = uint(Uint16-C.DINPUT_UINT16) + uint(C.DINPUT_UINT16-Uint16)
	_ = uint(Uint32-C.DINPUT_UINT32) + uint(C.DINPUT_UINT32-Uint32)
	_ = uint(Uint64-C.DINPUT_UINT64) + uint(C.DINPUT_UINT64-Uint64)
	_ = uint(Float16-C.DINPUT_FLOAT16) + uint(C.DINPUT_FLOAT16-Float16)
	_ = uint(BFloat16-C.DINPUT_BFLOAT16) + uint(C.DINPUT_BFLOAT16-BFloat16)
	_ = uint(Float32-C.DINPUT_FLOAT32) + uint(C.DINPUT_FLOAT32-Float32)
	_ = uint(Float64-C.DINPUT_FLOAT64) + uint(C.DINPUT_FLOAT64-Float64)
	_ = uint(Bytes-C.DINPUT_BYTES) + uint(C.DINPUT_BYTES-Bytes)
	_ = uint(DeviceCPU-C.DINPUT_DEVICE_CPU) + uint(C.DINPUT_DEVICE_CPU-DeviceCPU)
	_ = uint(DeviceCUDA-C.DINPUT_DEVICE_CUDA) + uint(C.DINPUT_DEVICE_CUDA-DeviceCUDA)
	_ = uint(DeviceCUDAHost-C.DINPUT_DEVICE_CUDA_HOST) + uint(C.DINPUT_DEVICE_CUDA_HOST-DeviceCUDAHost)
	_ = uint(OK-C.DINPUT_OK) + uint(C.DINPUT_OK-OK)
	_ = uint(Cancelled-C.DINPUT_CANCELLED) + uint(C.DINPUT_CANCELLED-Cancelled)
	_ = uint(Unknown-C.DINPUT_UNKNOWN) + uint(C.DINPUT_UNKNOWN-Unknown)
	_ = uint(InvalidArgument-C.DINPUT_INVALID_ARGUMENT) + uint(C.DINPUT_INVALID_ARGUMENT-InvalidArgument)
	_ = uint(DeadlineExceeded-C.DINPUT_DEADLINE_EXCEEDED) + uint(C.DINPUT_DEADLINE_EXCEEDED-DeadlineExceeded)
	_ = uint(NotFound-C.DINPUT_NOT_FOUND) + uint(C.DINPUT_NOT_FOUND-NotFound)
	_ = uint(AlreadyExists-C.DINPUT_ALREADY_EXISTS) + uint(C.DINPUT_ALREADY_EXISTS-AlreadyExists)
	_ = uint(PermissionDenied-C.DINPUT_PERMISSION_DENIED) + uint(C.DINPUT_PERMISSION_DENIED-PermissionDenied)
	_ = uint(ResourceExhausted-C.DINPUT_RESOURCE_EXHAUSTED) + uint(C.DINPUT_RESOURCE_EXHAUSTED-ResourceExhausted)
	_ = uint(FailedPrecondition-C.DINPUT_FAILED_PRECONDITION) + uint(C.DINPUT_FAILED_PRECONDITION-FailedPrecondition)
	_ = uint(Aborted-C.DINPUT_ABORTED) + uint(C.DINPUT_ABORTED-Aborted)
	_ = uint(OutOfRange-C.DINPUT_OUT_OF_RANGE) + uint(C.DINPUT_OUT_OF_RANGE-OutOfRange)
	_ = uint(Unimplemented-C.DINPUT_UNIMPLEMENTED) + uint(C.DINPUT_UNIMPLEMENTED-Unimplemented)
	_ = uint(Internal-C.DINPUT_INTERNAL) + uint(C.DINPUT_INTERNAL-Internal)
	_ = uint(Unavailable-C.DINPUT_UNAVAILABLE) + uint(C.DINPUT_UNAVAILABLE-Unavailable)
	_ = uint(DataLoss-C.DINPUT_DATA_LOSS) + uint(C.DINPUT_DATA_LOSS-DataLoss)
	_ = uint(Unauthenticated-C.DINPUT_UNAUTHENTICATED) + uint(C.DINPUT_UNAUTHENTICATED-Unauthenticated)
)

const (
	_ = uint(CompressionNone-C.DINPUT_COMPRESSION_NONE) + uint(C.DINPUT_COMPRESSION_NONE-CompressionNone)
	_ = uint(CompressionZstd-C.DINPUT_COMPRESSION_ZSTD) + uint(C.DINPUT_COMPRESSION_ZSTD-CompressionZstd)
	_ = uint(CompressionGzip-C.DINPUT_COMPRESSION_GZIP) + uint(C.DINPUT_COMPRESSION_GZIP-CompressionGzip)
)
