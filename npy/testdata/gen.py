# Generates the reference .npy files for npy_test.go with NumPy: /usr/bin/python3 gen.py
import numpy as np
np.save("f32_2x3.npy", np.array([[1.5, -2, 3.25], [0, 65504, -1e-3]], dtype="<f4"))
np.save("f16_4.npy", np.array([1, -0.5, 65504, 6e-8], dtype="<f2"))
np.save("f64_scalar.npy", np.array(3.0, dtype="<f8"))
np.save("f32_empty.npy", np.zeros((0, 5), dtype="<f4"))
