package nn

// BiasGrad adds the column sums of the row-major [rows, cols] gradient dy
// to db: db[j] += sum_r dy[r,j], the bias gradient of a batch of rows (the
// reference library's bias_grad_sum).
func BiasGrad(db, dy []float32, rows, cols int) error {
	chk := lengthCheck{op: "nn.BiasGrad"}
	chk.dims("rows, cols", rows, cols)
	chk.atLeast("dy", dy, rows*cols)
	chk.atLeast("db", db, cols)
	if chk.err != nil {
		return chk.err
	}
	for r := range rows {
		row := dy[r*cols : (r+1)*cols]
		for j, v := range row {
			db[j] += v
		}
	}
	return nil
}

// BiasGradChannels adds the row sums of the channel-first [C, S] gradient
// dy to db: db[c] += sum_s dy[c,s], the gradient of a per-channel bias.
func BiasGradChannels(db, dy []float32, C, S int) error {
	chk := lengthCheck{op: "nn.BiasGradChannels"}
	chk.dims("C, S", C, S)
	chk.atLeast("dy", dy, C*S)
	chk.atLeast("db", db, C)
	if chk.err != nil {
		return chk.err
	}
	for c := range C {
		var s float32
		for _, v := range dy[c*S : (c+1)*S] {
			s += v
		}
		db[c] += s
	}
	return nil
}
