package nn

import (
	"fmt"
	"math"
)

// Losses return the loss value and, when grad is not nil, write the
// gradient of that value with respect to the prediction into grad (which
// may alias the prediction). Sums run in float64.

// probFloor keeps the logarithms of probability-based losses finite.
const probFloor = 1e-7

// MSE returns mean((pred - target)^2) over all elements and, when grad is
// not nil, sets grad = 2*(pred - target)/n, as the reference's loss does.
func MSE(grad, pred, target []float32) (float32, error) {
	if err := lossLengths("nn.MSE", grad, pred, target); err != nil {
		return 0, err
	}
	n := len(pred)
	var sum float64
	scale := 2 / float32(n)
	for i, p := range pred {
		d := p - target[i]
		sum += float64(d) * float64(d)
		if grad != nil {
			grad[i] = scale * d
		}
	}
	return float32(sum / float64(n)), nil
}

// CrossEntropyLogits returns the categorical cross-entropy of
// softmax(logits) against target, both row-major [rows, cols] with one
// distribution per row (one-hot or soft), averaged over rows:
// -1/rows * sum_r sum_j target[r,j] * log softmax(logits[r])[j], computed
// through log-sum-exp so that no logit overflows. grad, when not nil, gets
// (softmax(logits)*sum_j target[r,j] - target)/rows, which for rows of
// target summing to one is the familiar (p - t)/rows.
func CrossEntropyLogits(grad, logits, target []float32, rows, cols int) (float32, error) {
	if err := rowLossLengths("nn.CrossEntropyLogits", "logits", grad, logits, target, rows, cols); err != nil {
		return 0, err
	}
	var loss float64
	p := make([]float32, cols)
	for r := range rows {
		z, t := logits[r*cols:(r+1)*cols], target[r*cols:(r+1)*cols]
		lse := softmaxRow(p, z)
		var tsum float64
		for j, tj := range t {
			if tj != 0 {
				loss -= float64(tj) * (float64(z[j]) - lse)
			}
			tsum += float64(tj)
		}
		if grad != nil {
			g := grad[r*cols : (r+1)*cols]
			for j := range g {
				g[j] = float32((float64(p[j])*tsum - float64(t[j])) / float64(rows))
			}
		}
	}
	return float32(loss / float64(rows)), nil
}

// CrossEntropyLabels is CrossEntropyLogits with one class index per row
// (labels[r] in [0, cols)) in place of a one-hot target.
func CrossEntropyLabels(grad, logits []float32, labels []int, rows, cols int) (float32, error) {
	if err := labelLossLengths("nn.CrossEntropyLabels", "labels", grad, logits, labels, rows, cols); err != nil {
		return 0, err
	}
	var loss float64
	p := make([]float32, cols)
	for r := range rows {
		z := logits[r*cols : (r+1)*cols]
		lse := softmaxRow(p, z)
		l := labels[r]
		loss -= float64(z[l]) - lse
		if grad != nil {
			g := grad[r*cols : (r+1)*cols]
			inv := 1 / float32(rows)
			for j := range g {
				g[j] = p[j] * inv
			}
			g[l] -= inv
		}
	}
	return float32(loss / float64(rows)), nil
}

// CrossEntropyProbs returns the categorical cross-entropy of the
// probabilities probs (for example a softmax output) against target, both
// row-major [rows, cols], averaged over rows: -1/rows * sum target*log(p).
// Probabilities are floored at 1e-7 so the loss stays finite; grad, when
// not nil, gets -target/(p*rows) with the same floor.
func CrossEntropyProbs(grad, probs, target []float32, rows, cols int) (float32, error) {
	if err := rowLossLengths("nn.CrossEntropyProbs", "probs", grad, probs, target, rows, cols); err != nil {
		return 0, err
	}
	n := rows * cols
	var loss float64
	for i, p := range probs[:n] {
		q := math.Max(float64(p), probFloor)
		loss -= float64(target[i]) * math.Log(q)
		if grad != nil {
			grad[i] = float32(-float64(target[i]) / (q * float64(rows)))
		}
	}
	return float32(loss / float64(rows)), nil
}

// BinaryCrossEntropy returns the mean over all elements of
// -(t*log(p) + (1-t)*log(1-p)) for probabilities p (clamped to
// [1e-7, 1-1e-7]) and targets t in [0, 1]; grad, when not nil, gets
// (p - t)/(p*(1-p)*n) at the clamped p.
func BinaryCrossEntropy(grad, probs, target []float32) (float32, error) {
	if err := lossLengths("nn.BinaryCrossEntropy", grad, probs, target); err != nil {
		return 0, err
	}
	n := float64(len(probs))
	var loss float64
	for i, pf := range probs {
		p := math.Min(math.Max(float64(pf), probFloor), 1-probFloor)
		t := float64(target[i])
		loss -= t*math.Log(p) + (1-t)*math.Log1p(-p)
		if grad != nil {
			grad[i] = float32((p - t) / (p * (1 - p) * n))
		}
	}
	return float32(loss / n), nil
}

// BinaryCrossEntropyLogits is BinaryCrossEntropy of sigmoid(logits),
// computed stably as max(z,0) - z*t + log(1+exp(-|z|)); grad, when not
// nil, gets (sigmoid(z) - t)/n.
func BinaryCrossEntropyLogits(grad, logits, target []float32) (float32, error) {
	if err := lossLengths("nn.BinaryCrossEntropyLogits", grad, logits, target); err != nil {
		return 0, err
	}
	n := float64(len(logits))
	var loss float64
	for i, zf := range logits {
		z, t := float64(zf), float64(target[i])
		loss += math.Max(z, 0) - z*t + math.Log1p(math.Exp(-math.Abs(z)))
		if grad != nil {
			grad[i] = float32((float64(sigmoid(zf)) - t) / n)
		}
	}
	return float32(loss / n), nil
}

// labelLossLengths checks a row-wise loss with class indices: rows and cols positive, logits (and grad
// when not nil) holding rows*cols values, at least rows labels (named what), each in [0, cols).
func labelLossLengths(op, what string, grad, logits []float32, labels []int, rows, cols int) error {
	chk := lengthCheck{op: op}
	chk.dims("rows, cols", rows, cols)
	chk.atLeast("logits", logits, rows*cols)
	if grad != nil {
		chk.atLeast("grad", grad, rows*cols)
	}
	if chk.err != nil {
		return chk.err
	}
	if len(labels) < rows {
		return fmt.Errorf("%s: %s has %d elements, need %d", op, what, len(labels), rows)
	}
	for r, l := range labels[:rows] {
		if l < 0 || l >= cols {
			return fmt.Errorf("%s: %s[%d] = %d out of range [0, %d)", op, what, r, l, cols)
		}
	}
	return nil
}

// lossLengths checks an elementwise loss's slices: pred not empty, target
// and grad (when not nil) at least as long.
func lossLengths(op string, grad, pred, target []float32) error {
	if len(pred) == 0 {
		return fmt.Errorf("%s: empty prediction", op)
	}
	chk := lengthCheck{op: op}
	chk.atLeast("target", target, len(pred))
	if grad != nil {
		chk.atLeast("grad", grad, len(pred))
	}
	return chk.err
}

// rowLossLengths checks a row-wise loss's arguments: rows and cols positive, the prediction (named
// predName in messages) and target holding rows*cols values, and grad too when not nil.
func rowLossLengths(op, predName string, grad, pred, target []float32, rows, cols int) error {
	chk := lengthCheck{op: op}
	chk.dims("rows, cols", rows, cols)
	chk.atLeast(predName, pred, rows*cols)
	chk.atLeast("target", target, rows*cols)
	if grad != nil {
		chk.atLeast("grad", grad, rows*cols)
	}
	return chk.err
}
