//! The image operations through the Rust API: hand-computed crops, flips and normalization,
//! and a damaged JPEG's error.

use dinput::{Code, DType, Dataset, Element, ImageOptions, Tensor};

/// One element: a 2x3 single-channel uint8 image whose pixel (y, x) is 10y + x.
fn image() -> Dataset {
    let t = Tensor::new(&[2, 3, 1], &[0u8, 1, 2, 10, 11, 12]).unwrap();
    Dataset::from_tensors(&Element::new(&[&t]).unwrap()).unwrap()
}

fn first_f32(ds: &Dataset) -> Vec<f32> {
    ds.iter().unwrap().get_next().unwrap().tensor(0).unwrap().to_vec_f32().unwrap()
}

fn first_u8(ds: &Dataset) -> Vec<u8> {
    ds.iter().unwrap().get_next().unwrap().tensor(0).unwrap().to_vec::<u8>().unwrap()
}

#[test]
fn crop_and_normalize_by_hand() {
    let o = ImageOptions::default();
    assert_eq!(first_u8(&image().center_crop([1, 1], &o).unwrap()), vec![1]);
    let n = image().normalize(&[2.0], &[4.0], DType::Float32, &ImageOptions { num_parallel_calls: 2, ..o }).unwrap();
    assert_eq!(first_f32(&n), vec![-0.5, -0.25, 0.0, 2.0, 2.25, 2.5]);
    // Resizing 3 columns to 1 samples the middle one (half-pixel centres).
    assert_eq!(first_f32(&image().resize([2, 1], &o).unwrap()), vec![1.0, 11.0]);
}

#[test]
fn seeded_flip_is_reproducible() {
    let o = ImageOptions::default();
    let a = first_u8(&image().repeat(8).unwrap().random_flip_left_right(Some(5), &o).unwrap());
    let b = first_u8(&image().repeat(8).unwrap().random_flip_left_right(Some(5), &o).unwrap());
    assert_eq!(a, b);
    assert!(a == vec![0, 1, 2, 10, 11, 12] || a == vec![2, 1, 0, 12, 11, 10], "{a:?}");
}

#[test]
fn damaged_jpeg_is_invalid_argument() {
    let t = Tensor::new_bytes(&[], &[b"\xff\xd8\xff garbage".as_slice()]).unwrap();
    let ds = Dataset::from_tensors(&Element::new(&[&t]).unwrap()).unwrap();
    let err = ds.decode_jpeg(3, &ImageOptions::default()).unwrap().iter().unwrap().get_next().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("element 0"), "{}", err.message());
}
