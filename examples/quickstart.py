"""irc's main job on an example: capture a NumPy function whose dims are
symbolic, print its IR, and run the one compiled program at two sizes,
checking each result against NumPy."""

import numpy as np

import irc


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main() -> None:
    compiled = irc.compile(softmax, irc.TensorSpec(("N", "D"), "float32"))
    print(compiled.ir("graph"))
    rng = np.random.default_rng(0)
    for shape in [(4, 7), (33, 128)]:
        x = rng.standard_normal(shape, dtype=np.float32)
        result = compiled(x, backend="reference")
        np.testing.assert_allclose(result, softmax(x), rtol=1e-6, atol=1e-7)
        print(f"softmax at (N, D) = {shape}: matches NumPy")


if __name__ == "__main__":
    main()
