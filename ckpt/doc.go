// Package ckpt reads and writes checkpoints in the safetensors format, crash-safe on save and
// fully validated on load, and the model files of llama2.c.
//
// # Format
//
// A safetensors file is an 8-byte little-endian unsigned header length N, N bytes of JSON, and
// the data area. The JSON object maps each tensor name to {"dtype", "shape", "data_offsets"}
// (offsets relative to the data area, end exclusive) and may hold "__metadata__", an object of
// string keys and string values. Elements are stored row-major, little-endian.
//
// Encode writes exactly what the reference implementation writes: tensors ordered by decreasing
// dtype (in the order of the DType constants, which is the reference's) and then by name, so
// each tensor starts at a multiple of its element size; compact JSON with the fields in the
// order dtype, shape, data_offsets and strings escaped as serde_json escapes them; the header
// padded with spaces to a multiple of 8 bytes. Metadata keys are sorted (the reference leaves
// their order unspecified), and an empty metadata map is omitted. The output is a function of
// the content alone. The tests check it byte for byte against a file the safetensors Python
// library (0.3.3) wrote, and check that the library and PyTorch load what Save writes.
//
// Decode accepts a file only if the header length lies within the file and under MaxHeader,
// the header is valid UTF-8 and well-formed JSON with nothing but whitespace after it, no name
// appears twice, every dtype is known, every dimension is a non-negative integer, each
// tensor's shape × dtype size (computed without overflow) equals its byte range, and the
// ranges lie in order, without gaps or overlaps, covering the data area exactly. Nothing is
// allocated from a header field before it is checked against the file's real size. Any
// defect is a *FormatError naming the byte offset and the tensor.
//
// # Types
//
// A File holds Tensors by name and string Metadata. A Tensor is a DType, a Shape and its raw
// Data; FromFloat32 / Float32 convert to and from F32, F16 and BF16 (rounding to nearest, ties
// to even), FromInt64 / Int64 and FromFloat64 handle I64 and F64, FromBytes wraps any raw
// bytes, and Float64 views any dtype for comparison.
//
// Save writes a File atomically: into a temporary file in the target's directory, fsynced,
// renamed over the target, then the directory fsynced, so a process killed at any moment
// leaves either the old or the new checkpoint under the name, never a torn one. With
// SaveOptions.Keep = N the previous checkpoints survive as ckpt.1.safetensors (newest) …
// ckpt.N.safetensors (see RotatedPath). Load reads and validates a file.
//
// # Training state
//
// Training scripts save their state under one naming convention, which State, File and
// StateFromFile implement (scripts reach it through the builtins ckpt.save_state and
// ckpt.load_state, which say only what is saved):
//
//	param/NAME          the weights of parameter NAME (any dtype, usually F32)
//	optim/NAME/SLOT     optimizer slot SLOT of parameter NAME: optim/NAME/m and optim/NAME/v
//	                    for Adam's moments, optim/NAME/grad for the gradients of an unfinished
//	                    optimizer window (NAME may contain '/', SLOT may not)
//	state/NAME          an I64 scalar counter in [0, MaxCounter]: state/step (the next step),
//	                    state/optim_steps, state/data_pos, ...
//	rng/NAME            a U8 vector with a random generator's state, byte for byte (rng/run)
//
// and metadata:
//
//	format              "anestar-train/1"
//	params              every parameter of the script with its value, a JSON object
//	structural          the parameters that fix the state's shapes, a JSON list of names: a
//	                    resumed run must have the same values
//	time/NAME           accumulated seconds of phase NAME, a non-negative float64 in the
//	                    shortest form that reads back exactly
//	anything else       free strings for the script (JSON values from ckpt.save_state)
//
// Every value is stored exactly (integers as I64, generator states as bytes, times in
// round-trip decimal), so a run resumed from a checkpoint continues bit-identically.
//
// A Run is a training run's side of a State: its weights and gradients (Vars, by name and
// shape, over the run's own memory), its Optim (a Slot per weight and moment) and its generator
// and parameters. CaptureState makes the State to save of a Run. ReadState reads one back,
// refusing a file that is not a training state, and State.Match checks it whole against the
// resuming Run — the recorded parameters (CompareParams: a structural one that differs is an
// error, the others a note), every weight by name and shape with finite values and no weight
// the run lacks, the optimizer's slots and count, the gradients — before anything changes: the
// Restore it returns holds the decoded tensors, and Restore.Apply writes the weights and
// gradients; the optimizer's state and the generator's it leaves to the caller.
//
// # Integrity and ownership
//
// Save stores a CRC-32C of each tensor's bytes in the metadata entry ChecksumKey, and Decode
// checks it, so a flipped bit is an error naming the tensor (other safetensors readers see
// one more string entry). Load reads only a regular file, after checking its size against
// the header's length. Lock takes PATH.lock, holding the pid, so that two runs never share a
// checkpoint; InheritLocks keeps it across exec. A Save removes the temporary files of killed
// Saves, never those of a running process, and RemoveTemps the ones this process is writing.
//
// # llama2.c model files
//
// ReadLlama2 and SaveLlama2 read and write the model files of Karpathy's llama2.c, the format
// of stories15M.bin and its kin, as llama2.c's export.py writes them:
//
//	version 0 (legacy)  seven int32: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
//	                    max_seq_len (a negative vocab_size: the classifier is not shared); then
//	                    float32 arrays: the embedding, each layer kind for all layers (attention
//	                    norm, wq, wk, wv, wo, FFN norm, w1, w2, w3), the final norm, the RoPE
//	                    tables [max_seq_len, head_dim/2] cos and sin, the classifier if not shared
//	version 1           a 256-byte header: magic 0x616b3432, int32 1, the seven int32, a uint8
//	                    shared-classifier flag, zeros; then the attention norms, the FFN norms,
//	                    the final norm, the embedding, wq, wk, wv, wo, w1, w2, w3 (each for all
//	                    layers), the classifier if not shared
//
// The magic tells version 1 (version 2, Q8_0, is refused with a message); anything else is read
// as version 0. Every header field is checked (sizes positive, n_heads dividing dim into heads of
// even width, n_kv_heads dividing n_heads, a v1 flag of 0 or 1 and zero padding) and the sizes
// must add up, in overflow-checked 64-bit arithmetic, to exactly the file's size before anything
// is allocated; a truncated file is a *FormatError naming the first array that does not fit and
// its offset. The weights are read in file order straight into one float32 slice each, so a
// model is in memory once. Version 0's RoPE tables are skipped on read and, on write, computed
// as model.py's precompute_freqs_cis computes them in float32. Exports default to version 0, the
// only layout llama2.c's run.c reads.
//
// A Llama2Model holds a Llama2Config and the weights by model.py's state-dict names
// (tok_embeddings.weight [vocab, dim], layers.L.attention.wq.weight [dim, dim], ... , norm.weight,
// output.weight when not shared); Llama2Config.Tensors lists them with their shapes.
package ckpt
