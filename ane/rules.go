package ane

// The hardware's known rules, as data. Every row names the public, hardware-tested source it comes
// from; Eligible (eligible.go) applies them. The sources:
//
//   - maderix/ANE: training/ane_runtime.h (the compile/load/eval sequence), training/stories_mil.h and
//     training/ane_mil_gen.h (the kernels it trains with), bridge/ane_bridge.m, README.md
//     ("Limitations") and training/m5result.md; run on M1 to M5.
//   - electricapp/ane-bridge-rs: docs/MIL-CONSTRAINTS.md ("Hard constraints"), c/src/ane_bridge.m
//     (ports read from modelAttributes) and rust/ane-bridge-mil/src/program.rs (the checks its MIL
//     builder makes); measured on M5 under macOS 26.

// Where the rules come from, as cited in Rules and HardwareOps.
const (
	srcMaderixKernels  = "maderix/ANE training/stories_mil.h, training/ane_mil_gen.h (kernels run on M1-M5)"
	srcMaderixReadme   = "maderix/ANE README.md, Limitations"
	srcMaderixBuild    = "maderix/ANE README.md, Building (macOS 15+)"
	srcBridgeLimits    = "electricapp/ane-bridge-rs docs/MIL-CONSTRAINTS.md, Hard constraints (M5, macOS 26)"
	srcBridgeProgram   = "electricapp/ane-bridge-rs rust/ane-bridge-mil/src/program.rs"
	srcBridgePorts     = "electricapp/ane-bridge-rs c/src/ane_bridge.m, derive_specs_from_attrs"
	srcBridgeFunctions = "electricapp/ane-bridge-rs docs/MIL-CONSTRAINTS.md (\"Compose from mul/add/sub/relu/real_div\"; relu and tanh measured)"
	srcMaderixIO       = "maderix/ANE README.md, How It Works 3 (fp16 direct I/O ~37% faster); benchmarks/community_results.json (report of 2026-03-04: the fp32-I/O benchmarks fail on M1 Pro, M1 Max and M4 Pro, the fp16-I/O training kernels run)"
)

// A Rule is one thing the hardware is known to need of a program.
type Rule struct {
	ID        string // short name, used in findings: "io-width"
	Need      string // what the hardware needs
	Otherwise string // what happens on the hardware when a program breaks it
	Source    string // the public, hardware-tested source
}

// The rule IDs.
const (
	RuleIORank      = "io-rank"
	RuleIOWidth     = "io-width"
	RuleIODType     = "io-dtype"
	RuleIOFP16      = "io-fp16"
	RuleStatic      = "static-shape"
	RuleFP16        = "fp16-compute"
	RuleOp          = "op"
	RuleMatmulBatch = "matmul-batch"
	RuleConvWidth   = "conv-kernel-width"
	RuleAxisCap     = "axis-cap"
	RuleForm        = "op-form"
	RuleDeadCode    = "dead-code"
	RuleAnchor      = "anchor"
	RuleSingleIO    = "single-io"
	RuleOpset       = "opset"
	RuleBuildInfo   = "build-info"
)

// Rules are the hardware's known rules, in the order Eligible reports their findings.
var Rules = []Rule{
	{RuleIORank, "every input and output is a rank-4 [N, C, H, W] tensor",
		"the I/O schema is canonicalised to NCHW whatever the program declares, so other ranks (and scalars) do not match the surfaces", srcBridgeLimits},
	{RuleIOWidth, "every input and output has a width W (the last dim) of at least 32 and a multiple of 32",
		"W < 32 compiles, then fails at dispatch; W not a multiple of 32 returns wrong data (rows laid out at the next multiple of 32); an unaligned input fails at dispatch", srcBridgeLimits + "; " + srcBridgeProgram + " (WIDTH_ALIGN)"},
	{RuleIODType, "every input and output is fp16 or fp32",
		"the surfaces hold fp16 or fp32 only", "maderix/ANE README.md, How It Works (IOSurface I/O in fp16 or fp32)"},
	{RuleIOFP16, "every input and output is fp16, as in every hardware-tested training pipeline",
		"fp32 I/O is slower (about 37 %) and programs with it failed on M1 Pro, M1 Max and M4 Pro: not known to run everywhere", srcMaderixIO},
	{RuleStatic, "every shape is static", "a ? dimension gives InvalidMILProgram", srcBridgeLimits},
	{RuleFP16, "every op but cast computes in fp16; fp32 only at the boundary, cast at once",
		"fp32 arithmetic is rejected", srcBridgeLimits + "; " + srcBridgeProgram},
	{RuleOp, "the op is one the reference sources ran on hardware",
		"standalone exp, log, sqrt, sin, cos and atan are refused; reduce_mean passes compile and fails at dispatch; other ops are not known either way", srcMaderixKernels + "; " + srcBridgeLimits},
	{RuleMatmulBatch, "matmul's operands have equal batch dims",
		"a batch-broadcast matmul is not lowered", srcBridgeProgram + " (mat_dims: the references' matmuls have equal batch dims)"},
	{RuleConvWidth, "a conv kernel is at most 15 wide (13 through M3)", "KW >= 16 fails to compile at every padding and grouping (14 and 15 on M1)", srcBridgeLimits + "; " + srcBridgeProgram + " (MAX_CONV_KERNEL); " + srcForgeChips},
	{RuleAxisCap, "every tensor's extents within the chip's caps: 16384 on an axis other than the channels through M3 (65536 from M4), 65536 channels",
		"a larger extent must be tiled: the compiler refuses it", srcForgeChips},
	{RuleForm, "the op's attributes are ones a reference ran: transpose perm [0, 1, 3, 2]; concat on axis 1 or 3; softmax on the last axis; " +
		"a reshape that keeps axes 0 and 3 or axes 0 and 1 (regrouping the other two); slices at offsets on axes 1 and 3",
		"other forms of a proven op are not known either way", srcMaderixKernels + "; maderix/ANE training/training_dynamic/mil_dynamic.h (RoPE: a reshape to pairs on the last axis, slices and a concat on axis 3)"},
	{RuleDeadCode, "no op's result is unused", "an unused subgraph that reduces to width 1 makes the whole program fail to compile", srcBridgeLimits},
	{RuleAnchor, "the program holds a conv or a matmul", "a purely elementwise program can be left on the CPU and refused at load", srcBridgeLimits + "; " + srcBridgeProgram},
	{RuleSingleIO, "one input and one output, as every reference kernel has (activations and weights packed along the spatial axis, results concatenated on channels)",
		"maderix saw error 0x1d with several inputs; ane-bridge-rs binds several by name: not known either way", srcMaderixReadme + " (Single-input constraint); " + srcBridgePorts},
	{RuleOpset, "program(1.3) with func main<ios18>, the reference dialect (macOS 15 or later)",
		"an opaque MIL error at the first compile on an older macOS; other opsets are not known either way", srcMaderixBuild + "; " + srcMaderixKernels},
	{RuleBuildInfo, "the program carries buildInfo, on one line", "the MIL parser rejects a line break inside buildInfo",
		srcBridgeLimits + "; the backends add the reference buildInfo (mil.BuildInfo) to a program without one and the printer writes it on one line"},
}

// RuleByID returns the rule with that ID.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// OpSupport is what is known of one op kind on the hardware.
type OpSupport struct {
	Support Support // Proven or Refused (a kind not in HardwareOps is Unknown)
	Note    string  // for a refused op, what the hardware does with it
	Source  string  // where that is known from
}

// HardwareOps is what is known of each op kind on the hardware. An op not listed is Unknown.
var HardwareOps = map[string]OpSupport{
	"const":         {Proven, "", srcMaderixKernels},
	"conv":          {Proven, "", srcMaderixKernels},
	"matmul":        {Proven, "", srcMaderixKernels},
	"add":           {Proven, "", srcMaderixKernels},
	"sub":           {Proven, "", srcMaderixKernels},
	"mul":           {Proven, "", srcMaderixKernels},
	"pow":           {Proven, "", srcMaderixKernels},
	"sigmoid":       {Proven, "", srcMaderixKernels},
	"softmax":       {Proven, "", srcMaderixKernels},
	"reduce_sum":    {Proven, "", srcMaderixKernels},
	"reshape":       {Proven, "", srcMaderixKernels},
	"transpose":     {Proven, "", srcMaderixKernels},
	"slice_by_size": {Proven, "", srcMaderixKernels},
	"concat":        {Proven, "", srcMaderixKernels},
	"cast":          {Proven, "", srcMaderixKernels},
	"real_div":      {Proven, "", srcBridgeFunctions},
	"relu":          {Proven, "", srcBridgeFunctions},
	"tanh":          {Proven, "", srcBridgeFunctions},

	"exp":         {Refused, "standalone exp is refused (no transcendentals)", srcBridgeLimits},
	"log":         {Refused, "standalone log is refused (no transcendentals)", srcBridgeLimits},
	"sqrt":        {Refused, "standalone sqrt is refused (no transcendentals); use pow(x, 0.5)", srcBridgeLimits},
	"sin":         {Refused, "standalone sin is refused (no transcendentals)", srcBridgeLimits},
	"cos":         {Refused, "standalone cos is refused (no transcendentals)", srcBridgeLimits},
	"atan":        {Refused, "standalone atan is refused (no transcendentals)", srcBridgeLimits},
	"reduce_mean": {Refused, "reduce_mean passes compile and fails at dispatch; use reduce_sum and mul by 1/n", srcBridgeLimits},
}

// MaxConvKernelWidth is the widest conv kernel the hardware compiles.
const MaxConvKernelWidth = 15

// WidthAlign is the alignment, and the minimum, of an input's or output's width.
const WidthAlign = 32
