"""Where the network fabric's nodes keep their words: one bank per link, plus their own.

A node of the network fabric may store a word from every link in one
cycle. One store with a write port per link does not map to RAM (Yosys
keeps it in flip-flops and multiplexers), so each node's store is split
into banks with one write port each: bank ``j`` takes what arrives on link
``j``, the last bank the items loaded before the run. The compiler decides
from which bank and address every send reads (:func:`assign_banks`), so the
hardware needs no table of where a slot went, except for the read-back after
the run, which the driver loads as a directory.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .program import NONE, ProgramError

__all__ = ["DirEntry", "assign_banks", "fresh_sends"]


class DirEntry(NamedTuple):
    """Where a node keeps a slot's word: bank ``bank`` (link j's, or ``degree``: its own), ``addr``."""

    bank: int
    addr: int


def assign_banks(tx: np.ndarray, rx: np.ndarray, initial: np.ndarray, links: list[list[int]],
                 bank_depth: int) -> tuple[np.ndarray, np.ndarray, list[dict[int, DirEntry]], int]:
    """Place every stored word in a bank: ``(tx_bank, tx_addr, directory, need)``.

    A node's store is one bank per link plus its own bank, so that each bank
    has one write port (its link's arrivals, or the load's items) and maps to
    RAM. A bank is filled in arrival order: its k-th write goes to address
    k (the hardware counts them), the own bank's in ascending slot order of
    the loaded items. A send reads the slot where the node first stored it,
    so the compiler, not the hardware, knows the bank; ``directory[v]``
    (slot -> :class:`DirEntry`) is what a read-back of node ``v`` finds.
    ``tx_bank``/``tx_addr`` are ``(cycles, ports)``, 0 where no slot is sent;
    ``need`` is the most words any bank takes (the smallest bank depth that runs it).

    Raises
    ------
    ProgramError
        A bank would take more than ``bank_depth`` words (the message names
        the depth the schedule needs).
    """
    n = len(links)
    offsets = [0, *np.cumsum([len(x) for x in links]).tolist()]
    tx_bank, tx_addr = np.zeros(tx.shape, np.int64), np.zeros(tx.shape, np.int64)
    directory: list[dict[int, DirEntry]] = []
    count = []
    for v in range(n):
        own = [int(x) for x in np.flatnonzero(initial[v])]
        directory.append({x: DirEntry(len(links[v]), a) for a, x in enumerate(own)})
        count.append([0] * len(links[v]) + [len(own)])
    for c in range(tx.shape[0]):
        for v in range(n):
            for j in range(len(links[v])):
                x = int(tx[c, offsets[v] + j])
                if x >= 0:  # a store slot (ACC and NONE are negative)
                    tx_bank[c, offsets[v] + j], tx_addr[c, offsets[v] + j] = directory[v][x]
        for v in range(n):  # written at the edge ending the cycle: readable from the next
            for j in range(len(links[v])):
                x = int(rx[c, offsets[v] + j])
                if x != NONE:
                    directory[v].setdefault(x, DirEntry(j, count[v][j]))
                    count[v][j] += 1
    need = max(1, max(max(k) for k in count))
    if need > bank_depth:
        v = max(range(n), key=lambda u: max(count[u]))
        b = count[v].index(need)
        what = "its own items" if b == len(links[v]) else f"the words arriving from {links[v][b]}"
        raise ProgramError(f"node {v} keeps {need} words in one bank ({what}) but the fabric's "
                           f"banks hold bank_depth={bank_depth}: build with --bank-depth {need} "
                           f"or more")
    return tx_bank, tx_addr, directory, need


def fresh_sends(tx: np.ndarray, rx: np.ndarray, initial: np.ndarray,
                links: list[list[int]]) -> np.ndarray:
    """``(cycles, ports)`` bool: the send's word is first stored by its node in the cycle before.

    Such a word is still on its way into its bank when a node with registered
    link ends chooses what to send next (``hw.network.reg_node``): the node
    takes it from the link it arrives on (the bank :func:`assign_banks` gives
    it: the arriving link's), not from the bank. A slot the node already
    held (its own items, or a word that arrived earlier) is never fresh, even
    when the same word arrives again.
    """
    n = len(links)
    offsets = [0, *np.cumsum([len(x) for x in links]).tolist()]
    out = np.zeros(tx.shape, bool)
    # slot -> the cycle it was first stored in (loaded items: before the run)
    first = [{int(x): -2 for x in np.flatnonzero(initial[v])} for v in range(n)]
    for c in range(tx.shape[0]):
        for v in range(n):
            for j in range(len(links[v])):
                x = int(tx[c, offsets[v] + j])
                if x >= 0 and first[v].get(x) == c - 1:
                    out[c, offsets[v] + j] = True
        for v in range(n):
            for j in range(len(links[v])):
                x = int(rx[c, offsets[v] + j])
                if x != NONE:
                    first[v].setdefault(x, c)
    return out
