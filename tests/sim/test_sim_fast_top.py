"""The fast mode's wrapper top in Amaranth's simulator: word sources, checker, batch driver.

:class:`~pipegossip.sim.fast.checker.FastTop` instantiates three Verilog
modules by name (the fabric, the expected-trace ROM, the batch log). Here
each instance is replaced by its Amaranth counterpart (the fabric or the
fault-injecting stand-in of :mod:`pipegossip.sim.fast.faults`, a memory
read combinationally, a log whose lines the testbench collects), so the
whole top runs in Amaranth's simulator: every fault kind of the fast mode is
named by the one judge from the top's summary at the fault's cycle,
processor and kind, as trace mode names it (tests/sim/test_sim_fast.py checks
the same on Verilator, and that both modes agree). A mutant of the top costs
seconds, not a build.

The top drives its ``run`` clock from ``clk``; Amaranth's simulator would
tick a clock driven that way a step after ``clk``, when the input registers
of the ``sync`` domain already hold their new values (a race Verilog does
not have). So here ``run`` gets a clock of its own from the simulator, in
phase with ``clk``, and the top's assignment to it goes to an unused signal.
"""

from __future__ import annotations

from amaranth.hdl import ClockSignal, DomainRenamer, Elaboratable, Fragment, Module, Signal
from amaranth.lib.memory import Memory
from amaranth.sim import Simulator

from pipegossip.hw.fsm.fabric import Fabric
from pipegossip.hw.ports import IN, ports
from pipegossip.model.config import RunConfig
from pipegossip.sim.fast import checker
from pipegossip.sim.fast.batch import LOG_MODULE
from pipegossip.sim.fast.faults import FaultyFabric
from pipegossip.sim.fast.mode import TAIL, expected_hex, fast_record
from pipegossip.sim.fast.ports import LOG_FIELDS, SUMMARY_PORTS
from pipegossip.sim.fsm.amaranth_run import _handle
from pipegossip.sim.judge.fsm import judge, model_result
from pipegossip.sim.record import RunSpec

from test_sim_fast import FIRST_KIND, _faults, _key

CONFIG = RunConfig.family(5, "pipelined", sessions=2)
WIDTH = 8


class _Stand(Elaboratable):
    """What an ``Instance`` of the top becomes here (see the module notes)."""

    def __init__(self, config, fabric, name, kw):
        self.config, self.fabric, self.name, self.kw = config, fabric, name, kw

    def elaborate(self, platform) -> Module:
        m = Module()
        kw, cfg = self.kw, self.config
        if self.name == "pipegossip_fabric":
            # every connection as wide as the fabric's port (Verilog would pad or cut it)
            widths = {("i_" if p.direction == IN else "o_") + p.name: p.width
                      for p in ports(cfg.n, cfg.sessions, WIDTH)}
            assert {k: len(v) for k, v in kw.items() if k in widths} == widths
            dut = self.fabric()
            # the top's run domain: clk, and the registered reset the fabric gets
            assert kw["i_clk"] is not None and kw["i_rst"].name == "rst_r"
            m.submodules.fabric = DomainRenamer("run")(dut)
            for port in ports(cfg.n, cfg.sessions, WIDTH):
                sig = _handle(dut, port.key, port.processor)
                if port.direction == IN:
                    m.d.comb += sig.eq(kw["i_" + port.name])
                else:
                    m.d.comb += kw["o_" + port.name].eq(sig)
        elif self.name == checker.ROM_MODULE:
            rows = [int(r, 16) for r in expected_hex(cfg).split()]
            assert (len(kw["i_addr"]), len(kw["o_data"])) == (
                (len(rows) - 1).bit_length(), checker.ExpectLayout(cfg.n, cfg.sessions).width)
            m.submodules.rom = rom = Memory(shape=len(kw["o_data"]), depth=len(rows), init=rows)
            read = rom.read_port(domain="comb")
            m.d.comb += [read.addr.eq(kw["i_addr"]), kw["o_data"].eq(read.data)]
        else:
            assert self.name == LOG_MODULE
            # the log's ports have LOG_FIELDS' widths (batch.log_verilog)
            assert {k: len(v) for k, v in kw.items() if k not in ("i_clk", "i_en")} == {
                "i_" + name: w for name, w in LOG_FIELDS}
        return m


def simulate(monkeypatch, items, fabric=None, config=CONFIG):
    """Drive ``FastTop`` as the fast testbench does; one summary per run.

    ``items``: dicts ``hold``/``seed`` (one run the testbench starts) or
    ``batch``/``seed``/``idle`` (a hardware batch: its log lines).
    """
    length = model_result(config).length
    stands = {}

    def instance(name, **kw):
        stands[name] = _Stand(config, fabric or (lambda: Fabric(config, WIDTH)), name, kw)
        return stands[name]

    monkeypatch.setattr(checker, "Instance", instance)
    monkeypatch.setattr(checker, "ClockSignal", lambda domain="sync": Signal(
        name="run_clk_unused") if domain == "run" else ClockSignal(domain))
    top = checker.FastTop(config.n, config.sessions, WIDTH, length, TAIL)
    out: list[dict] = []

    async def bench(ctx) -> None:
        log = stands[LOG_MODULE].kw
        for item in items:
            ctx.set(top.seed, item["seed"])
            ctx.set(top.hold, item.get("hold", 0))
            if "batch" in item:
                ctx.set(top.count, item["batch"])
                ctx.set(top.idle, item["idle"])
                ctx.set(top.go, 1)
                await ctx.tick()
                ctx.set(top.go, 0)
                lines = 0
                for _ in range(item["batch"] * (3 * (length + TAIL) + 40)):
                    await ctx.tick()
                    if ctx.get(log["i_en"]):
                        line = {k: ctx.get(log["i_" + k]) for k, _ in LOG_FIELDS}
                        out.append(dict(line, wall_seconds=0.0, wakes=1))
                        lines += 1
                    if lines == item["batch"] and not ctx.get(top.batch_busy):
                        break
                assert ctx.get(top.runs_done) == item["batch"]
                continue
            await ctx.tick().repeat(2)
            ctx.set(top.start, 1)
            await ctx.tick()
            ctx.set(top.start, 0)
            for waited in range(4 * (length + TAIL)):
                await ctx.tick()
                if ctx.get(top.finished):
                    break
            s = {k: ctx.get(getattr(top, k)) for k in SUMMARY_PORTS}
            out.append(dict(s, waited=waited, wall_seconds=0.0, wakes=1))

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_clock(1e-6, domain="run")
    sim.add_testbench(bench)
    sim.run()
    return out


def _verdict(s, seed=0, config=CONFIG):
    record = fast_record(RunSpec(word_seed=seed), config.n, s, True, bool(s["idle_bad"]),
                         "Amaranth simulator")
    return judge(config, WIDTH, record)


def test_clean_runs_match_with_the_models_totals(monkeypatch):
    model = model_result(CONFIG)
    runs = simulate(monkeypatch, [dict(seed=0), dict(seed=7), dict(seed=0xFFFFFFFF)])
    for s, seed in zip(runs, (0, 7, 0xFFFFFFFF)):
        assert _verdict(s, seed).match, _verdict(s, seed).report()
        assert (s["finished"], s["bad"], s["idle_bad"], s["busy"], s["done"], s["stall"]) == (
            1, 0, 0, 0, 1, 0)
        assert s["deliveries"] == len(model.deliveries)
        assert s["used_sum"] == int(model.utilization.sum())
        assert s["busy_cycles"] == model.length and s["done_at"] == model.length + 1


def test_each_fault_is_the_judges_first_mismatch_in_fast_mode(monkeypatch):
    """Fault k of the stand-in (hold k + 1), one after another, clean runs around them."""
    faults = _faults(CONFIG)
    holds = [0] + [k + 1 for k in range(len(faults))] + [0]
    runs = simulate(monkeypatch, [dict(seed=0, hold=h) for h in holds],
                    fabric=lambda: FaultyFabric(CONFIG, WIDTH, faults))
    assert _verdict(runs[0]).match and _verdict(runs[-1]).match
    for fault, s in zip(faults, runs[1:-1]):
        assert _key(_verdict(s).first_mismatch) == (
            fault.cycle, fault.processor, FIRST_KIND[fault.kind]), (fault, s)
        assert s["finished"] == 1 and s["idle_bad"] == 0


def test_a_batch_logs_each_run_as_the_single_runs_report(monkeypatch):
    singles = simulate(monkeypatch, [dict(seed=s) for s in (5, 6, 7)])
    batch = simulate(monkeypatch, [dict(batch=3, seed=5, idle=1)])
    assert [b["run"] for b in batch] == [0, 1, 2]
    # from the start cycle: the checked span (L + tail + 1 cycles), then the log's
    assert [b["waited"] for b in batch] == [model_result(CONFIG).length + TAIL + 2] * 3
    for one, logged in zip(singles, batch):
        assert logged["finished"] == 1 and _verdict(logged).match
        assert {k: logged[k] for k in one if k in logged and k != "waited"} == {
            k: one[k] for k in one if k in logged and k != "waited"}


class _NeverStarts(Elaboratable):
    """The fabric, ``busy`` forced high: it never takes ``start``."""

    def __init__(self):
        self.inner = Fabric(CONFIG, WIDTH)

    def __getattr__(self, name):
        return getattr(self.inner, name) if name != "busy" else self.__dict__["busy"]

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.inner = self.inner
        m.d.comb += self.busy.eq(1)
        return m


def test_a_batched_run_the_fabric_never_takes_is_logged_unfinished_at_the_limit(monkeypatch):
    def never():
        f = _NeverStarts()
        f.__dict__["busy"] = Signal()
        return f

    span = model_result(CONFIG).length + TAIL + 1
    (s,) = simulate(monkeypatch, [dict(batch=1, seed=0, idle=0)], fabric=never)
    # given up 2 * span + 16 cycles after the start cycle; logged the cycle after
    assert (s["finished"], s["bad"], s["busy"], s["waited"]) == (0, 0, 1, 2 * span + 17)


def test_the_tops_ports_are_as_wide_as_what_they_feed():
    length = model_result(CONFIG).length
    top = checker.FastTop(CONFIG.n, CONFIG.sessions, WIDTH, length, TAIL)
    drv, ck = top.driver, top.checker
    assert (len(top.hold), len(top.seed)) == (CONFIG.n, len(ck.seed))
    assert (len(top.count), len(top.idle), len(top.runs_done)) == (
        len(drv.count), len(drv.idle), len(drv.runs_done))
    summary = {name: len(getattr(top, name)) for name in SUMMARY_PORTS}
    assert summary == {name: w for name, w in LOG_FIELDS if name in summary}
    Fragment.get(top, None)  # it elaborates with the real instances too


def test_the_signatures_are_as_documented():
    """Every port of the checker and the top as wide as their docstrings say."""
    n, length = CONFIG.n, model_result(CONFIG).length
    top = checker.FastTop(n, CONFIG.sessions, WIDTH, length, TAIL)
    ck = top.checker
    lay = checker.ExpectLayout(n, CONFIG.sessions)
    one = dict.fromkeys(("begin", "taken", "busy", "done", "stall", "active", "finished", "bad",
                         "idle_bad", "dvalid"), 1)
    want = dict(one, seed=32, action=3, peer=lay.pw, dsource=lay.pw, dsession=lay.sw,
                dword=WIDTH, used=lay.uw, cycle=len(ck.cycle), row=lay.width,
                addr=(length + TAIL).bit_length(), bad_cycle=32, bad_proc=16, bad_kinds=8,
                deliveries=32, used_sum=32, busy_cycles=32, done_at=32)
    got = {}
    for name in want:
        port = getattr(ck, name)
        got[name] = len(port[0]) if name in LANE_PORTS else len(port)
        if name in LANE_PORTS:
            assert len(port) == n
    assert got == want
    assert len(ck.cycle) == next(p.width for p in ports(n, CONFIG.sessions, WIDTH)
                                 if p.name == "cycle")
    assert {k: len(getattr(top, k)) for k in ("start", "seed", "hold", "go", "count", "idle",
                                              "batch_busy", "runs_done", "busy", "done",
                                              "stall")} == dict(
        start=1, seed=32, hold=n, go=1, count=32, idle=8, batch_busy=1, runs_done=32, busy=1,
        done=1, stall=1)
    Fragment.get(top, None)


LANE_PORTS = ("action", "peer", "dvalid", "dsource", "dsession", "dword", "taken")
