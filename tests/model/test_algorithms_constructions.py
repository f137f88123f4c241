"""The line-phases construction (Beier and Sibeyn, section 3) against its definition:
rows as paths alternating (2i, 2i+1) and (2i+1, 2i+2), then columns."""

import pytest

from pipegossip.model.algorithms import constructions as cs
from pipegossip.model.algorithms.constructions import grid_constructions, line_phases
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate


def test_alternating_matchings_by_definition():
    m0, m1 = cs._alternating(7, [[0, 1, 2, 3], [6, 5, 4]])
    assert m0.tolist() == [1, 0, 3, 2, -1, 6, 5]  # (2i, 2i+1) along each line
    assert m1.tolist() == [-1, 2, 1, -1, 5, 4, -1]  # (2i+1, 2i+2)


def test_rows_and_columns():
    assert cs._rows(2, 3) == [[0, 1, 2], [3, 4, 5]]
    assert cs._cols(2, 3) == [[0, 3], [1, 4], [2, 5]]


def test_phase_alternates_starting_with_the_first():
    assert cs._phase(["a", "b"], 5) == ["a", "b", "a", "b", "a"]
    assert cs._phase(["a", "b"], 0) == []


def _pairs(s):
    """Each round's calls (a message either way), as directed pairs both ways."""
    return [sorted({(a, b) for m in r for a, b in ((m.src, m.dst[0]), (m.dst[0], m.src))})
            for r in s.rounds]


@pytest.mark.parametrize("a,b", [(2, 2), (2, 4), (4, 6), (6, 4)])
def test_even_sides_take_the_diameter(a, b):
    for first in (False, True):
        v = validate(line_phases(topology("mesh", a=a, b=b), columns_first=first))
        assert v.valid and v.R == a + b - 2, (a, b, first)


def test_rounds_follow_the_phases():
    s = line_phases(topology("mesh", a=2, b=4))
    pairs = _pairs(s)
    # rows (b - 1 = 3 rounds): (0,1),(2,3) | (1,2) | (0,1),(2,3); then columns (1 round)
    row0 = [(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4), (6, 7), (7, 6)]
    row1 = [(1, 2), (2, 1), (5, 6), (6, 5)]
    assert pairs[0] == sorted(row0) and pairs[1] == sorted(row1) and pairs[2] == sorted(row0)
    assert pairs[3] == sorted([(j, 4 + j) for j in range(4)] + [(4 + j, j) for j in range(4)])
    assert len(pairs) == 4
    assert s.origin == {"algorithm": "construction", "source": "line phases: rows, then columns as paths"}
    c = line_phases(topology("mesh", a=2, b=4), columns_first=True)
    assert _pairs(c)[0] == pairs[3] and len(c.rounds) == 4
    assert c.origin["source"] == "line phases: columns, then rows as paths"


def test_odd_sides_take_one_more_round_per_phase():
    # a path of 3 needs 3 alternating rounds (b - 1 + 1), 5 on a 3 x 3 mesh's
    # row phase plus column phase = 6 planned; the expansion stops at completion
    v = validate(line_phases(topology("mesh", a=3, b=3)))
    assert v.valid and v.R == 6
    v = validate(line_phases(topology("mesh", a=1, b=3)))
    assert v.valid and v.R == 3


def test_grid_constructions_only_on_meshes_and_tori():
    got = list(grid_constructions(topology("torus", a=2, b=4)))
    assert [label for label, _ in got] == ["line phases", "line phases, columns first"]
    assert all(validate(s).valid for _, s in got)
    assert list(grid_constructions(topology("hypercube", k=3))) == []
    assert [lb for lb, _ in grid_constructions(topology("mesh", a=2, b=2))] == \
        ["line phases", "line phases, columns first"]
