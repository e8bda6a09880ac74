package mil

import "testing"

// TestTransposeBytes checks the blocked transposition of encoded weights against an element-wise one,
// for 2- and 4-byte elements and sizes that leave partial blocks.
func TestTransposeBytes(t *testing.T) {
	for _, c := range [][3]int{{1, 1, 2}, {3, 70, 2}, {65, 33, 2}, {5, 7, 4}, {40, 3, 1}} {
		rows, cols, size := c[0], c[1], c[2]
		data := make([]byte, rows*cols*size)
		for i := range data {
			data[i] = byte(i*7 + i/3)
		}
		got := transposeBytes(data, rows, cols, size)
		for r := range rows {
			for cc := range cols {
				for b := range size {
					if got[(cc*rows+r)*size+b] != data[(r*cols+cc)*size+b] {
						t.Fatalf("%dx%d of %d bytes: element (%d, %d) byte %d moved wrong", rows, cols, size, r, cc, b)
					}
				}
			}
		}
	}
}
