package dinput

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// pngOf encodes a 2x3 RGB image whose pixel (y, x) is (10y+x, 100+x, 200-y) with Go's own
// encoder, lossless: the decoded values are known exactly.
func pngOf(t *testing.T) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	for y := 0; y < 2; y++ {
		for x := 0; x < 3; x++ {
			img.Set(x, y, color.NRGBA{uint8(10*y + x), uint8(100 + x), uint8(200 - y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func firstImage(t *testing.T, ds *Dataset) *Tensor {
	t.Helper()
	it := must(ds.Iterator())
	defer it.Close()
	if !it.Next() {
		t.Fatalf("no element: %v", it.Err())
	}
	return must(it.Value().Tensor(0))
}

func TestImageDecodePNGAndFlip(t *testing.T) {
	data := pngOf(t)
	bt := must(NewBytesTensor(nil, [][]byte{data}))
	defer bt.Close()
	ds := must(FromTensors(must(NewElement(bt))))
	dec := must(ds.DecodePNG(3, nil))
	img := firstImage(t, dec)
	if got := formatShape(img.Shape()); got != "[2,3,3]" {
		t.Fatalf("shape %s", got)
	}
	px := must(img.Uint8s())
	if px[0] != 0 || px[3] != 1 || px[9] != 10 || px[10] != 100 || px[11] != 199 {
		t.Fatalf("pixels %v", px)
	}
	// Normalize then Resize to the same size is the identity on the normalized values.
	norm := must(dec.Normalize([]float32{1}, []float32{2}, Float32, &ImageOptions{NumParallelCalls: 2}))
	vals := must(Values[float32](firstImage(t, must(norm.Resize(2, 3, nil)))))
	if vals[3] != 0 || vals[9] != 4.5 {
		t.Fatalf("normalized %v", vals)
	}
	// A seeded flip is reproducible.
	a := must(Values[uint8](firstImage(t, must(dec.RandomFlipLeftRight(7, nil)))))
	b := must(Values[uint8](firstImage(t, must(dec.RandomFlipLeftRight(7, nil)))))
	if !bytes.Equal(a, b) {
		t.Fatalf("flip with one seed differs: %v %v", a, b)
	}
}

func TestImageCorruptJPEGIsInvalidArgument(t *testing.T) {
	bt := must(NewBytesTensor(nil, [][]byte{[]byte("not a jpeg")}))
	defer bt.Close()
	ds := must(must(FromTensors(must(NewElement(bt)))).DecodeJPEG(3, nil))
	it := must(ds.Iterator())
	defer it.Close()
	if it.Next() {
		t.Fatal("decoded garbage")
	}
	var e *Error
	if err := it.Err(); !errors.As(err, &e) || e.Code != InvalidArgument || !strings.Contains(e.Message, "element 0") {
		t.Fatalf("got %v", err)
	}
	if _, err := ds.CenterCrop(0, 1, nil); err == nil {
		t.Fatal("a crop of height 0 was accepted")
	}
}
