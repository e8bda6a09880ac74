// Package bench holds anestar's whole-program measurements: compare/ runs anestar's training side by side
// with the project's PyTorch peers, peers/torch_layer.py (the single layer of scripts/train_layer.star)
// and peers/torch_lm.py (a llama2.c-architecture language model on uint16 token files, taking every
// hyperparameter of scripts/train_lm.star and its wall-time budget), at equal steps or equal wall time
// and over several seeds paired by seed; peers/prep_lm.py makes their token files from a text
// (SentencePiece's vocabulary) and corpora.sh the three corpora of the comparisons;
// compile_layer.star times building and compiling the six kernels of scripts/train_layer.star;
// lm_kernels.star times the evals of the language model's four kernels; llama2_check.sh takes a real
// llama2.c model (stories260K) and a run.c built elsewhere through eval_only against PyTorch and a
// fine-tune whose export run.c and sample.star sample alike; scaling/ tabulates training and
// generation at the llama2.c family's shapes next to the peer's and run.c's; bf16dot times
// AVX512-BF16's VDPBF16PS against fp32 FMAs, the measurement behind leaving the emulator's fp16
// products on the BLAS where there is no AMX; and reliability.sh measures that nothing is lost and
// nothing is fatal (kills during saves, interrupt-then-resume, bad inputs). The peers are written here from the scripts and the formulas their
// doc strings give, so that every comparison the README quotes can be rerun from the repository. The
// package's tests run the scripts at small sizes, and the peers at tiny sizes where PyTorch is
// installed, so that they keep working.
package bench
