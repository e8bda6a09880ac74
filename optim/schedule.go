package optim

import (
	"math"
)

// Schedule gives the learning rate for an optimizer step; step counts from
// 0 (the first update).
type Schedule interface {
	LR(step int) float32
}

// Constant is a fixed learning rate.
type Constant struct {
	Rate float32 // the learning rate
}

// LR implements Schedule.
func (s Constant) LR(int) float32 { return s.Rate }

// StepDecay multiplies the rate by Gamma every Every steps:
// Base * Gamma^floor(step/Every).
type StepDecay struct {
	Base  float32 // rate for the first Every steps
	Gamma float32 // factor per period, e.g. 0.1
	Every int     // period in steps; < 1 means no decay
}

// LR implements Schedule.
func (s StepDecay) LR(step int) float32 {
	if s.Every < 1 || step < 0 {
		return s.Base
	}
	return float32(float64(s.Base) * math.Pow(float64(s.Gamma), float64(step/s.Every)))
}

// Exponential decays the rate by Gamma each step: Base * Gamma^step.
type Exponential struct {
	Base  float32 // rate at step 0
	Gamma float32 // factor per step, e.g. 0.999
}

// LR implements Schedule.
func (s Exponential) LR(step int) float32 {
	return float32(float64(s.Base) * math.Pow(float64(s.Gamma), float64(max(step, 0))))
}

// Cosine anneals from Base to Floor over Steps steps along half a cosine and
// stays at Floor afterwards:
// Floor + (Base-Floor) * (1 + cos(pi * min(step, Steps)/Steps)) / 2.
type Cosine struct {
	Base  float32 // rate at step 0
	Floor float32 // final rate
	Steps int     // length of the anneal; < 1 means Floor throughout
}

// LR implements Schedule.
func (s Cosine) LR(step int) float32 {
	if s.Steps < 1 {
		return s.Floor
	}
	p := float64(min(max(step, 0), s.Steps)) / float64(s.Steps)
	return float32(float64(s.Floor) + float64(s.Base-s.Floor)*(1+math.Cos(math.Pi*p))/2)
}

// Warmup ramps linearly up to the rate of Then over Steps steps, then
// follows Then with its step count starting again at 0:
// step < Steps gives Then.LR(0) * (step+1)/Steps, later steps
// Then.LR(step - Steps). So Warmup{Steps: 100, Then: Cosine{...}} warms up
// for 100 steps and then anneals for Cosine.Steps more.
type Warmup struct {
	Steps int      // warmup length; < 1 means none
	Then  Schedule // the schedule after warmup
}

// LR implements Schedule; a nil Then gives 0.
func (s Warmup) LR(step int) float32 {
	if s.Then == nil {
		return 0
	}
	if step >= s.Steps {
		return s.Then.LR(step - max(s.Steps, 0))
	}
	return s.Then.LR(0) * float32(max(step, 0)+1) / float32(s.Steps)
}
