"""The optimum search's solver process: answers, and stops at its deadline (seconds)."""

import multiprocessing
import time

import pytest

pytest.importorskip("pysat")

from pipegossip.model.algorithms.optimum import _solve  # noqa: E402


def test_an_answer_comes_back_from_the_child():
    assert _solve([[1], [-2], [2, 3]], None) == ("SAT", {1, 3})
    assert _solve([[1], [-1]], None) == ("UNSAT", None)
    assert multiprocessing.active_children() == []


def test_the_deadline_stops_a_long_solver_call():
    # 10 pigeons in 9 holes: seconds to minutes for CaDiCaL; the deadline must end
    # the call (and the child) at once instead of waiting for the answer
    from pysat.examples.genhard import PHP
    t = time.monotonic()
    assert _solve(PHP(9).clauses, time.monotonic() + 0.3) == ("UNKNOWN", None)
    assert time.monotonic() - t < 15
    assert multiprocessing.active_children() == []
