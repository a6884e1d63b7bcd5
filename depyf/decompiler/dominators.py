"""Post-dominators of a region of the control-flow graph (Cooper, Harvey and Kennedy's algorithm)."""

from __future__ import annotations


class _VirtualExit:
    """The virtual exit node of a region: a named object that equals no block index."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "EXIT"


EXIT = _VirtualExit()


def post_dominators(nodes: set[int], succs: dict[int, list[int]]) -> PostDominators:
    """Immediate post-dominator of every node; ``EXIT`` is the virtual exit.

    ``succs`` maps each node to its successors; a successor outside ``nodes`` counts as EXIT.
    """
    preds: dict[int, list[int]] = {n: [] for n in nodes}
    preds[EXIT] = []
    rsuccs: dict[int, list[int]] = {}
    for n in nodes:
        out = [s if s in nodes else EXIT for s in succs.get(n, [])] or [EXIT]
        rsuccs[n] = list(dict.fromkeys(out))
        for s in rsuccs[n]:
            preds[s].append(n)
    # reverse post-order of the reversed graph, starting from EXIT
    order: list[int] = []
    seen = {EXIT}
    stack = [(EXIT, iter(preds[EXIT]))]
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            order.append(node)
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(preds[nxt])))
    order.reverse()
    rank = {n: i for i, n in enumerate(order)}
    ipdom = PostDominators({EXIT: EXIT})
    changed = True
    while changed:
        changed = False
        for n in order:
            if n is EXIT:
                continue
            new = None
            for s in rsuccs[n]:
                if s in ipdom:
                    new = s if new is None else _intersect(s, new, ipdom, rank)
            if new is not None and ipdom.get(n) != new:
                ipdom[n] = new
                changed = True
    for n in nodes:
        ipdom.setdefault(n, EXIT)  # nodes that never reach the exit (infinite loops)
    return ipdom


def _intersect(a: int, b: int, ipdom: dict[int, int], rank: dict[int, int]) -> int:
    while a != b:
        if a is EXIT or b is EXIT:
            return EXIT     # where the walk would end anyway, after climbing the whole other chain
        while rank.get(a, -1) > rank.get(b, -1):
            a = ipdom[a]
        while rank.get(b, -1) > rank.get(a, -1):
            b = ipdom[b]
    return a


class PostDominators(dict):
    """Immediate post-dominators (node -> parent in the tree rooted at EXIT), with the tree's
    depth-first entry and exit times, built once, for constant-time ancestor tests."""

    _times: tuple[dict[int, int], dict[int, int]] | None = None

    def times(self) -> tuple[dict[int, int], dict[int, int]]:
        if self._times is None:
            children: dict[int, list[int]] = {}
            for node, parent in self.items():
                if node is not EXIT:
                    children.setdefault(parent, []).append(node)
            enter: dict[int, int] = {}
            leave: dict[int, int] = {}
            clock = 0
            work = [(EXIT, False)]
            while work:
                node, done = work.pop()
                if done:
                    leave[node] = clock
                elif node not in enter:
                    enter[node] = clock
                    work.append((node, True))
                    work.extend((child, False) for child in children.get(node, ()))
                clock += 1
            self._times = (enter, leave)
        return self._times


def common_post_dominator(a: int, b: int, ipdom: dict[int, int]) -> int:
    """The nearest node that post-dominates both ``a`` and ``b`` (EXIT when none does).

    Both chains are climbed a step at a time, each step asking whether the node is above the
    other start: the cost is the shorter distance to the meeting point, not the depth of the
    tree (long code makes deep trees, and a handler that may re-raise meets it only at EXIT)."""
    if isinstance(ipdom, PostDominators):
        enter, leave = ipdom.times()
        if a in enter and b in enter:
            def above(u: int, w: int) -> bool:
                return enter[u] <= enter[w] and leave[w] <= leave[u]
            x, y = a, b
            while True:
                if above(x, b):
                    return x
                if above(y, a):
                    return y
                x, y = ipdom[x], ipdom[y]
    return _first_common(a, b, ipdom)


def _first_common(a: int, b: int, ipdom: dict[int, int]) -> int:
    """The first node of ``b``'s chain that is on ``a``'s chain."""
    ancestors = set()
    x = a
    for _ in range(len(ipdom) + 2):
        ancestors.add(x)
        if x is EXIT:
            break
        x = ipdom.get(x, EXIT)
    y = b
    for _ in range(len(ipdom) + 2):
        if y in ancestors:
            return y
        y = ipdom.get(y, EXIT)
    return EXIT
