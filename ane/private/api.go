package private

// Where the Apple libraries live. They are opened with dlopen at run time; nothing links against them.
const (
	objcPath           = "/usr/lib/libobjc.A.dylib"
	coreFoundationPath = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
	foundationPath     = "/System/Library/Frameworks/Foundation.framework/Foundation"
	ioSurfacePath      = "/System/Library/Frameworks/IOSurface.framework/IOSurface"
	aneFrameworkPath   = "/System/Library/PrivateFrameworks/AppleNeuralEngine.framework/AppleNeuralEngine"
)

// The private classes of AppleNeuralEngine.framework that the backend uses.
const (
	classDescriptor = "_ANEInMemoryModelDescriptor"
	classModel      = "_ANEInMemoryModel"
	classRequest    = "_ANERequest"
	classIOSurface  = "_ANEIOSurfaceObject"
)

// The private methods the backend sends. Loading checks every one with respondsToSelector: (class
// methods) or instancesRespondToSelector: (instance methods), so that a macOS release that renamed one
// is reported by Probe rather than crashing with an unrecognised selector.
const (
	selModelWithMILText = "modelWithMILText:weights:optionsPlist:"
	selInMemoryModel    = "inMemoryModelWithDescriptor:"
	selHexIdentifier    = "hexStringIdentifier"
	selCompileWithQoS   = "compileWithQoS:options:error:"
	selLoadWithQoS      = "loadWithQoS:options:error:"
	selEvaluateWithQoS  = "evaluateWithQoS:options:request:error:"
	selUnloadWithQoS    = "unloadWithQoS:error:"
	selRequestWith      = "requestWithInputs:inputIndices:outputs:outputIndices:weightsBuffer:perfStats:procedureIndex:"
	selObjectWithSurf   = "objectWithIOSurface:"
	selModelAttrs       = "modelAttributes"
)

// apiMethod is one private method and the class that must implement it.
type apiMethod struct {
	class       string // class name
	sel         string // selector name
	classMethod bool   // a class (+) method rather than an instance (-) method
	args        int    // number of arguments, one per colon of sel
}

// privateAPI is every private method the backend sends, in the order of the reference's call sequence.
var privateAPI = []apiMethod{
	{classDescriptor, selModelWithMILText, true, 3},
	{classModel, selInMemoryModel, true, 1},
	{classModel, selHexIdentifier, false, 0},
	{classModel, selCompileWithQoS, false, 3},
	{classModel, selLoadWithQoS, false, 3},
	{classModel, selModelAttrs, false, 0},
	{classIOSurface, selObjectWithSurf, true, 1},
	{classRequest, selRequestWith, true, 7},
	{classModel, selEvaluateWithQoS, false, 4},
	{classModel, selUnloadWithQoS, false, 2},
}
