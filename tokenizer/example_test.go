package tokenizer_test

import (
	"fmt"
	"log"
	"os"

	"github.com/anestar/anestar/tokenizer"
)

// Training a vocabulary, encoding with <s>, decoding, and counting the bytes of text the tokens stand
// for (the denominator of bits per byte).
func Example() {
	text, err := os.ReadFile("../data/Isaac.Newton-Opticks.txt")
	if err != nil {
		log.Fatal(err)
	}
	tok, err := tokenizer.Train(string(text), 1024)
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Encode("Light is refracted.", true, false)
	back, _ := tok.Decode(ids)
	bytes := 0
	for _, id := range ids {
		bytes += tok.TokenBytes(id)
	}
	fmt.Println(tok.VocabSize(), len(ids), back, bytes)
	fmt.Printf("%q\n", tok.Piece(ids[1]))
	// Output:
	// 1024 5 Light is refracted. 20
	// " Light"
}
