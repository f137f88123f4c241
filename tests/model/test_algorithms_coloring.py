"""The colouring heuristic (Beier and Sibeyn, sections 6 and 8): matchings and Table 6."""

import numpy as np
import pytest

from pipegossip.model.algorithms.coloring import (color_schedule, matchings, parse_colors,
                                                   search_colors)
from pipegossip.model.schedules.topologies import topology
from pipegossip.model.schedules.validate import validate
from pipegossip.paper.heuristics import paper_tables

TABLE6 = [(fam, int(k), s) for fam, rows in paper_tables()["table6"].items()
          for k, s in rows.items()]


@pytest.mark.parametrize("name,params", [
    ("star", {"k": 5}), ("pancake", {"k": 5}), ("ccc", {"k": 4}), ("ccc", {"k": 5}),
    ("butterfly", {"k": 4}), ("butterfly", {"k": 5}), ("hypercube", {"k": 4}),
    ("shuffle_exchange", {"k": 4}), ("debruijn", {"k": 4}), ("mesh", {"a": 3, "b": 3})])
def test_matchings_are_matchings_on_edges_covering_all(name, params):
    topo = topology(name, **params)
    seen = set()
    for mate in matchings(topo):
        v = np.flatnonzero(mate >= 0)
        assert (mate[mate[v]] == v).all()
        assert topo.has_edges(v, mate[v]).all()
        seen.update(zip(np.minimum(v, mate[v]).tolist(), np.maximum(v, mate[v]).tolist()))
    assert seen == set(map(tuple, topo.edges.tolist()))


def test_family_matchings_are_perfect():
    for name, k in (("star", 5), ("pancake", 5), ("ccc", 5), ("ccc", 6), ("butterfly", 5),
                    ("butterfly", 6)):
        assert all((m >= 0).all() for m in matchings(topology(name, k=k)))


@pytest.mark.parametrize("fam,k,colors", [t for t in TABLE6 if t[0] in ("star", "pancake")
                                           and t[1] <= 6 or t[0] in ("ccc", "butterfly")
                                           and t[1] <= 7])
def test_table6_strings_give_the_papers_R(fam, k, colors):
    topo = topology(fam, k=k)
    v = validate(color_schedule(topo, colors))
    assert v.valid, v.error
    assert v.R == len(colors)
    if fam in ("star", "pancake") or k % 2 == 0:  # the paper: S optimal there
        assert v.S == topo.n - 1


def test_pancake4_figure6_and_butterfly3_figure5():
    v = validate(color_schedule(topology("pancake", k=4), "02102"))
    assert (v.R, v.S) == (5, 23)
    v = validate(color_schedule(topology("butterfly", k=3), "012320"))
    assert (v.R, v.S) == (6, 25)


@pytest.mark.slow
@pytest.mark.parametrize("fam,k,colors", [t for t in TABLE6 if t[0] in ("star", "pancake")
                                           and t[1] == 7 or t[0] in ("ccc", "butterfly")
                                           and t[1] == 8])
def test_table6_large(fam, k, colors):
    v = validate(color_schedule(topology(fam, k=k), colors))
    assert v.valid and v.R == len(colors)


def test_string_repeats_until_complete():
    # Table 6's CCC_3 string 0120120 is "012" repeated: the short form expands to it.
    assert validate(color_schedule(topology("ccc", k=3), "012")).R == 7
    with pytest.raises(ValueError, match="do not complete"):
        color_schedule(topology("hypercube", k=4), "01")  # dimensions 2, 3 never used


@pytest.mark.parametrize("fam,k", [("star", 4), ("pancake", 4), ("pancake", 5), ("ccc", 4),
                                   ("butterfly", 3), ("hypercube", 5)])
def test_search_finds_the_papers_length(fam, k):
    topo = topology(fam, k=k)
    want = {"hypercube": 5}.get(fam) or len(paper_tables()["table6"][fam][str(k)])
    found = search_colors(topo, max_rounds=want)
    assert found is not None and len(found) <= want
    assert validate(color_schedule(topo, found)).R == len(found)


def test_bad_strings():
    with pytest.raises(ValueError, match="digits"):
        parse_colors("0a", 3)
    with pytest.raises(ValueError, match="not a matching"):
        parse_colors("013", 3)


@pytest.mark.parametrize("block", [1, 8, 100])
@pytest.mark.parametrize("fam,k", [("ccc", 4), ("butterfly", 3), ("star", 4)])
def test_rounds_in_blocks_make_the_same_schedule(monkeypatch, block, fam, k):
    # a late round of a 22,528-node gossip moves ~n^2/2 items: the pairs go in blocks of
    # matching.BLOCK knowledge bits, ids int32 until the end; any block size gives the
    # very same schedule, item ids int64
    from pipegossip.model.algorithms import matching
    from pipegossip.model.schedules.ir import dumps
    topo = topology(fam, k=k)
    colors = paper_tables()["table6"][fam][str(k)]
    whole = color_schedule(topo, colors)
    monkeypatch.setattr(matching, "BLOCK", block)
    parts = color_schedule(topo, colors)
    assert dumps(parts) == dumps(whole) and validate(parts).valid
    assert parts.items.dtype == np.int64 and validate(parts).R == len(colors)
