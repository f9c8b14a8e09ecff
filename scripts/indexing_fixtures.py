#!/usr/bin/env python3
"""Writes the indexing test fixtures in tests/data/indexing/: inputs and the results NumPy
computes for them (take_along_axis, take, add.at, maximum.at, minimum.at, boolean and
integer-array indexing, argwhere, bincount), so that tests/test_indexing_numpy.cpp checks
numr's indexing ops against an implementation it did not write.

Run from the repository root:
    python3 scripts/indexing_fixtures.py
Needs NumPy (Debian: python3-numpy).
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "indexing")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261205)

    def save(name, arr):
        np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(arr), allow_pickle=False)

    x = rng.standard_normal((4, 5))
    save("x", x)
    # gather along dim 0 and dim 1 (torch.gather == np.take_along_axis), repeats included.
    g0 = rng.integers(0, 4, size=(6, 5))
    g1 = rng.integers(0, 5, size=(4, 7))
    save("gather0_index", g0)
    save("gather0", np.take_along_axis(x, g0, axis=0))
    save("gather1_index", g1)
    save("gather1", np.take_along_axis(x, g1, axis=1))
    # index_select along dim 1, take over the flattened x.
    k = rng.integers(0, 5, size=(9,))
    save("select1_index", k)
    save("select1", np.take(x, k, axis=1))
    t = rng.integers(0, 20, size=(3, 4))
    save("take_index", t)
    save("take", np.take(x, t))
    # scatter_reduce along dim 0 with include_self: add.at / maximum.at / minimum.at apply
    # the values one by one in the index's row-major order, as numr does.
    s_idx = rng.integers(0, 4, size=(10, 5))
    src = rng.standard_normal((10, 5))
    save("scatter_index", s_idx)
    save("scatter_src", src)
    cols = np.broadcast_to(np.arange(5), s_idx.shape)
    for name, ufunc in [("scatter_sum", np.add), ("scatter_amax", np.maximum),
                        ("scatter_amin", np.minimum)]:
        out = x.copy()
        ufunc.at(out, (s_idx, cols), src)
        save(name, out)
    # index_put with accumulate: x[i0, i1] += v with broadcast index arrays.
    i0 = rng.integers(0, 4, size=(3, 1))
    i1 = rng.integers(0, 5, size=(1, 4))
    v = rng.standard_normal((3, 4))
    save("put_i0", i0)
    save("put_i1", i1)
    save("put_values", v)
    out = x.copy()
    np.add.at(out, (i0, i1), v)
    save("index_put_acc", out)
    # masked_select and nonzero (argwhere), bincount with weights.
    mask = rng.random((4, 5)) < 0.4
    save("mask", mask)
    save("masked_select", x[mask])
    z = rng.integers(-1, 2, size=(3, 4, 2)).astype(np.float64)
    save("z", z)
    save("nonzero", np.argwhere(z).astype(np.int64))
    b = rng.integers(0, 7, size=(25,))
    w = rng.standard_normal((25,))
    save("bins", b)
    save("bin_weights", w)
    save("bincount", np.bincount(b, weights=w, minlength=10))
    save("bincount_counts", np.bincount(b).astype(np.int64))
    # gather_nd: x3[idx[..., 0], idx[..., 1]] and embedding rows.
    x3 = rng.standard_normal((3, 4, 2))
    nd = np.stack([rng.integers(0, 3, size=(2, 3)), rng.integers(0, 4, size=(2, 3))], axis=-1)
    save("x3", x3)
    save("gather_nd_index", nd)
    save("gather_nd", x3[nd[..., 0], nd[..., 1]])
    tokens = rng.integers(0, 4, size=(2, 3))
    save("tokens", tokens)
    save("embedding", x[tokens])


if __name__ == "__main__":
    main()
