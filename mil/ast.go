package mil

import "fmt"

// Pos is a position in MIL text: 1-based line and column. The zero Pos means "built, not parsed".
type Pos struct {
	Line int // 1-based line
	Col  int // 1-based column, in bytes
}

// String returns "line:col".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// IsValid reports whether p refers to a place in a text.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Program is a MIL program: a version, attributes (such as buildInfo) and functions.
type Program struct {
	Pos     Pos     // position of the "program" keyword
	Version string  // "1.3" in the reference dialect, "1.0" in Apple's compiler output
	Attrs   []*Attr // program attributes, e.g. buildInfo = dict<string, string>({...})
	Funcs   []*Func // functions in source order; "main" is the entry point
}

// Main returns the program's entry point, its first func named "main", or nil when it has none.
func (p *Program) Main() *Func {
	for _, f := range p.Funcs {
		if f != nil && f.Name == "main" {
			return f
		}
	}
	return nil
}

// Func is one MIL function.
type Func struct {
	Pos     Pos     // position of the "func" keyword
	Name    string  // e.g. "main"
	Opset   string  // e.g. "ios18"
	Attrs   []*Attr // function attributes ([name = value, ...] after the signature)
	Inputs  []*Var  // parameters with their types
	Ops     []*Op   // the body in order
	Outputs []Ref   // the returned names, "-> (a, b)"
}

// Op is one operation: "T1 r1, T2 r2 = kind(arg=value, ...)[attr=value, ...];".
type Op struct {
	Pos     Pos     // position of the first result type
	Kind    string  // op name as in the op table: "conv", "const", ...
	Args    []*Arg  // arguments in source order
	Attrs   []*Attr // attributes in source order: name, and val for const
	Results []*Var  // the values the op defines, with their declared types
}

// Var is a named, typed value: a function input or an op result.
type Var struct {
	Pos  Pos    // position of the name
	Name string // the MIL identifier
	Type Type   // declared type
}

// Ref is a use of a named value.
type Ref struct {
	Pos  Pos    // position of the name
	Name string // the referenced identifier
}

// Arg is a named op argument. Its value is one operand, or a tuple "(a, b, ...)" of operands.
type Arg struct {
	Pos      Pos       // position of the argument name
	Name     string    // argument name, e.g. "x", "weight", "values"
	Operands []Operand // one operand, or the members of a tuple
	Tuple    bool      // written as a parenthesised tuple
}

// Operand is a reference to a named value or a literal value.
type Operand struct {
	Ref *Ref   // a named value, or nil
	Lit *Value // a literal, or nil
}

// Attr is a named attribute value, e.g. name=string("x") or val=tensor<fp16, [2]>([1, 2]).
type Attr struct {
	Pos   Pos    // position of the attribute name
	Name  string // attribute name
	Value *Value // its value
}

// Value is a literal value with its type.
//
// Numbers of every dtype are held as float64 in row-major order (bools as 0 and 1); this is exact for
// all dtypes the ANE uses (fp16, fp32, int8..int32, uint8..uint32) and for int64 values below 2^53.
// A tensor whose data lives in a weight file has Blob set and no Nums.
type Value struct {
	Pos   Pos         // position of the literal
	Type  Type        // its type
	Nums  []float64   // numeric or bool elements
	Strs  []string    // string elements
	Blob  *BlobRef    // BLOBFILE(path=..., offset=...) data reference
	Elems []*Value    // tuple members, or dict entries as key, value, key, value, ...
	Style ScalarStyle // how a scalar was spelled (kept so that printing is stable)
}

// ScalarStyle records the spelling of a scalar literal.
type ScalarStyle uint8

// The scalar spellings.
const (
	ShortScalar  ScalarStyle = iota // fp16(0.5), string("x") — the reference dialect
	TensorScalar                    // tensor<string, []>("x") — Apple's compiler output
)

// BlobRef points into a weight file: BLOBFILE(path=string("@model_path/weights/w.bin"), offset=uint64(64)).
// Offset is the position of the blob's 64-byte metadata block in the file.
type BlobRef struct {
	Path   string // e.g. "@model_path/weights/wq.bin"
	Offset uint64 // offset of the metadata block
}

// Weights maps a weight file path as the program names it ("@model_path/weights/wq.bin") to the bytes of
// that blob file (header, metadata blocks and data; see blob.go).
type Weights map[string][]byte
