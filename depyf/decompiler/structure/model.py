"""What the control-flow walk carries: the loop being read, the protected regions being left,
the places where the current statement ends; and the instruction sets several builders share."""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field

from depyf.decompiler.errors import DecompilationError

TryStar = getattr(ast, "TryStar", ast.Try)  # ``try``/``except*`` (where ``ast`` has it)

TRY_NODES = (ast.Try, TryStar)

ENDS_FUNCTION = frozenset({"RETURN_VALUE", "RAISE_VARARGS"})


class Sentinel:
    """A named marker that equals no position, block index or handler offset."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


# Layer.continuation of except clauses whose try statement never goes on
NO_CONTINUATION = Sentinel("NO_CONTINUATION")
# Layer.target of except clauses or a finally body that no cleanup handler protects
NO_HANDLER = Sentinel("NO_HANDLER")
# what reading a jump gives where it left the protected region by the region's normal exit
LEFT_REGION = Sentinel("LEFT_REGION")
# what a reader that may go on nowhere (None) gives where its construct is not there
UNREAD = Sentinel("UNREAD")


class BranchesEndApart(DecompilationError):
    """A test whose two outcomes go to different places where the statement being read ends: a
    jump from inside an ``if`` body to after the ``if`` (a ``break`` of a ``while`` whose body
    never reaches its end, which the compiler lays out as an ``if``). ``places``: the two.
    ``left_through``: where one of the outcomes leaves the protected region being read by its
    normal exit (the end of an except clause, a with body), which no statement in it can say,
    the block starts its code went through on the way; else None."""

    def __init__(self, message: str, places: tuple, left_through: frozenset | None = None,
                 **where) -> None:
        super().__init__(message, **where)
        self.places = places
        self.left_through = left_through


class ExitKind(enum.Enum):
    """What a jump means where it is read (``Structurer.classify``), or what the code reached on
    leaving a protected region does (``RegionExits.final_kind``)."""

    GOTO = "goto"            # plain flow: the code there is read next
    STOP = "stop"            # where the enclosing statement ends (one of ``Context.stops``)
    CONTINUE = "continue"    # the next round of the enclosing loop
    BREAK = "break"          # out of the enclosing loop
    LEAVE = "leave"          # out of the innermost protected region, through its exit sequence
    RETURN = "return"        # the function ends (``final_kind`` only)


class RegionKind(enum.Enum):
    """Which exit sequence leaving a protected region (``Layer``) goes through."""

    TRY = "try"              # a try body with except clauses: no exit sequence
    FINALLY = "finally"      # a try body with a finally clause: an inline copy of the finally body
    WITH = "with"            # a with body: the ``__exit__`` call
    HANDLER = "handler"      # except clauses or a finally body: POP_EXCEPT (and the name's deletion)


@dataclass
class Loop:
    header: int                      # position of FOR_ITER or of the loop test
    continues: frozenset[int]        # positions a jump to which is ``continue``
    breaks: frozenset[int]           # positions a jump to which is ``break``
    blocks: frozenset[int]           # block indices of the loop (for post-dominators)
    body_start: int | None = None    # first body position of a while loop with a folded test
    back: int | None = None          # the bottom test's jump back to body_start
    after: int | None = None         # where ``break`` goes (after the loop and its else clause)
    wraps_while: bool = False        # a ``while True`` whose body starts with a while loop at its header
    iterator: object | None = None   # a for loop's iterator on the stack (its body pops it to leave)
    depth: int = 0                   # the stack's depth with that iterator on top
    left_region: bool = False        # a ``break`` fell into the exit of the protected code the loop is in


@dataclass
class Layer:
    """A protected region being emitted: leaving it goes through ``kind``'s exit sequence."""

    kind: RegionKind
    target: int | Sentinel           # handler offset whose coverage defines the region (or NO_HANDLER)
    finally_ops: list | None = None  # for FINALLY: the (opname, argval) of the finally body
    normal_exits: list = field(default_factory=list)
    continuation: int | Sentinel | None = (
        None  # for except clauses (and try bodies): where the try statement goes on
    )


def exits_recorded(layers: tuple) -> list[int]:
    """How many normal exits each of ``layers`` has recorded: a mark to go back to with
    ``forget_exits`` when a trial read's statements are thrown away."""
    return [len(layer.normal_exits) for layer in layers]


def forget_exits(layers: tuple, mark: list[int]) -> None:
    """Drop the normal exits recorded since ``mark`` (a read that is not kept leaves none)."""
    for layer, n in zip(layers, mark, strict=True):
        del layer.normal_exits[n:]


class BranchWay(enum.Enum):
    """Where one branch of a conditional jump goes, as ``IfBuilder.resolve_exit`` reads it."""

    ON = "goto"              # on inside the current region: its code is read as part of the statement
    END = "end"              # to where the current region ends
    STMT = "stmt"            # out by a statement (break, continue, return)


@dataclass(frozen=True)
class BranchExit:
    """One branch of a conditional jump: which way it goes, the place where the region ends (END;
    None: the protected region's normal exit), or the statements that leave (STMT)."""

    way: BranchWay
    place: int | None = None
    stmts: list | None = None


@dataclass(frozen=True)
class WhileTest:
    """A while loop's test copied to the bottom of the loop (``copies_loop_tests``; ``find_while_tests``),
    or that a while loop with an else clause runs at its header alone."""

    test_end: int                    # the top copy's last conditional jump
    body_start: int                  # where the body starts (the bottom copy jumps back there)
    exit_pos: int | None             # where the test leaves the loop
    bottom: int                      # where the bottom copy starts
    back: int                        # the bottom copy's jump back to the body


@dataclass(frozen=True)
class PureCondition:
    """A block that only computes a condition and jumps (``ConditionReader.pure_condition``)."""

    cond: ast.expr
    true: int | None                 # where the jump goes when the condition is true
    false: int | None                # ... and when it is false
    block: int                       # the block's index
    consumed: set[int]               # the blocks read for its value-position and/or


@dataclass(frozen=True)
class Guard:
    """A case's guard (``MatchBuilder.match_guard``)."""

    cond: ast.expr
    go_on: int | None                # where the guard lets the case go on
    fail: int | None                 # where it fails to


@dataclass(frozen=True)
class Context:
    stops: frozenset[int] = frozenset()
    loop: Loop | None = None
    layers: tuple = ()

    @property
    def next_rounds(self) -> frozenset[int]:
        """Where the enclosing loop's ``continue`` jumps (nothing outside loops)."""
        return self.loop.continues if self.loop is not None else frozenset()

    def with_stops(self, *extra: int | None) -> Context:
        return Context(self.stops | {x for x in extra if x is not None}, self.loop, self.layers)
