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
	buf   []byte // header, metadata blocks and data written so far
	count uint32 // number of blobs
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
	off := uint64(len(w.buf))
	dataOff := off + blobAlign
	meta := make([]byte, blobAlign)
	le := binary.LittleEndian
	le.PutUint32(meta[0:], blobSentinel)
	le.PutUint32(meta[4:], code)
	le.PutUint64(meta[8:], uint64(len(data)))
	le.PutUint64(meta[16:], dataOff)
	w.buf = append(w.buf, meta...)
	w.buf = append(w.buf, data...)
	if pad := len(w.buf) % blobAlign; pad != 0 {
		w.buf = append(w.buf, make([]byte, blobAlign-pad)...)
	}
	w.count++
	le.PutUint32(w.buf[0:], w.count)
	return off, nil
}

// AddFloat32s encodes vals as dt (fp16 with round-half-to-even, bf16 or fp32) and appends them as a blob.
func (w *BlobWriter) AddFloat32s(dt DType, vals []float32) (uint64, error) {
	data, err := encodeFloat32s(dt, vals)
	if err != nil {
		return 0, err
	}
	return w.Add(dt, data)
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
