package ckpt

import "testing"

func TestLooksLikeSafetensors(t *testing.T) {
	cases := map[string]struct {
		data []byte
		want bool
	}{
		"safetensors":       {encode(t, sampleFile(t)), true},
		"empty safetensors": {encode(t, &File{}), true},
		"llama2 v0 tied":    {encodeLlama2(t, tinyLlama2(true), 0), false},
		"llama2 v0 untied":  {encodeLlama2(t, tinyLlama2(false), 0), false},
		"llama2 v1":         {encodeLlama2(t, tinyLlama2(true), 1), false},
		"short":             {[]byte("\x02\x00\x00\x00\x00\x00\x00\x00{"), true},
		"too short":         {[]byte("\x02\x00\x00\x00\x00\x00\x00\x00"), false},
	}
	for name, tc := range cases {
		if got := LooksLikeSafetensors(tc.data); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}
