#!/usr/bin/env python3
"""Writes the I/O test fixtures in tests/data/io/: .npy files saved by NumPy, and
safetensors files assembled byte by byte (struct + json) from the format's description, so
that numr's readers are tested against files it did not write.

Every array holds element k (row-major index) = a formula of k that tests/test_io_npy.cpp
and tests/test_io_safetensors.cpp restate. Run from the repository root:
    python3 scripts/io_fixtures.py
Needs NumPy (Debian: python3-numpy).
"""
import json
import os
import struct

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "io")


def values(kind, n):
    k = np.arange(n)
    if kind == "f":
        return k * 0.5 - 1.0  # exact in f16, bf16, f32, f64
    if kind == "i64":
        return k * 1_000_000_007 - 5
    if kind == "i32":
        return k * -7 + 3
    if kind == "u8":
        return k * 40
    if kind == "bool":
        return k % 3 == 0
    raise ValueError(kind)


def npy_fixtures():
    def save(name, arr, version=None):
        path = os.path.join(OUT, name)
        if version is None:
            np.save(path, arr, allow_pickle=False)
        else:
            with open(path, "wb") as f:
                np.lib.format.write_array(f, arr, version=version, allow_pickle=False)

    shape = (2, 3)
    for descr, kind in [("<f8", "f"), ("<f4", "f"), ("<f2", "f"), ("<i8", "i64"),
                        ("<i4", "i32"), ("|u1", "u8"), ("|b1", "bool")]:
        tag = descr[1:]
        save(f"{tag}.npy", values(kind, 6).astype(descr).reshape(shape))
    # Big-endian forms, byte-swapped on reading.
    save("be_f8.npy", values("f", 6).astype(">f8").reshape(shape))
    save("be_i4.npy", values("i32", 6).astype(">i4").reshape(shape))
    save("be_f2.npy", values("f", 6).astype(">f2").reshape(shape))
    # Fortran order: the same logical array, stored column-major.
    save("fortran_f4.npy", np.asfortranarray(values("f", 6).astype("<f4").reshape(shape)))
    save("fortran_i8_3d.npy",
         np.asfortranarray(values("i64", 24).astype("<i8").reshape(2, 3, 4)))
    save("scalar_f8.npy", np.array(3.5, dtype="<f8"))
    save("empty_f4.npy", np.zeros((0, 3), dtype="<f4"))
    save("v2_i4.npy", values("i32", 6).astype("<i4").reshape(shape), version=(2, 0))
    save("v3_f4.npy", values("f", 6).astype("<f4").reshape(shape), version=(3, 0))
    save("c8.npy", np.arange(4, dtype="<c8"))
    # A dtype numr does not have.
    save("i1.npy", np.arange(4, dtype="i1"))


def bf16_bytes(arr):
    """The upper halves of the float32 bit patterns (exact for these values)."""
    bits = arr.astype("<f4").view("<u4") >> 16
    return bits.astype("<u2").tobytes()


def write_safetensors(path, entries, metadata=None):
    """entries: list of (name, dtype, shape, bytes), laid out in the order given."""
    header, data, offset = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = json.dumps(header).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(data)


def safetensors_fixtures():
    f = values("f", 6)
    # Data laid out in an order unlike the names' (BOOL first), as another writer may.
    entries = [
        ("flag", "BOOL", (2, 3), values("bool", 6).astype("|b1").tobytes()),
        ("w_f64", "F64", (2, 3), f.astype("<f8").tobytes()),
        ("w_f32", "F32", (2, 3), f.astype("<f4").tobytes()),
        ("w_f16", "F16", (3, 2), f.astype("<f2").tobytes()),
        ("w_bf16", "BF16", (6,), bf16_bytes(f)),
        ("ids_i64", "I64", (2, 3), values("i64", 6).astype("<i8").tobytes()),
        ("ids_i32", "I32", (1, 2, 3), values("i32", 6).astype("<i4").tobytes()),
        ("bytes_u8", "U8", (6,), values("u8", 6).astype("|u1").tobytes()),
        ("scalar", "F32", (), np.array([2.25], dtype="<f4").tobytes()),
        ("nothing", "F32", (0, 4), b""),
    ]
    write_safetensors(os.path.join(OUT, "all_dtypes.safetensors"), entries,
                      {"format": "pt", "note": "caf\u00e9 \"quoted\"\n"})
    write_safetensors(os.path.join(OUT, "i8.safetensors"),
                      [("q", "I8", (4,), bytes([1, 2, 3, 255]))])


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    npy_fixtures()
    safetensors_fixtures()
