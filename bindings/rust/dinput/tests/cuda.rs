//! The CUDA part of the API (dinput_cuda.h and the GPU memory functions of dinput.h), as far
//! as it can run anywhere: on host tensors the waits are no-ops, and without a usable GPU
//! pinned memory is refused with an error rather than a crash.

use std::ffi::c_void;

use dinput::cuda::{self, Stream};
use dinput::{Code, DType, Device, Element, Tensor};

/// Whether the library found a usable GPU (build_info's `"cuda":{..."available":true`).
fn cuda_available() -> bool {
    dinput::build_info().contains("\"cuda\":{\"compiled\":true,\"available\":true")
}

#[test]
fn waits_on_host_tensors_are_no_ops() {
    let t = Tensor::new(&[2, 2], &[1i32, 2, 3, 4]).unwrap();
    let e = Element::new(&[&t, &Tensor::scalar(7i64).unwrap()]).unwrap();
    // SAFETY: never dereferenced: the calls do nothing for host tensors.
    let foreign = unsafe { Stream::from_raw(0x1234 as *mut c_void) };
    for stream in [Stream::DEFAULT, Stream::LEGACY, Stream::PER_THREAD, foreign] {
        t.cuda_wait(stream).unwrap();
        t.cuda_record_stream(stream).unwrap();
        e.cuda_wait(stream).unwrap();
        // Borrowed components have the methods too (TensorRef derefs to Tensor).
        e.tensor(1).unwrap().cuda_wait(stream).unwrap();
    }
    assert!(t.cuda_ready_event().is_null(), "a host tensor has no ready event");
    assert_eq!(Stream::DEFAULT.as_raw(), std::ptr::null_mut());
    assert_eq!(Stream::PER_THREAD.as_raw() as usize, 2);
    // The data is untouched.
    assert_eq!(t.to_vec::<i32>().unwrap(), [1, 2, 3, 4]);
}

#[test]
fn pinned_tensors_need_a_gpu() {
    let result = Tensor::new_pinned(&[3], &[1.5f32, 2.5, 3.5]);
    if cuda_available() {
        let t = result.unwrap();
        assert_eq!(t.device(), Device::CudaHost);
        assert_eq!(t.as_slice::<f32>().unwrap(), [1.5, 2.5, 3.5]); // readable from the host
        assert!(t.cuda_ready_event().is_null());
        let raw = Tensor::from_raw_bytes_pinned(DType::UInt8, &[2], &[7, 9]).unwrap();
        assert_eq!(raw.to_vec::<u8>().unwrap(), [7, 9]);
    } else {
        let err = result.unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
        assert!(err.message().contains("pinned"), "the message says what failed: {err}");
        let err = Tensor::from_raw_bytes_pinned(DType::UInt8, &[2], &[7, 9]).unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    }
    // Argument errors come first, GPU or not.
    let err = Tensor::new_pinned(&[4], &[1i64, 2]).unwrap_err();
    assert!(matches!(err.code(), Code::InvalidArgument | Code::FailedPrecondition), "{err}");
}

#[test]
fn cache_limit_round_trips_and_pool_bytes_checks_the_device() {
    let before = cuda::cache_limit().unwrap();
    assert!(before > 0, "caching is on by default");
    cuda::set_cache_limit(12345).unwrap();
    assert_eq!(cuda::cache_limit().unwrap(), 12345);
    cuda::set_cache_limit(0).unwrap(); // 0 disables caching; still a valid limit
    assert_eq!(cuda::cache_limit().unwrap(), 0);
    cuda::set_cache_limit(before).unwrap();
    assert_eq!(cuda::cache_limit().unwrap(), before);

    cuda::empty_cache().unwrap();
    let (held, cached) = cuda::pool_bytes(0).unwrap();
    if cuda_available() {
        assert!(cached <= held, "cached {cached} is part of held {held}");
    } else {
        assert_eq!((held, cached), (0, 0));
    }
    // A device past the C API's int is refused here rather than wrapped to a negative one.
    let err = cuda::pool_bytes(usize::MAX).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("device"), "the message names the device: {err}");
}
