"""Post-dominators of a region of the control-flow graph (Lengauer and Tarjan's algorithm)."""

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
    Nodes that never reach the exit (infinite loops) get EXIT too.

    Lengauer and Tarjan's algorithm on the reversed graph rooted at EXIT, with path compression:
    near-linear in the size of the graph. (The iterative algorithm climbs a chain of the tree at
    each join; code with n ``try`` statements, whose handlers re-raise to the exit, cost it n
    squared steps.)
    """
    preds: dict = {n: [] for n in nodes}
    preds[EXIT] = []
    rsuccs: dict = {}
    for n in nodes:
        out = [s if s in nodes else EXIT for s in succs.get(n, [])] or [EXIT]
        rsuccs[n] = list(dict.fromkeys(out))
        for s in rsuccs[n]:
            preds[s].append(n)
    # depth-first numbers in the reversed graph from EXIT; vertex[i] has number i
    number: dict = {EXIT: 0}
    vertex: list = [EXIT]
    parent: list[int] = [0]
    stack = [(EXIT, iter(preds[EXIT]))]
    while stack:
        node, successors = stack[-1]
        nxt = next(successors, None)
        if nxt is None:
            stack.pop()
        elif nxt not in number:
            number[nxt] = len(vertex)
            vertex.append(nxt)
            parent.append(number[node])
            stack.append((nxt, iter(preds[nxt])))
    count = len(vertex)
    semi = list(range(count))
    label = list(range(count))
    ancestor = [-1] * count     # the forest linked so far (-1: a root)
    idom = [0] * count
    bucket: list[list[int]] = [[] for _ in range(count)]

    def evaluate(v: int) -> int:
        """The vertex of least semi-dominator on v's forest path, compressing the path."""
        if ancestor[v] < 0:
            return v
        path = []
        x = v
        while ancestor[ancestor[x]] >= 0:
            path.append(x)
            x = ancestor[x]
        for x in reversed(path):
            a = ancestor[x]
            if semi[label[a]] < semi[label[x]]:
                label[x] = label[a]
            ancestor[x] = ancestor[a]
        return label[v]

    for w in range(count - 1, 0, -1):
        for v in rsuccs[vertex[w]]:
            k = number.get(v)
            if k is not None:       # (a successor that never reaches the exit is no way out)
                u = evaluate(k)
                if semi[u] < semi[w]:
                    semi[w] = semi[u]
        bucket[semi[w]].append(w)
        p = parent[w]
        ancestor[w] = p
        for v in bucket[p]:
            u = evaluate(v)
            idom[v] = u if semi[u] < semi[v] else p
        bucket[p] = []
    ipdom = PostDominators({EXIT: EXIT})
    for w in range(1, count):
        if idom[w] != semi[w]:
            idom[w] = idom[idom[w]]
        ipdom[vertex[w]] = vertex[idom[w]]
    for n in nodes:
        ipdom.setdefault(n, EXIT)  # nodes that never reach the exit (infinite loops)
    return ipdom


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
