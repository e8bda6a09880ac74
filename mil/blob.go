package mil

import (
	"encoding/binary"
	"fmt"
)

// Weight blob files hold the data of BLOBFILE consts. The layout:
//
//	bytes 0..63      file header: u32 blob count, u32 version (2), reserved (zero)
//	at each offset   64-byte metadata block: u32 sentinel 0xDEADBEEF, u32 dtype code, u64 data size in
//	                 bytes, u64 absolute data offset, reserved (zero)
//	right after it   the data, 64-byte aligned, padded with zeros to a multiple of 64 bytes
//
// A BLOBFILE's offset is the offset of its metadata block. All integers are little-endian.

const (
	blobAlign    = 64
	blobVersion  = 2
	blobSentinel = 0xDEADBEEF
)

// blobCodes maps dtypes to the dtype codes of metadata blocks.
var blobCodes = map[DType]uint32{
	FP16:   1,
	FP32:   2,
	UInt8:  3,
	Int8:   4,
	BF16:   5,
	Int16:  6,
	UInt16: 7,
	Int32:  14,
	UInt32: 15,
}

// BlobCode returns the weight-file dtype code of dt, and false when weight files cannot hold dt.
func BlobCode(dt DType) (uint32, bool) {
	c, ok := blobCodes[dt]
	return c, ok
}

func dtypeOfBlobCode(c uint32) (DType, bool) {
	for dt, code := range blobCodes {
		if code == c {
			return dt, true
		}
	}
	return Invalid, false
}

// BlobWriter builds one weight blob file. The zero value is not ready; use NewBlobWriter.
type BlobWriter struct {
	buf    []byte // header, metadata blocks and data written so far
	count  uint32 // number of blobs
	shared bool   // buf was handed out by take: the next Add copies it first
}

// NewBlobWriter returns a writer holding an empty file (just the header).
func NewBlobWriter() *BlobWriter {
	w := &BlobWriter{buf: make([]byte, blobAlign)}
	binary.LittleEndian.PutUint32(w.buf[4:], blobVersion)
	return w
}

// Add appends a blob of dtype dt holding data (little-endian elements) and returns the offset of its
// metadata block: the offset a BLOBFILE names.
func (w *BlobWriter) Add(dt DType, data []byte) (uint64, error) {
	code, ok := blobCodes[dt]
	if !ok {
		return 0, fmt.Errorf("weight files cannot hold %s data", dt)
	}
	if size := dt.Bits() / 8; len(data)%size != 0 {
		return 0, fmt.Errorf("%d bytes is not a whole number of %s elements", len(data), dt)
	}
	off, dst := w.reserve(code, len(data))
	copy(dst, data)
	return off, nil
}

// AddFloat32s encodes vals as dt (fp16 with round-half-to-even, bf16 or fp32) and appends them as a blob.
// The values are encoded straight into the file, in bulk.
func (w *BlobWriter) AddFloat32s(dt DType, vals []float32) (uint64, error) {
	size := floatEncodingSize(dt)
	if size == 0 {
		return 0, fmt.Errorf("cannot store float data as %s (want fp16, bf16 or fp32)", dt)
	}
	off, dst := w.reserve(blobCodes[dt], size*len(vals))
	encodeFloat32sTo(dt, dst, vals)
	return off, nil
}

// AddZeros appends a blob of n elements of dtype dt whose data is left zero and returns the offset of
// its metadata block: a blob's place and size without the work of writing its data (in a fresh file
// the zero pages are not even touched).
func (w *BlobWriter) AddZeros(dt DType, n int) (uint64, error) {
	code, ok := blobCodes[dt]
	switch {
	case !ok:
		return 0, fmt.Errorf("weight files cannot hold %s data", dt)
	case n < 0:
		return 0, fmt.Errorf("negative value count %d", n)
	}
	off, _ := w.reserve(code, n*(dt.Bits()/8))
	return off, nil
}

// reserve appends the metadata block of a blob of n data bytes with dtype code code, and zeroed room for
// the data and its padding; it returns the blob's offset and the data bytes to fill in.
func (w *BlobWriter) reserve(code uint32, n int) (uint64, []byte) {
	off := len(w.buf)
	dataOff := off + blobAlign
	end := dataOff + n
	if pad := end % blobAlign; pad != 0 {
		end += blobAlign - pad
	}
	if w.shared || end > cap(w.buf) {
		// One allocation of the final size for a file's first blob; room to grow for later ones.
		c := end
		if w.count > 0 {
			c = max(end, 2*cap(w.buf))
		}
		buf := make([]byte, off, c)
		copy(buf, w.buf)
		w.buf, w.shared = buf, false
	}
	w.buf = w.buf[:end]
	clear(w.buf[off:dataOff]) // reserved metadata fields and padding are zero
	clear(w.buf[dataOff+n:])
	le := binary.LittleEndian
	meta := w.buf[off:dataOff]
	le.PutUint32(meta[0:], blobSentinel)
	le.PutUint32(meta[4:], code)
	le.PutUint64(meta[8:], uint64(n))
	le.PutUint64(meta[16:], uint64(dataOff))
	w.count++
	le.PutUint32(w.buf[0:], w.count)
	return uint64(off), w.buf[dataOff : dataOff+n]
}

// take returns the file and hands it over: the writer copies it before it changes it again, so the
// caller may keep the bytes without copying them.
func (w *BlobWriter) take() []byte {
	w.shared = true
	return w.buf
}

// Count is the number of blobs written.
func (w *BlobWriter) Count() int { return int(w.count) }

// Bytes returns the file. It aliases the writer's buffer until the next Add.
func (w *BlobWriter) Bytes() []byte { return w.buf }

// BlobFileCount validates the header of a weight file and returns its blob count.
func BlobFileCount(file []byte) (int, error) {
	if len(file) < blobAlign {
		return 0, fmt.Errorf("weight file of %d bytes is shorter than its %d-byte header", len(file), blobAlign)
	}
	if v := binary.LittleEndian.Uint32(file[4:]); v != blobVersion {
		return 0, fmt.Errorf("weight file header: version %d at offset 4, want %d", v, blobVersion)
	}
	return int(binary.LittleEndian.Uint32(file[0:])), nil
}

// ReadBlob returns the dtype and data of the blob whose metadata block is at offset in file. The data
// aliases file. It checks the header, the sentinel, the dtype code, the alignment and that the data lies
// within the file.
func ReadBlob(file []byte, offset uint64) (DType, []byte, error) {
	n, err := BlobFileCount(file)
	if err != nil {
		return Invalid, nil, err
	}
	if n == 0 {
		return Invalid, nil, fmt.Errorf("weight file header says it holds no blobs")
	}
	size := uint64(len(file))
	if offset < blobAlign || offset%blobAlign != 0 {
		return Invalid, nil, fmt.Errorf("blob offset %d: not a 64-byte aligned offset after the header", offset)
	}
	if offset > size || size-offset < blobAlign {
		return Invalid, nil, fmt.Errorf("blob offset %d: metadata runs past the end of the %d-byte file", offset, size)
	}
	le := binary.LittleEndian
	meta := file[offset : offset+blobAlign]
	if s := le.Uint32(meta[0:]); s != blobSentinel {
		return Invalid, nil, fmt.Errorf("blob offset %d: sentinel %#x, want %#x", offset, s, uint32(blobSentinel))
	}
	code := le.Uint32(meta[4:])
	dt, ok := dtypeOfBlobCode(code)
	if !ok {
		return Invalid, nil, fmt.Errorf("blob offset %d: unknown dtype code %d at offset %d", offset, code, offset+4)
	}
	dsize := le.Uint64(meta[8:])
	doff := le.Uint64(meta[16:])
	if doff < offset+blobAlign || doff%blobAlign != 0 {
		return Invalid, nil, fmt.Errorf("blob offset %d: data offset %d is not 64-byte aligned after the metadata", offset, doff)
	}
	if doff > size || dsize > size-doff {
		return Invalid, nil, fmt.Errorf("blob offset %d: %d bytes of data at offset %d run past the end of the %d-byte file", offset, dsize, doff, size)
	}
	if dsize%uint64(dt.Bits()/8) != 0 {
		return Invalid, nil, fmt.Errorf("blob offset %d: size %d is not a whole number of %s elements", offset, dsize, dt)
	}
	return dt, file[doff : doff+dsize], nil
}
