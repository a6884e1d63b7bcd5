# ruff: noqa
"""Coroutines and async generators: await, async for, async with, async comprehensions."""

from ._cases import cases
from ._support import ARange, AsyncRecorder, Ready


@cases((1,), (5,))
async def coro_await(x):
    a = await Ready(x)
    b = await Ready(a + 1)
    return a + b


@cases((3,),)
async def coro_async_for(n):
    out = []
    async for i in ARange(n):
        if i == 1:
            continue
        out.append(i)
    else:
        out.append("else")
    return out


@cases((5,),)
async def coro_async_for_break(n):
    out = []
    async for i in ARange(n):
        if i == 2:
            break
        out.append(i)
    return out


@cases((0,), (1,))
async def coro_async_with(kind):
    log = []
    try:
        async with AsyncRecorder(log, "a") as a, AsyncRecorder(log, "b") as b:
            log.append(a + b)
            if kind:
                raise ValueError
    except ValueError:
        log.append("caught")
    return log


@cases((0,), (1,))
async def coro_async_with_swallow(kind):
    log = []
    async with AsyncRecorder(log, swallow=True):
        if kind:
            raise KeyError
        log.append("no error")
    return log


@cases((4,),)
async def coro_async_comprehension(n):
    a = [i async for i in ARange(n)]
    b = [await Ready(i) for i in range(n)]
    c = {i: i async for i in ARange(n) if i % 2}
    return a, b, c


@cases((3,),)
async def async_gen(n):
    for i in range(n):
        yield await Ready(i)


@cases((3,),)
async def async_gen_async_for(n):
    async for i in ARange(n):
        yield i * 10
    yield "done"


@cases((0,), (1,))
async def coro_try_await(kind):
    try:
        v = await Ready(kind)
        if v:
            raise ValueError(v)
        return "ok"
    except ValueError as e:
        return "err %s" % e
    finally:
        await Ready()


@cases((2,),)
async def coro_nested_coroutine(n):
    async def helper(k):
        return await Ready(k * 2)
    total = 0
    for i in range(n):
        total += await helper(i)
    return total


@cases((3,),)
async def async_gen_with_async_with(n):
    log = []
    async with AsyncRecorder(log):
        for i in range(n):
            yield i
    yield log


@cases((2,),)
async def coro_await_in_expression(n):
    return [await Ready(n), (await Ready(n)) + 1, -await Ready(n)]


@cases((3,),)
async def coro_async_genexpr(n):
    g = (i * 2 async for i in ARange(n))
    return [x async for x in g]


class _ARangeFailingAt(ARange):
    """Raises KeyError instead of yielding ``at``: the error comes out of the loop's own await."""

    def __init__(self, n, at):
        super().__init__(n)
        self.at = at

    async def __anext__(self):
        value = await super().__anext__()
        if value == self.at:
            raise KeyError(value)
        return value


@cases((3, -1, 0), (3, 1, 0), (3, 1, 1), (4, -1, 2))
async def coro_async_for_inside_async_with(n, fail_at, stop_at):
    # the loop's __anext__ await is protected by END_ASYNC_FOR, which lies inside the with body:
    # an error from it must still reach __aexit__ (contextlib's async generator decorators)
    log = []
    async with AsyncRecorder(log, "cm", swallow=fail_at == 1 and stop_at == 0):
        async for i in _ARangeFailingAt(n, fail_at):
            if stop_at and i == stop_at:
                break
            log.append(i)
        log.append("after loop")
    return log


@cases((3, -1), (3, 1))
async def async_gen_async_for_in_try(n, fail_at):
    try:
        async for i in _ARangeFailingAt(n, fail_at):
            yield i
    except KeyError as e:
        yield ("caught", e.args)
    finally:
        yield "finally"


@cases((0, None), (3, None), (3, 1), (4, 10))
async def async_gen_returning_early(n, initial):
    # (anyio's accumulate) an async generator's ``return`` takes no value, not even None: it was
    # printed as ``return None``, which does not compile there
    items = ARange(n)
    if initial is None:
        try:
            total = await items.__anext__()
        except StopAsyncIteration:
            await Ready()
            return
    else:
        total = initial
    yield total
    async for item in items:
        if item > 2:
            return
        total += item
        yield total
