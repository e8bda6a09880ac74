package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
	"github.com/spf13/pflag"
)

// addSettingFlags adds the backend settings that run and mil run share: the emulator's numerics, its
// check and its relaxed mode. The ANE backend refuses each of them with a message.
func addSettingFlags(fs *pflag.FlagSet, s *ane.Settings) {
	fs.BoolVar(&s.FP32, "fp32", false, "emulator: compute in plain fp32, without fp16 rounding")
	fs.BoolVar(&s.CheckNumerics, "check-numerics", false, "emulator: fail at the first op whose output holds inf or NaN")
	fs.BoolVar(&s.Relaxed, "relaxed", false, "emulator: run programs the ANE refuses (fp32 arithmetic, refused ops, unaligned I/O), and say so")
	addChipFlag(fs, &s.Chip)
}

// addChipFlag adds --chip: the chip whose limits programs are checked against.
func addChipFlag(fs *pflag.FlagSet, chip *string) {
	fs.StringVar(chip, "chip", "", "check programs against this chip's limits: "+strings.Join(ane.ChipNames(), ", ")+
		" (default: this Mac's chip; elsewhere all, every chip's limits at once)")
}

// checkChip refuses an unknown --chip value: the usage error of a command.
func checkChip(chip string) error {
	_, err := ane.ParseChip(chip)
	return err
}

// openBackend opens the backend called name with settings s; in relaxed mode it says so on stderr first.
func openBackend(name string, s ane.Settings, stderr io.Writer) (ane.Backend, error) {
	if err := checkChip(s.Chip); err != nil {
		return nil, fmt.Errorf("--chip: %w", err)
	}
	b, err := ane.Open(name, s)
	if err != nil {
		return nil, err
	}
	if s.Relaxed {
		fmt.Fprintf(stderr, "anestar: %s\n", emulator.RelaxedNotice)
	}
	return b, nil
}
