package emulator

import "github.com/anestar/anestar/mil"

// builder compiles one op kind into a step.
type builder func(c *compiler, op *mil.Op) (step, error)

// opTable maps every op kind the emulator runs to its builder. "const" is handled by compileFunc.
var opTable map[string]builder

func init() {
	opTable = map[string]builder{
		"add": binaryOp(opAdd), "sub": binaryOp(opSub), "mul": binaryOp(opMul), "real_div": binaryOp(opDiv),
		"pow": binaryOp(opPow), "maximum": binaryOp(opMax), "minimum": binaryOp(opMin),

		"sqrt": unaryOp, "exp": unaryOp, "sigmoid": unaryOp, "silu": unaryOp, "relu": unaryOp, "tanh": unaryOp,
		"rsqrt": unaryOp, "log": unaryOp, "gelu": unaryOp,

		"conv": convOp, "matmul": matmulOp, "linear": linearOp,

		"softmax": softmaxOp, "reduce_sum": reduceOp, "reduce_mean": reduceOp, "reduce_max": reduceOp,
		"layer_norm": layerNormOp,

		"reshape": aliasOp, "expand_dims": aliasOp, "squeeze": aliasOp,
		"transpose": transposeOp, "slice_by_size": sliceOp, "slice_by_index": sliceOp,
		"concat": concatOp, "split": splitOp, "cast": castOp,
	}
}
