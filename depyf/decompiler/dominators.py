"""Post-dominators of a region of the control-flow graph (Cooper, Harvey and Kennedy's algorithm)."""

from __future__ import annotations

EXIT = -1


def post_dominators(nodes: set[int], succs: dict[int, list[int]]) -> dict[int, int]:
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
    ipdom: dict[int, int] = {EXIT: EXIT}
    changed = True
    while changed:
        changed = False
        for n in order:
            if n == EXIT:
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
        while rank.get(a, -1) > rank.get(b, -1):
            a = ipdom[a]
        while rank.get(b, -1) > rank.get(a, -1):
            b = ipdom[b]
    return a


def common_post_dominator(a: int, b: int, ipdom: dict[int, int]) -> int:
    ancestors = set()
    x = a
    for _ in range(len(ipdom) + 2):
        ancestors.add(x)
        if x == EXIT:
            break
        x = ipdom.get(x, EXIT)
    y = b
    for _ in range(len(ipdom) + 2):
        if y in ancestors:
            return y
        y = ipdom.get(y, EXIT)
    return EXIT
