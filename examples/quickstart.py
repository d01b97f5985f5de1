"""irc's main job on an example: capture a NumPy softmax whose dims are
symbolic, lower it to one Triton kernel, and run that one compiled kernel
at two sizes, checking each result against NumPy.

Without a GPU, the kernel runs on Triton's interpreter on the CPU (the
``"interpret"`` backend, which needs torch); with neither torch nor a GPU,
irc falls back to its NumPy reference interpreter.
"""

import numpy as np

import irc


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main() -> None:
    compiled = irc.compile(softmax, irc.TensorSpec(("N", "D"), "float32"))
    print(compiled.ir("graph"))
    print(f"{compiled.num_kernels} kernel; the emitted Triton module:\n")
    print(compiled.triton_source)
    rng = np.random.default_rng(0)
    for shape in [(4, 7), (33, 1100)]:
        x = rng.standard_normal(shape, dtype=np.float32)
        result = compiled(x)  # backend="auto": triton, else interpret, else reference
        np.testing.assert_allclose(result, softmax(x), rtol=1e-5, atol=1e-7)
        print(f"softmax at (N, D) = {shape}: matches NumPy")


if __name__ == "__main__":
    main()
