#!/bin/sh
# Measures that nothing is lost and nothing is fatal (docs: README, "Nothing lost, nothing fatal"):
#   1. kill-during-save: 100 children saving checkpoints in a loop are SIGKILLed at random moments;
#      the file must hold a whole checkpoint each time;
#   2. interrupt-then-resume: train_layer.star is sent SIGINT or SIGTERM at a random moment (mostly
#      inside an optimizer window), resumed, and compared bit for bit with a run that never stopped;
#   3. bad inputs: anestar is run on devices, FIFOs, deep JSON, huge shapes, hundreds of corrupt
#      checkpoints, MIL and .npy files and 100 MB of text under a 4 GB address limit, counting those
#      that end in a Go runtime crash, a signal or a hang;
#   4. nothing lost, garbage refused: the workflows that lost data (eval_only, resume, a fresh run over
#      a checkpoint, outputs over inputs or the running script, two runs on one metrics file, a
#      tokenizer from another folder), the garbage runs refused before any step and the messages that
#      misled, each a test; and the cost of a 40,000-op chain against a 10,000-op one.
# Usage: sh bench/reliability.sh [KILLS [TRIALS [MUTATIONS]]]   (defaults 100 50 100)
set -e
cd "$(dirname "$0")/.."
kills=${1:-100}
trials=${2:-50}
mutations=${3:-100}
echo "== kill during save ($kills kills)"
ANESTAR_KILL_ROUNDS=$kills go test ./ckpt -run '^TestSaveKilled$' -count=1 -v | grep -E 'saves completed|^(ok|FAIL|---)'
echo "== interrupt, then resume ($trials trials)"
ANESTAR_INTERRUPT_TRIALS=$trials go test ./cmd/anestar -run '^TestInterruptSavesAndResumesExactly$' -count=1 -v | grep -E 'trials|^(ok|FAIL|---)'
echo "== bad inputs ($mutations corruptions of each kind)"
ANESTAR_HOSTILE_MUTATIONS=$mutations go test ./cmd/anestar -run '^TestHostileInputs$' -count=1 -v -timeout 60m | grep -E 'bad inputs|^(ok|FAIL|---)|: (fatal|signal|hang)$'
echo "== nothing lost, garbage refused"
go test ./scripts -run '^(TestResumeKeepsCheckpointStepRecords|TestLMRefusesGarbageBeforeAnyStep|TestMessagesSayWhatIsWrong|TestCheckpointTokenizerFoundFromAnyFolder)$' -count=1 -v | grep -E '^(ok|FAIL|--- )'
go test ./builtins -run '^(TestFreshRunKeepsEarlierCheckpoint|TestWritesRefuseScriptAndSharedMetrics|TestRandomTensorsRefuseBadParameters|TestResumedMetricsDropLinesPastCheckpoint)$' -count=1 -v | grep -E '^(ok|FAIL|--- )'
go test ./cmd/anestar -run '^TestTokenizeRefusesCollisions$' -count=1 -v | grep -E '^(ok|FAIL|--- )'
go test ./mil -run '^TestParseErrors$' -count=1 | grep -E '^(ok|FAIL)'
echo "== a chain of 10,000 and 40,000 elementwise ops (ns/op: the second at most 5x the first)"
go test ./ane/emulator -run '^$' -bench 'CompileElementwiseChain' -benchtime 3x | grep -E '^Benchmark'
