package emulator

import (
	"fmt"
	"testing"
)

// With row blocks smaller than the sequence, each head's product is computed block by block up to the
// block's longest kept prefix (and in full for the rows that fall back): the fused chain still gives
// the separate ops' bits, whether the block size divides the rows or not.
func TestFusedAttentionRowBlocks(t *testing.T) {
	old := attnRowBlock
	defer func() { attnRowBlock = old }()
	for _, blk := range []int{1, 4, 5, 16} {
		attnRowBlock = blk
		t.Run(fmt.Sprint(blk), func(t *testing.T) {
			TestFusedKernelsExact(t)
			TestFusedAttentionFallbackRows(t)
		})
	}
}
