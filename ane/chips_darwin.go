package ane

import "syscall"

// hostChipName reads the CPU brand string ("Apple M3 Pro"): the model identifier would mislead
// (MacBookPro17,1 is an M1), the brand names the generation.
func hostChipName() string {
	brand, err := syscall.Sysctl("machdep.cpu.brand_string")
	if err != nil {
		return ""
	}
	return chipFromBrand(brand)
}
