"""Event extraction: the bindings and access orders of a code object, and the events dropped
before comparing (future imports, folded constants, constant builds). Calls and returns are
named in ``labels``."""

from __future__ import annotations

import dis
import keyword
from collections import defaultdict

from depyf.decompiler.flowcheck.tables import (
    _ACCESSES,
    _BINDINGS,
    _CALLS,
    _CONSTANT_ARGUMENT_OPS,
    _DUPLICATES,
    _GLOBAL_READS,
    _MOVES,
    _REBINDABLE_READS,
    _TEMPORARY,
    _TERMINATOR_OPS,
    _UNARY,
    _UNCONDITIONAL,
    _UNKNOWN,
    MAX_ACCESS_STEPS,
    _fold,
    _stack_effect,
)

_ACCESS_KINDS = ("read", "write", "del", "call")
# what constant folding sees in an instruction, by its name (remembered)
_OTHER, _CONSTANT, _UNARY_OPERATOR, _BINARY_OPERATOR = range(4)
_FOLD_KINDS: dict[str, int] = {}
_HAVE_ARGUMENT = dis.HAVE_ARGUMENT
# Instructions that use up the values they pop without computing one from them
_CONSUMERS = frozenset(
    {"POP_TOP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "END_FOR", "POP_EXCEPT", "END_SEND", "POP_ITER"}
    | {f"POP_JUMP{way}_IF_{test}" for way in ("", "_FORWARD", "_BACKWARD")
       for test in ("FALSE", "TRUE", "NONE", "NOT_NONE")})
# Instructions that push a value of their own, not one computed from what lies below
_PUSHES_FRESH = frozenset({"LOAD_CONST", "LOAD_SMALL_INT", "LOAD_GLOBAL", "LOAD_NAME", "PUSH_NULL",
                           "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS", "LOAD_COMMON_CONSTANT", "BUILD_LIST",
                           "BUILD_MAP", "BUILD_SET", "BUILD_TUPLE", "LOAD_CLOSURE", "MAKE_CELL"})


class EventExtraction:
    """What the flow records at each instruction, and what it leaves out."""

    def bindings(self, reachable: bool = True) -> dict[str, set]:
        """name -> the (store/del, kind) pairs of every reachable instruction that binds or unbinds
        it (with ``reachable=False``, of the instructions no path reaches: code the compiler
        kept after a constant test or in the handler of an empty ``try`` body)."""
        walked = self._walk_taken()[0]
        found: dict[str, set] = defaultdict(set)
        for k, ins in enumerate(self.instructions):
            binding = _BINDINGS.get(ins.opname)
            if binding is not None and k not in self._future_import and (k in walked) == reachable:
                names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
                stored = names[:1] if ins.opname == "STORE_FAST_LOAD_FAST" else names
                for name in stored:
                    found[str(name)].add(binding)
        return found

    def accesses(self) -> dict[int, list[tuple[str, str]]]:
        """Instruction -> the (variable, kind of access) it makes, in order, for ``access_orders``:
        reads, writes and deletes of locals and cells, reads of globals, and, where the code reads a
        global or cell, each call as a possible rebinding of every such variable. (Read once.)"""
        if "_accesses" in self.__dict__:
            return self._accesses
        accesses: dict[int, list[tuple[str, str]]] = {}
        rebindable: set[str] = set()
        calls = []
        walked = self._walk_taken()[0]
        for k, ins in enumerate(self.instructions):
            if k in self._future_import or k in self._constant_builds or k not in walked:
                continue    # (code no path reaches accesses nothing)
            opname, argval = ins.opname, ins.argval
            if opname == "LOAD_ASSERTION_ERROR":
                # ``assert``'s exception: source that raises it reads the global
                opname, argval = "LOAD_GLOBAL", "AssertionError"
            elif opname == "LOAD_COMMON_CONSTANT" and ins.argrepr.isidentifier() \
                    and not keyword.iskeyword(ins.argrepr):
                # 3.14: ``assert``'s exception or a builtin (``all``, ``tuple``): a global in source
                opname, argval = "LOAD_GLOBAL", ins.argrepr
            if opname in _REBINDABLE_READS:
                rebindable.add(str(argval))
            elif opname in _CALLS:
                calls.append(k)
            kinds = ("read",) if opname in _GLOBAL_READS else _ACCESSES.get(opname)
            if kinds is None:
                continue
            names = argval if isinstance(argval, tuple) else (argval,) * len(kinds)
            accesses[k] = [(str(n), kind) for n, kind in zip(names, kinds, strict=True)]
        if rebindable:
            for k in calls:
                accesses[k] = [(name, "call") for name in sorted(rebindable)]
        self._accesses = dict(sorted(accesses.items()))   # in the order of the code, as walks expect
        return self._accesses

    def access_orders(self) -> dict[str, set] | None:
        """For each local or cell variable both read and written (or deleted), which kind of
        access (read, write, del; or the start) can come right before which other kind, along any
        path. Repeats of one kind are one (a decompiler may read a variable twice where the
        bytecode kept a copy on the stack). None when following them would take too long.

        A call may rebind any global or cell (``global``, ``nonlocal`` in what it runs): for
        those read here, each call is an access too, so a value read before a call and used
        after it must not turn into source that reads it after the call."""
        accesses = self.accesses()
        by_name: dict[str, list[int]] = defaultdict(list)
        kinds_of: dict[str, set[str]] = defaultdict(set)
        for k, found in accesses.items():
            for name, kind in found:
                kinds_of[name].add(kind)
            for name in dict.fromkeys(n for n, _ in found):
                by_name[name].append(k)
        # (a variable only read, or only written, is accessed in one order whatever the layout)
        checked = [name for name, places in by_name.items()
                   if "read" in kinds_of[name] and len(kinds_of[name]) > 1 and not _TEMPORARY.match(name)]
        if not checked:
            return {}
        count = len(self.instructions)
        # Straight-line blocks: only a block's last instruction goes anywhere but to the next one.
        # (3.10: asking every instruction's successors also makes its handlers starts)
        successors: list[list[tuple[int, str]]] = []
        leader = [False] * (count + 1)
        cache = self._successor_cache
        for k in range(count):
            nexts = cache.get(k)
            if nexts is None:
                nexts = self._successors(k)
            successors.append(nexts)
            if len(nexts) != 1 or nexts[0][0] != k + 1:
                for n, _ in nexts:
                    leader[n] = True
                leader[k + 1] = True
        for s in self.starts:
            leader[s] = True
        block_of = [0] * count
        ends = []     # the last instruction of each block
        block = 0
        for k in range(count):
            block_of[k] = block
            if leader[k + 1]:
                ends.append(k)
                block += 1
        if count and not leader[count]:
            ends.append(count - 1)
        blocks = len(ends)
        block_successors: list[list[int]] = [[] for _ in range(blocks)]
        block_predecessors: list[list[int]] = [[] for _ in range(blocks)]
        for b, k in enumerate(ends):
            for n, _ in successors[k]:
                block_successors[b].append(block_of[n])
                block_predecessors[block_of[n]].append(b)
        # Every checked variable is a bit; per block and kind of access, the variables whose
        # first access in the block is of that kind, and those the block accesses at all.
        bit_of = {name: 1 << i for i, name in enumerate(checked)}
        first_in = {kind: [0] * blocks for kind in _ACCESS_KINDS}
        accessed = [0] * blocks
        first_kind: dict[tuple[str, int], str] = {}   # (variable, instruction) -> its first access there
        last_kind: dict[tuple[str, int], str] = {}
        pairs_of: dict[str, set] = {}
        for name in checked:
            bit = bit_of[name]
            pairs = pairs_of[name] = set()
            for k in by_name[name]:
                own = [a for n, a in accesses[k] if n == name]
                pairs.update((a, b) for a, b in zip(own, own[1:], strict=False) if a != b)
                first_kind[name, k], last_kind[name, k] = own[0], own[-1]
                b = block_of[k]
                if not accessed[b] & bit:
                    accessed[b] |= bit
                    first_in[own[0]][b] |= bit
        # For each block and kind, the variables of which an access of that kind comes first
        # on some path from the block's beginning (the block's own first access, else one after).
        met = {kind: list(first_in[kind]) for kind in _ACCESS_KINDS}
        work = list(range(blocks))
        queued = [True] * blocks
        budget = MAX_ACCESS_STEPS
        while work:
            b = work.pop()
            queued[b] = False
            budget -= 1
            if budget < 0:
                return None
            changed = False
            for kind in _ACCESS_KINDS:
                found = met[kind]
                later = 0
                for n in block_successors[b]:
                    later |= found[n]
                value = first_in[kind][b] | (later & ~accessed[b])
                if value != found[b]:
                    found[b] = value
                    changed = True
            if changed:
                for p in block_predecessors[b]:
                    if not queued[p]:
                        queued[p] = True
                        work.append(p)
        after = {kind: [0] * blocks for kind in _ACCESS_KINDS}   # the same from a block's end
        for b in range(blocks):
            for kind in _ACCESS_KINDS:
                found = met[kind]
                for n in block_successors[b]:
                    after[kind][b] |= found[n]
        orders: dict[str, set] = {}
        for name in checked:
            bit = bit_of[name]
            pairs = pairs_of[name]
            for s in self.starts:
                pairs.update(("start", kind) for kind in _ACCESS_KINDS if met[kind][block_of[s]] & bit)
            places = by_name[name]
            for i, k in enumerate(places):
                last = last_kind[name, k]
                if i + 1 < len(places) and block_of[places[i + 1]] == block_of[k]:
                    first = first_kind[name, places[i + 1]]
                    if first != last:
                        pairs.add((last, first))
                    continue
                pairs.update((last, kind) for kind in _ACCESS_KINDS
                             if kind != last and after[kind][block_of[k]] & bit)
            orders[name] = pairs
        return orders

    def stale_reads(self) -> set[str]:
        """The variables read before a write (or delete) of them whose value is still to be used
        after it: ``(lc, r1), r0 = g(), r1`` reads ``r1`` for ``r0`` before storing ``r1``;
        ``lc, r1 = g(); r0 = r1`` has no such read, it uses the new value. (The access orders
        miss this inside loops, where every order of read and write occurs on some path.)
        Followed through straight-line code, as stack slots (each with the variables its value
        was computed from); a value stored in a decompiler temporary keeps its variables."""
        accesses = self.accesses()
        slots: list[frozenset] = []
        kept: dict[str, frozenset] = {}     # temporary -> the variables its value was computed from
        found: set[str] = set()
        falls_through = True
        starts = set(self.starts) | self.targets
        empty: frozenset = frozenset()
        for k, ins in enumerate(self.instructions):
            if not falls_through or k in starts:
                slots = []
            op = ins.opname
            opcode = ins.opcode
            effect = _stack_effect(opcode, ins.arg if opcode >= _HAVE_ARGUMENT else None)
            falls_through = op not in _UNCONDITIONAL and op not in _TERMINATOR_OPS
            if effect is None:
                slots = []
                continue
            here = accesses.get(k, ())
            written = {name for name, kind in here if kind in ("write", "del")}
            read = frozenset(name for name, kind in here if kind == "read")
            depth = len(slots)
            after = depth + effect
            # (3.13+'s fused store-then-load pops the value it stores and pushes a new one)
            stores_then_loads = op == "STORE_FAST_LOAD_FAST"
            if written:
                # the values this instruction stores are popped; what stays below is pending
                below = slots[:-1] if stores_then_loads else slots[:after] if after < depth else slots
                pending = set().union(*below) if below else set()
                pending.update(*(v for t, v in kept.items() if t not in written))
                found.update(written & pending)
                for name in written:
                    if _TEMPORARY.match(name):
                        kept[name] = slots[-1] if slots and after < depth else empty
            if op in _MOVES:
                n = _MOVES[op] or ins.arg
                if 2 <= n <= depth:
                    if op == "SWAP":
                        slots[-1], slots[-n] = slots[-n], slots[-1]
                    else:       # ROT_*: the top goes down to the n-th place
                        slots[-n:] = [slots[-1], *slots[-n:-1]]
                continue
            if op in _DUPLICATES:
                n = _DUPLICATES[op] or ins.arg
                if 1 <= n <= depth:
                    slots.extend(slots[-n:][:1] if op == "COPY" else slots[-n:])
                continue
            popped = slots[after:] if after < depth else []
            del slots[max(after, 0):]
            carried = read.union(*popped) if popped else read
            if any(_TEMPORARY.match(name) for name, kind in here if kind == "read"):
                carried = carried.union(*(kept.get(name, empty) for name, kind in here if kind == "read"))
            if written or op in _CONSUMERS or op.startswith(("STORE_", "DELETE_")):
                carried = read
            if after > len(slots):
                if slots and effect >= 0 and not read and op not in _PUSHES_FRESH:
                    carried = carried | slots[-1]     # (UNPACK_SEQUENCE, GET_ITER: from the value below)
                slots.extend([carried] * (after - len(slots)))
            elif stores_then_loads and slots:
                slots[-1] = carried
            elif slots and carried:
                slots[-1] = slots[-1] | carried
        return found

    def _drop_future_imports(self) -> None:
        """``from __future__ import ...`` (which source needs where the original had a compiler flag)."""
        for k, ins in enumerate(self.instructions):
            if ins.opname == "IMPORT_NAME" and ins.argval == "__future__":
                j = k
                while j < len(self.instructions) and self.instructions[j].opname != "POP_TOP":
                    self.events[j] = None
                    self._future_import.add(j)
                    j += 1

    def _drop_folded_constants(self, carried: dict[int, int] | None = None) -> None:
        """Operators on constants that the compiler left unfolded (``-(7 or x)`` keeps LOAD_CONST 7;
        UNARY_NEGATIVE, ``(-1 or 7) * 3`` keeps the multiplication): source that says ``-7`` or
        ``-1 * 3`` compiles to one constant, and an operator on constants observes nothing outside.
        Their values are kept where cheap to compute, so a test of one has a known outcome.
        ``carried`` maps a jump target to the constant every live way into it leaves on the stack
        (``(3 or x) // 3``: the constant test's jump carries 3 past the dead ``x``)."""
        carried = carried or {}
        self._successor_cache: dict[int, list[tuple[int, str]]] = {}   # (they depend on the constants)
        self._walked = None
        starts: dict[int, int] = {}   # index of an instruction making a constant -> where its operands begin
        for k, ins in enumerate(self.instructions):
            op = ins.opname
            kind = _FOLD_KINDS.get(op)
            if kind is None:
                kind = _FOLD_KINDS[op] = (
                    _CONSTANT if op in ("LOAD_CONST", "LOAD_SMALL_INT") else _UNARY_OPERATOR if op in _UNARY
                    else _BINARY_OPERATOR if op.startswith("BINARY_") else _OTHER)
            if kind == _OTHER:
                continue
            if kind == _CONSTANT:
                starts[k] = k
                self.constants[k] = ins.argval
                continue
            if kind == _UNARY_OPERATOR and k - 1 in starts:
                starts[k] = starts[k - 1]
                operands = [k - 1]
            elif kind == _BINARY_OPERATOR and k - 1 in starts \
                    and carried.get(starts[k - 1], starts[k - 1] - 1) in starts:
                right = starts[k - 1]
                left = carried.get(right, right - 1)
                starts[k] = right if right in carried else starts[left]
                operands = [left, k - 1]
            elif kind == _BINARY_OPERATOR and carried.get(k) in starts \
                    and starts[carried[k]] - 1 in starts:
                # the constant test's jump lands on the operator itself (``True // (9 or x)``)
                right = carried[k]
                left = starts[right] - 1
                starts[k] = starts[left]
                operands = [left, right]
            else:
                continue
            landing = k if k in carried else k + 1   # the carried jump lands on k: not a way in
            if any(j in self.targets for j in range(starts[k] + 1, landing)):
                del starts[k]
                continue
            self.events[k] = None
            if all(j in self.constants for j in operands):
                value = _fold(ins, [self.constants[j] for j in operands])
                if value is not _UNKNOWN:
                    self.constants[k] = value

    def _drop_constant_builds(self, builders: set[str]) -> None:
        """``float('nan')`` and the like: the global and the call that only rebuild a constant."""
        for k, ins in enumerate(self.instructions):
            if ins.opname != "LOAD_GLOBAL" or ins.argval not in builders:
                continue
            j = k + 1  # the call after the constant arguments
            while j < len(self.instructions) and self.events[j] is None \
                    and self.instructions[j].opname in _CONSTANT_ARGUMENT_OPS:
                j += 1
            if j < len(self.instructions) and self.events[j] is not None and self.events[j][0] == "CALL":
                self.events[j] = None
                self._constant_builds.update((k, j))
