// Package mil is the MIL language of Apple's Core ML and Neural Engine compilers: the only code in
// anestar that knows MIL. Kernels are MIL programs; backends compile them; scripts build them.
//
// The AST: a Program holds Funcs; a Func has input Vars, a body of Ops and output Refs. An Op has a Kind
// ("conv"), named Args whose Operands are Refs to earlier values or literal Values, Attrs (name, and val for
// const) and result Vars. Every value has a static Type (Scalar or Tensor of a DType with a shape, and the
// Tuple, Dict and List types that attributes use). Pos gives line:col in MIL text.
//
// The op table (LookupOp, Ops) has one OpDef per op: its ArgDefs (names, which are required or constant,
// dtypes, ranks) and its shape rule (OpDef.Infer). Semantics follow the coremltools MIL op definitions;
// each op's file says where the table chose among readings.
//
// Check type-checks a whole program with the op table and returns an ErrorList of *Error values, each
// naming the op's result name, kind and position. CheckWeights checks BLOBFILE consts against their files.
//
// Builder builds programs op by op, checking each op as it is added: Op is the generic call (used by the
// Starlark host for every op of the table), Input/Const/Weight/Add/Conv/... are typed helpers for Go.
// Weight data is stored in weight blob files (BlobWriter, ReadBlob) that a program's BLOBFILE consts name;
// Weights maps each file's path to its bytes. WeightFunc (BlobWriter.AddFloat32Func) takes values that a
// function produces chunk by chunk, encoded straight into the file without a float32 copy of the whole.
//
// Grad derives a program's backward program by reverse-mode differentiation (grad.go; one
// vector-Jacobian rule per op kind in grad_rules.go, GradOps lists them): the forward values it needs are
// saved (GradSpec.Save) or replayed inside the backward, and the rules emit only ops the ANE runs.
//
// Backends read op arguments through Op.Arg, Func.ConstValue, Func.ArgValue (or a Func.Consts table, for
// time linear in the program) and the Value accessors
// (Float32s, Ints, Bool, Str); ConvParamsOf, MatmulShape, ReshapeShape, SliceBySizeBounds and
// SliceByIndexBounds resolve the arguments of the ops whose rules have details.
//
// Print (and Fprint) write a program as MIL text in the dialect of the reference sources (program(1.3),
// short scalar literals such as fp16(0.5), floats as plain decimals in the shortest form that reads back
// exactly, fp16(0.00001) as the reference prints it). Parse reads that text and also what Apple's
// compiler writes (program(1.0), ios16/ios17, tensor<string, []>("x")
// scalars, hex floats, tuples, dict literals, function attributes); its errors are *SyntaxError values
// printed as FILE:LINE:COL: message. A rank-0 literal parses to a Scalar type whichever spelling it had;
// Value.Style keeps the spelling so that printing is stable. Equal compares programs ignoring positions:
// Parse(Print(p)) equals p.
package mil
