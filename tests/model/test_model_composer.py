from pipegossip.model import Couple, Op, RunConfig, compose, compose_all


def test_algorithm1_program_shape():
    p = compose(5, 2, (4, 0, 1, 3))
    assert p.pre == (Couple(Op.RECV, 0), Couple(Op.RECV, 1))
    assert [c.peer for c in p.broadcast] == [4, 0, 1, 3]
    assert all(c.op is Op.SEND for c in p.broadcast)
    assert p.post == (Couple(Op.RECV, 3), Couple(Op.RECV, 4))
    assert len(p.couples) == 2 * (5 - 1)
    assert str(p).startswith("p2: (WR0,R0) (WR1,R1) (WS4,S4)")


def test_any_discipline_has_peerless_receive_couples():
    p = compose(4, 1, (0, 2, 3), receive="any")
    assert p.pre == (Couple(Op.RECV, None),)
    assert p.post == (Couple(Op.RECV, None), Couple(Op.RECV, None))


def test_compose_all_follows_the_configuration():
    config = RunConfig.family(6, "pipelined")
    programs = compose_all(config)
    assert [p.pid for p in programs] == list(range(6))
    for p in programs:
        assert p.order == tuple(config.orders[p.pid].tolist())
        assert len(p.pre) == p.pid and len(p.post) == 6 - 1 - p.pid
