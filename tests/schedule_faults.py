"""Faults planted into a valid schedule, shared by the validator's tests (whole and streamed)."""

from __future__ import annotations

from hypothesis import strategies as st

from pipegossip.model.schedules.ir import Message, Schedule


def rebuild(s: Schedule, rounds) -> Schedule:
    """``s`` with its rounds replaced by ``rounds`` (lists of messages)."""
    return Schedule.from_rounds(rounds, topology=s.topology, model=s.model, p=s.p,
                                primitive=s.primitive, root=s.root)


def plant(s: Schedule, kind: str, data, late: bool = False) -> Schedule | None:
    """``s`` with one fault of ``kind`` in a drawn message; None where ``kind`` cannot apply.

    ``late``: the round is drawn from the later half of the non-empty rounds (a fault
    the streamed validator meets only after many rounds). Kinds: drop, unheld,
    double-book, exceed-p, break-edge, self, unknown-node, empty-message, empty-round.
    """
    rounds = [list(r) for r in s.rounds]
    full = [i for i, r in enumerate(rounds) if r]
    r = data.draw(st.sampled_from(full[len(full) // 2:] if late else full), label="round")
    j = data.draw(st.integers(0, len(rounds[r]) - 1), label="message")
    m, n = rounds[r][j], s.n
    if kind == "drop":
        # every item reaches every node once in these schedules: dropping a
        # non-empty message loses information for good
        if not m.items:
            return None
        del rounds[r][j]
    elif kind == "unheld":
        # an item the sender cannot hold yet: one nobody has sent it so far
        known = {m.src}
        for rr in rounds[:r]:
            for x in rr:
                if m.src in x.dst:
                    known.update(x.items)
        lacking = [x for x in range(n) if x not in known]
        if not lacking:
            return None
        x = data.draw(st.sampled_from(lacking))
        rounds[r][j] = Message(m.src, m.dst, m.items + (x,) if s.p is None else (x,))
    elif kind == "double-book":
        other = data.draw(st.sampled_from([x for x in range(n) if x != m.src and x not in m.dst]))
        if s.model == "F1" or s.model == "port":
            rounds[r].append(Message(other, m.dst[:1], (other,)))
        else:
            rounds[r].append(Message(m.src, (other,), (m.src,)))
    elif kind == "exceed-p":
        if s.p is None:
            return None
        rounds[r][j] = Message(m.src, m.dst, tuple(range(s.p + 1)))
    elif kind == "break-edge":
        if s.topology.edges is None:
            return None
        bad = [x for x in range(n) if x != m.src and not s.topology.has_edges([m.src], [x])[0]]
        if not bad:
            return None
        rounds[r][j] = Message(m.src, (data.draw(st.sampled_from(bad)),), m.items)
    elif kind == "self":
        rounds[r][j] = Message(m.src, (m.src,), m.items)
    elif kind == "unknown-node":
        rounds[r][j] = Message(m.src, (n + 3,), m.items)
    elif kind == "empty-message":
        rounds[r].insert(j, Message(m.src, m.dst, ()))
    elif kind == "empty-round":
        rounds.insert(r, [])
    else:
        raise ValueError(f"unknown fault kind {kind!r}")
    return rebuild(s, rounds)
