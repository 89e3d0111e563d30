"""``column_to_numpy``: one parquet column -> numpy, first axis = rows (docs/dataset.md)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from strands_robots.dataset.frames import column_to_numpy


@pytest.mark.parametrize(
    ("values", "shape", "dtype"),
    [
        ([1.5, None], (2,), np.float64),
        ([1, None], (2,), np.float64),  # a null integer reads as NaN
        ([[1.0, 2.0], [3.0, 4.0]], (2, 2), np.float64),
        ([[1, 2], None], (2, 2), np.float64),  # a null list is a row of NaN
        (["a", "b"], (2,), object),
        ([["a", "b"], ["c", "d"]], (2,), object),  # lists of strings: one list per row, even of one length
        ([[1, 2], [3]], (2,), object),  # ragged
        ([{"x": 1}, {"x": 2}], (2,), object),
    ],
)
def test_shape_per_column_kind(values, shape, dtype):
    result = column_to_numpy(pa.chunked_array([pa.array(values)]), "c")
    assert result.shape == shape and result.dtype == dtype
    if dtype is object:
        assert list(result) == values


def test_a_fixed_size_list_is_rows_by_width():
    column = pa.FixedSizeListArray.from_arrays(pa.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 3)
    np.testing.assert_array_equal(column_to_numpy(column), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
