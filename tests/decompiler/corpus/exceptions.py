# ruff: noqa
"""try/except/else/finally in every combination; raise, raise from, re-raise; control flow in handlers."""

from ._cases import cases
from ._support import Recorder

KINDS = [(0,), (1,), (2,), (3,)]


def _risky(kind):
    if kind == 1:
        raise ValueError("v")
    if kind == 2:
        raise KeyError("k")
    if kind == 3:
        raise TypeError("t")
    return "ok"


@cases(*KINDS)
def try_except(kind):
    try:
        r = _risky(kind)
    except ValueError:
        r = "value"
    return r


@cases(*KINDS)
def try_except_multiple(kind):
    try:
        r = _risky(kind)
    except ValueError as e:
        r = "value:" + str(e)
    except (KeyError, IndexError) as e:
        r = "lookup:" + repr(e)
    except Exception:
        r = "other"
    return r


@cases(*KINDS)
def try_except_else(kind):
    log = []
    try:
        _risky(kind)
    except ValueError:
        log.append("except")
    except KeyError:
        log.append("except2")
    else:
        log.append("else")
    log.append("after")
    return log


@cases(*KINDS)
def try_finally(kind):
    log = []
    try:
        try:
            log.append(_risky(kind))
        finally:
            log.append("finally")
    except Exception as e:
        log.append(type(e).__name__)
    return log


@cases(*KINDS)
def try_except_else_finally(kind):
    log = []
    try:
        log.append(_risky(kind))
    except ValueError:
        log.append("value")
    except KeyError:
        log.append("key")
        return log
    else:
        log.append("else")
    finally:
        log.append("finally")
    return log


@cases(*KINDS)
def try_except_finally(kind):
    log = []
    try:
        log.append(_risky(kind))
    except (ValueError, KeyError):
        log.append("caught")
    finally:
        log.append("fin")
    return log


@cases((0,), (1,))
def return_in_try_with_finally(kind):
    log = []
    try:
        if kind:
            return "try"
    finally:
        log.append("finally")
    return log


@cases((0,), (1,))
def return_in_finally(kind):
    try:
        if kind:
            raise ValueError
        return "try"
    finally:
        return "finally"


@cases((4,),)
def break_in_try(n):
    out = []
    for i in range(n):
        try:
            if i == 2:
                break
            out.append(i)
        finally:
            out.append("f")
    return out


@cases((4,),)
def continue_in_try(n):
    out = []
    for i in range(n):
        try:
            if i % 2:
                continue
            out.append(i)
        finally:
            out.append("f%d" % i)
    return out


@cases((4,),)
def break_in_finally(n):
    out = []
    for i in range(n):
        try:
            if i == 1:
                raise ValueError
            out.append(i)
        finally:
            if i == 2:
                break
    return out


@cases((4,),)
def continue_in_except(n):
    out = []
    for i in range(n):
        try:
            if i % 2:
                raise ValueError(i)
        except ValueError:
            continue
        out.append(i)
    return out


@cases(*KINDS)
def reraise(kind):
    try:
        try:
            _risky(kind)
        except ValueError:
            raise
        except KeyError as e:
            raise RuntimeError("wrapped") from e
        except TypeError:
            raise RuntimeError("no cause") from None
    except RuntimeError as e:
        return "runtime", type(e.__cause__).__name__, e.__suppress_context__
    except ValueError:
        return "value"
    return "ok"


@cases((0,), (1,))
def raise_bare_class(kind):
    if kind:
        raise IndexError
    return 0


@cases((0,), (1,), (2,))
def nested_try(kind):
    log = []
    try:
        try:
            if kind == 1:
                raise ValueError
            if kind == 2:
                raise KeyError
        except ValueError:
            log.append("inner")
            raise TypeError
        finally:
            log.append("inner-finally")
    except TypeError:
        log.append("outer-type")
    except KeyError:
        log.append("outer-key")
    else:
        log.append("outer-else")
    return log


@cases((0,), (1,))
def exception_variable_cleared(kind):
    e = "before"
    try:
        if kind:
            raise ValueError("x")
    except ValueError as e:
        got = str(e)
    else:
        got = "none"
    try:
        return got, e
    except NameError:
        return got, "cleared"


@cases(*KINDS)
def try_in_loop_with_else(kind):
    results = []
    for k in (0, kind):
        try:
            results.append(_risky(k))
        except Exception as exc:
            results.append(type(exc).__name__)
        else:
            results.append("else")
    return results


@cases((0,), (1,))
def finally_overrides_exception(kind):
    def inner():
        try:
            if kind:
                raise ValueError
        finally:
            return "swallowed"
    return inner()


@cases(*KINDS)
def except_with_condition(kind):
    try:
        _risky(kind)
    except Exception as e:
        if isinstance(e, ValueError):
            return "v"
        elif isinstance(e, KeyError):
            return "k"
        raise
    return "none"


@cases((0,), (1,))
def try_return_value_in_except(kind):
    try:
        return 10 // kind
    except ZeroDivisionError:
        return -1


@cases((0,), (1,), (2,))
def while_try_except_break(limit):
    n = 0
    while True:
        try:
            if n >= limit:
                raise StopIteration
            n += 1
        except StopIteration:
            break
    return n


@cases((0,), (1,))
def raise_in_else(kind):
    try:
        try:
            pass
        except Exception:
            return "never"
        else:
            if kind:
                raise ValueError("else")
        return "ok"
    except ValueError as e:
        return str(e)


@cases((0,), (1,))
def exception_chaining_context(kind):
    try:
        try:
            raise KeyError("first")
        except KeyError:
            if kind:
                raise ValueError("second")
    except ValueError as e:
        return type(e.__context__).__name__
    return None


@cases((0,), (1,))
def try_finally_nested_return(kind):
    log = []

    def inner():
        try:
            try:
                if kind:
                    return "inner-return"
                log.append("body")
            finally:
                log.append("f1")
        finally:
            log.append("f2")
        return "end"

    return inner(), log


@cases((3,),)
def finally_in_loop_with_return(n):
    log = []

    def inner():
        for i in range(n):
            try:
                if i == 1:
                    return i
            finally:
                log.append(i)
        return -1

    return inner(), log


@cases((0,), (1,))
def except_star_free_group_handling(kind):
    try:
        if kind:
            raise ExceptionGroup("g", [ValueError(1)])
    except ExceptionGroup as g:
        return len(g.exceptions)
    return 0


@cases((1,), (2,))
def assert_statement(x):
    try:
        assert x == 1, "x must be one"
        assert x
        return "passed"
    except AssertionError as e:
        return "failed: %s" % e


@cases((0,), (2,), (5,))
def break_in_try_except(n):
    # graphlib._find_cycle: a break inside try with a handler that loops again.
    def make(k):
        def f():
            if k < 3:
                raise StopIteration
            return k
        return f

    fs = [make(k) for k in range(n)]
    popped = 0
    while fs:
        try:
            v = fs[-1]()
            break
        except StopIteration:
            fs.pop()
            popped += 1
    else:
        v = None
    return v, popped


@cases(([1, 0, 2],), ([],))
def try_except_pass_in_while(values):
    # traceback.clear_frames: a handler that only passes, inside a loop.
    i = 0
    out = []
    while i < len(values):
        try:
            out.append(10 // values[i])
        except ZeroDivisionError:
            pass
        i += 1
    return out


@cases((["a", "b", "zz"], [{"zz": 1}, {"b": 2}]), (["q"], []))
def for_break_else_continue_in_handler(keys, mro):
    # inspect._getmembers: for/break/else-continue inside an except handler inside a loop.
    found = []
    for key in keys:
        try:
            if len(key) < 2:
                raise AttributeError
            value = key.upper()
        except AttributeError:
            for base in mro:
                if key in base:
                    value = base[key]
                    break
            else:
                continue
        found.append((key, value))
    return found


# Minimal forms of stdlib functions the decompiler refused (stdlib swap "not swapped").

@cases((0, 0), (1, 0), (1, 1))
def nested_try_finally_with_if(has_stream, fail):
    # logging.FileHandler.close: try/finally three deep with an if between.
    log = []

    def close():
        log.append("acquire")
        try:
            try:
                if has_stream:
                    try:
                        if fail:
                            raise ValueError
                        log.append("flush")
                    finally:
                        stream = has_stream
                        if stream > 0:
                            log.append("close stream")
            finally:
                log.append("handler close")
        finally:
            log.append("release")

    try:
        close()
    except ValueError:
        log.append("caught")
    return log


@cases(([3, 1, 2],), ([None, "a"],), ([],))
def for_try_return_in_handler(values):
    # enum.Enum._generate_next_value_: a loop of try/return/except-pass inside an except handler.
    try:
        last = values[-1]
        values = sorted(values)
        if last == values[-1]:
            return last + 1
        raise TypeError
    except (TypeError, IndexError):
        for v in reversed(values):
            try:
                return v + 1
            except TypeError:
                pass
        return "start"


@cases((0, 0), (0, 1), (1, 1))
def finally_ending_in_if_at_function_end(fail, has_close):
    # logging/tarfile/shutil close(): the finally block ends with an if, and so does the function.
    log = []

    def close():
        try:
            if fail:
                raise ValueError
            log.append("flush")
        finally:
            stream = has_close
            if stream:
                log.append("close")

    try:
        close()
    except ValueError:
        log.append("caught")
    return log


@cases((["a", "-", "b"], 0), (["-"], 1), ([], 0))
def finally_ending_in_if_in_loop(files, deco):
    # quopri.main / shutil._rmtree_safe_fd: a loop whose body ends with try/finally whose finally
    # ends with an if.
    log = []
    for file in files:
        try:
            if deco:
                log.append("decode " + file)
            else:
                log.append("encode " + file)
        finally:
            if file != "-":
                log.append("close " + file)
    return log


@cases(([("skip", [1]), ("a", None), ("b", 5), ("c", [1])], 1), ([("b", 5), ("c", [])], 1), ([], 1))
def test_inside_try_after_a_test_that_continues(items, target):
    # pickle.whichmodule: the test inside the try body must stay there, or its exception escapes
    for key, value in items:
        if key == "skip" or value is None:
            continue
        try:
            if value[0] is target:
                return key
        except (TypeError, IndexError):
            pass
    return "none"


class _Holder:
    value = "old"


@cases((True,), (False,))
def finally_restores_a_name_it_may_not_have(fail):
    # configparser.ConfigParser._read_defaults: 3.12+ loads the name with LOAD_FAST_CHECK in the
    # handler's copy of the finally body (it may be unbound there) and LOAD_FAST in the inline one
    holder = _Holder()
    try:
        try:
            hold = holder.value
            holder.value = "new"
            if fail:
                raise KeyError("x")
        finally:
            holder.value = hold
    except KeyError:
        return "raised", holder.value
    return "done", holder.value


@cases((True, [1]), (True, ["bad"]), (False, [1]), (False, []))
def finally_with_try_inside_ends_the_function(same, fds):
    # shutil.rmtree: the finally body holds a try statement; its inline copy runs into the
    # function's return, which the compiler copied into each path
    log = []
    closed = False
    try:
        if same:
            try:
                log.append(10 // fds[0])
            except (TypeError, IndexError):
                closed = True
                log.append("close failed")
            closed = True
        else:
            try:
                raise OSError("link")
            except OSError as err:
                log.append(str(err))
    finally:
        if not closed:
            try:
                log.append(10 // len(fds))
            except ZeroDivisionError as err:
                log.append(type(err).__name__)
    log.append("end")
    return log


@cases(([3, 0, 2],), ([],), ([0],))
def finally_with_loop_and_try_inside(stack):
    # shutil.rmtree (3.13): the finally body is a loop around try/except, laid out differently
    # in its inline copy (except clause at the end of the function) and in the handler's
    log = []
    try:
        while stack and stack[-1]:
            log.append(stack.pop())
    finally:
        while stack:
            fd = stack.pop()
            try:
                log.append(10 // fd)
            except ZeroDivisionError:
                log.append("zero")
    return log


@cases(([["1", "x"], ["2", "3"]], {0: None, 1: None}), ([], {}), ([["a"]], {0: 1}))
def loops_after_a_loop_with_a_dead_handler(rows, types):
    # csv.Sniffer.has_header: the except clauses of the first loop's try (one of them around
    # ``pass``, so never entered) are laid out inside the second loop's range
    seen = []
    for row in rows:
        for col in list(types):
            try:
                pass
            except ValueError:
                seen.append("never")
            try:
                int(row[col])
            except (ValueError, IndexError):
                seen.append((col, "text"))
    votes = 0
    for col, kind in types.items():
        try:
            int(kind)
        except (TypeError, ValueError):
            votes += 1
    return seen, votes


@cases((1, 0, lambda: 1 / 0), (0, 0, lambda: 1 / 0), (1, 1, lambda: 1 / 0), (0, 1, lambda: None),
       (0, 0, lambda: int("x")))
def clause_returns_under_conditional_test(a, c, work):
    # 3.10 copies ``return 1`` into both paths of the conditional expression and the
    # try statement's ``return 2`` into the clause; a copy reached by a jump is still the clause's
    try:
        work()
    except ArithmeticError:
        if (a if c else a - 1):
            return 1
    except ValueError:
        if not (c if a else work):
            return 3
    return 2


@cases((1, 0, 0), (0, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1))
def clause_returns_through_nested_try(a, c, inner_fails):
    # 3.10: the return copies of the inner clause first leave it, then the outer clause; the
    # one reached by a jump is the inner clause's return, the others reach the outer continuation
    try:
        1 / 0
    except ArithmeticError:
        try:
            if inner_fails:
                raise ValueError
        except ValueError:
            if (a if c else a - 1):
                return 1
    return 2


@cases((1, 0), (0, 0), (1, 1), (0, 1))
def clause_returns_from_with(a, c):
    # 3.10 copies the with's exit and the clause's exit into each path of the conditional test
    log = []
    try:
        log.append(1 / 0)
    except ArithmeticError:
        with Recorder(log):
            if (a if c else a - 1):
                return 1, log
    return 2, log


@cases((1, 0), (0, 0), (1, 1), (0, 1))
def clause_returns_when_body_returns(a, c):
    # the try body never goes on: every returning block the clause reaches is its own
    try:
        return 1 / 0
    except ArithmeticError:
        if (a if c else a - 1):
            return 1
    return 2


# Except clauses whose type is computed: the type test is found along the handler's flow, past
# branches, calls and stores, so the handler is not read as a finally body.
@cases((True, 1), (False, 1), (True, 2), (False, 2), (True, 0))
def except_type_conditional(c, kind):
    try:
        r = _risky(kind)
    except (ValueError if c else KeyError) as e:
        r = "caught " + type(e).__name__
    except Exception:
        r = "other"
    return r


@cases(([ValueError], 1), ([KeyError, TypeError], 3), ([], 2), ([KeyError], 0))
def except_type_call(types, kind):
    try:
        return _risky(kind)
    except tuple(types) as e:
        return "caught " + type(e).__name__
    except (KeyError, ValueError):
        return "fallback"
    except Exception:
        return "other"


@cases((True, 1), (False, 3), (True, 2), (False, 0))
def except_types_computed_no_name(c, kind):
    log = []
    try:
        log.append(_risky(kind))
    except ValueError if c else TypeError:
        log.append("first")
    except tuple(t for t in (KeyError, TypeError) if c or t is KeyError):
        log.append("second")
    except (found := Exception):
        log.append(found.__name__)
    return log


@cases(({"v": ValueError}, 1), ({}, 1), ({"v": KeyError}, 2), ({"v": KeyError}, 3))
def except_type_lookup_in_loop(table, kind):
    out = []
    for i in range(2):
        try:
            _risky(kind if i else 0)
        except table.get("v", TypeError) if i else ArithmeticError:
            out.append(i)
            continue
        except BaseException as e:
            out.append(type(e).__name__)
            break
        out.append("ok")
    return out


# A try body whose paths end in constant returns besides going on after the statement: 3.10 puts
# each ``return <constant>`` after the body's POP_BLOCK, outside the handler's range, and its
# copies become jumps to one.
@cases((0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 1), (2, 0, 1), (0, 0, 1))
def try_body_constant_returns_besides_going_on(a, b, c):
    try:
        if c:
            if b:
                c = 1 // (a - 2) + 1
            elif a:
                return 2
            return 6
    except ZeroDivisionError:
        b = 5
    return a, b, c


@cases((0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 1), (2, 1, 1), (0, 0, 1))
def try_body_constant_returns_in_loop(a, b, c):
    for i in range(3):
        try:
            if c > i:
                if b:
                    b = 10 // (a - i)
                else:
                    return None
                return "done"
        except ZeroDivisionError:
            a += 1
            continue
        c += 1
    return a, b, c


# except clauses whose type is computed (a conditional expression, a call, a subscript), with
# ``as`` names, in loops that leave them by continue, break and return
KINDS_FLAGS = [(k, c) for k in (0, 1, 2, 3) for c in (True, False)]


@cases(*KINDS_FLAGS)
def except_conditional_type_as_name(kind, c):
    try:
        return _risky(kind)
    except (ValueError if c else KeyError) as e:
        return "caught", type(e).__name__
    except Exception:
        return "other"


@cases(*KINDS_FLAGS)
def except_tuple_call_as_name(kind, c):
    types = [ValueError, KeyError] if c else [TypeError]
    try:
        _risky(kind)
    except tuple(types) as e:
        return str(e)
    return None


@cases(*KINDS_FLAGS)
def except_computed_types_in_for_with_finally(kind, c):
    log = []
    for i in range(3):
        try:
            _risky((kind + i) % 4)
        except (ValueError if c else KeyError):
            log.append(i)
            continue
        except tuple([KeyError, TypeError]) as e:
            log.append(str(e))
            if c:
                return log
        finally:
            log.append(-i)
    return log


@cases(*KINDS_FLAGS)
def except_subscript_and_conditional_tuple_types(kind, c):
    table = {True: (ValueError, KeyError), False: TypeError}
    try:
        _risky(kind)
    except table[c] as e:
        return "t", type(e).__name__
    except ((ValueError, TypeError) if c else (KeyError,)):
        return "u"
    except Exception as e:
        return "v", type(e).__name__
    return "none"


@cases(*KINDS_FLAGS)
def while_true_except_computed_type_break_else_return(kind, c):
    n = 0
    while True:
        try:
            _risky(kind)
        except (ValueError if c else KeyError) as e:
            n += 3
            if n > 5:
                return str(e), n
        except (TypeError if not c else LookupError):
            break
        else:
            return "ok", n
        kind = (kind + 1) % 4
    return "broke", n


@cases(*KINDS_FLAGS)
def while_true_except_break_copies_return(kind, c):
    n = 0
    while True:
        try:
            _risky(kind)
        except ValueError:
            n += 1
        except KeyError:
            break
        else:
            return "ok", n
        kind = 2 if c else 0
    return "broke", n


@cases(([5, 3, 0, 1],), ([1, 2, 3, 0],))
def while_true_with_try_break_in_try_finally(xs):
    # 3.12+ lays the inner except clause out after the finally copy the ``break`` jumps to
    log = []
    try:
        i = 0
        while 1:
            try:
                i += 1
            except KeyError:
                i = 0
            if xs[i] == 0:
                break
            log.append(i)
    finally:
        log.append("done")
    return i, log


@cases(([4, 2, 1, 0, 3],), ([1, 0],))
def break_in_except_clause_of_inner_loop(xs):
    # 3.12+ thread the ``break`` through the end of the outer loop's body to its next round
    out = []
    for i in range(len(xs)):
        for j in range(i, 0, -1):
            try:
                t = xs[i] // xs[j]
            except ZeroDivisionError:
                break
            out.append(t)
    return out


def _run_step(step):
    if step == "key":
        raise KeyError(step)
    if step == "value":
        raise ValueError(step)
    return step


@cases((["ok", "key", "value"], True), (["ok", "value"], False), (["key"], False), ([], True))
def loop_over_try_whose_first_clause_reraises_in_one_branch(steps, lenient):
    log = []
    for step in steps:
        try:
            log.append(_run_step(step))
        except KeyError:
            if lenient:
                log.append("skipped")
            else:
                raise
        except Exception as exc:
            log.append(type(exc).__name__)
        log.append("next")
    return log


@cases((2,), (0,), ("x",))
def finally_body_returns(x):
    # the finally body ends in ``return``: its handler copy has no RERAISE, and the return
    # swallows whatever the try body raised
    log = []
    try:
        log.append(10 // x)
    finally:
        return log + ["finally"]


@cases(([0, 0, 3, 4],), ([0],), ([],), ([1, "x"],))
def for_try_whose_finally_returns_on_a_test(xs):
    # the inline copy of the finally body tests the other way round from the handler's, and its
    # return pops the loop's iterator, where the handler's pops the exception first
    log = []
    for x in xs:
        try:
            log.append(10 // (x + 1))
        finally:
            if x:
                return x, log
    return 0, log


@cases((2, []), (0, []), ("x", []), (None, [1, 2]))
def finally_returns_after_except_clauses(x, log):
    try:
        log.append(1 // x)
    except ZeroDivisionError:
        log.append("zero")
    finally:
        if log:
            return len(log), log
        else:
            return -1, log


@cases(({1: 2}, 1), ({}, 1), ({1: 2}, [1]))
def finally_body_ending_the_function_with_a_try_that_passes(table, key):
    # 3.10: the except clause's cleanup and the finally handler's cleanup both follow the
    # function's last instruction
    try:
        table.get(key)
    finally:
        try:
            del table[key]
        except:  # noqa: E722
            pass


@cases(({1: 2}, 1), ({}, 1))
def try_except_inside_try_finally_at_the_end_of_the_function(table, key):
    log = []
    try:
        try:
            log.append(table[key])
        except:  # noqa: E722
            log.append("missing")
    finally:
        log.append(len(table))
    return log


@cases(({1: 2}, 1), ({}, 1))
def finally_body_with_a_try_whose_clause_works_then_more_code(table, key):
    # the finally body's first instruction is inside its own try statement: the handler's
    # cleanup, not that try's, marks the end of the body (refused on 3.10, 3.12+ before)
    log = []
    try:
        log.append(table.get(key))
    finally:
        try:
            del table[key]
        except:  # noqa: E722
            log.append("missing")
    return log


@cases(({1: 2}, 1), ({}, 1), ({1: 2}, [1]))
def finally_body_with_try_except_else_then_more_code(table, key):
    log = []
    try:
        log.append(table.get(key))
    finally:
        try:
            del table[key]
        except KeyError as e:
            log.append(str(e))
        else:
            log.append("deleted")
    log.append("after")
    return log


@cases(({1: 2}, 1), ({}, 1))
def return_through_a_finally_body_holding_try_except_finally(table, key):
    log = []
    try:
        return table[key]
    finally:
        try:
            del table[key]
        except KeyError:
            log.append("missing")
        finally:
            log.append("fin")
        table["log"] = log


@cases(({1: 2}, 1), ({}, 1), ({1: 2}, [1]))
def finally_body_opening_with_nested_trys(table, key):
    log = []
    try:
        log.append(table.get(key))
    finally:
        try:
            try:
                del table[key]
            except KeyError:
                log.append("k")
        except:  # noqa: E722
            log.append("x")
        log.append("fin")
    return log


@cases((0, 1), (1, 1), (1, "x"))
def try_finally_if_return_at_the_end(a, c):
    # the finally body writes a variable the return value reads: the value is computed before
    # the finally body runs (refused before: read back as one conditional return)
    try:
        if a:
            return c + 1
    finally:
        c = 0


@cases((0, 0, 1), (1, 0, 1), (1, 1, 1), (1, 1, "x"))
def try_finally_elif_return_at_the_end(a, b, c):
    try:
        if not a:
            pass
        elif not b:
            pass
        else:
            return not c >= 1
    finally:
        c = c + 1


@cases((lambda: 1, [1, 2], 0), (lambda: 1 / 0, [1, 2], 0), (lambda: 1 / 0, [], 5), (lambda: [][0], [3, 0, 4], 2))
def loop_in_except_clause_ending_in_dead_code(f, xs, k):
    # 3.13 leaves the jump back of the loop out of the clause's protected range when the body's
    # last statement compiles to nothing (refused before: "for loop without an iterator")
    out = []
    try:
        return f()
    except ZeroDivisionError:
        for x in xs:
            if x >= k:
                out.append(x)
            if 0:
                out.append(-x)
    except IndexError:
        out.append(k)
    return out


@cases(([3, 2, "x", 1], True), ([4, None], True), ([5, 1], False), ([1, 0], True))
def break_from_except_clauses_of_a_loop_with_no_other_exit(items, guarded):
    # the loop ends only by the breaks in the clauses: the compiler copies the code after the
    # loop into them, and the try statement still goes on where its body does
    items = list(items)
    v = 0
    found = None
    while True:
        if guarded:
            try:
                v += 10 // items.pop()
            except TypeError as exc:
                found = type(exc).__name__
                break
            except (IndexError, ZeroDivisionError):
                break
        else:
            guarded = len(items) > 1
        v += 1
    return v * 2, found


@cases((1, 0, 0), (0, 1, 1), (0, 1, 0), (0, 0, 5))
def try_finally_around_a_test_of_a_false_constant(a, b, c):
    # ``if not 1:`` compiles to nothing but the jump over it, which 3.13+ leave out of the try's
    # range: the range comes in pieces, and the jump lands in a later one
    log = []
    try:
        if a:
            log.append("a")
        elif b:
            if c:
                if not 1:
                    log.append("never")
            else:
                return log, c
            log.append(c)
    finally:
        log.append("finally")
    return log


@cases((1, 1, 0), (1, 0, 1), (1, 0, 0), (0, 0, 0), ("raise", 0, 0))
def except_clause_with_a_test_of_a_false_constant_inside_try_finally(a, b, c):
    # as above in an except clause: the jump's piece and the one it lands in are apart, with
    # code between them that the finally's handler protects (the return's copy of the finally)
    log = []
    try:
        if a == "raise":
            raise KeyError(a)
        raise ValueError(a)
    except ValueError:
        if a:
            if b:
                if not 6:
                    log.append("never")
            elif c:
                return log, c
            log.append(a)
    except KeyError:
        log.append("key")
    finally:
        log.append("finally")
    return log


@cases((0, 3), (0, 0), (1, 0), ("", 2))
def while_try_whose_except_clause_runs_into_the_next_round_and_else_returns(flag, n):
    # the except clause runs off the end of the loop's body into the test's copy at the bottom,
    # and the else clause returns: read without the else clause, the clause would need a
    # ``continue``, which jumps to the test at the top instead
    while n:
        try:
            if flag:
                continue
        except ValueError:
            pass
        else:
            return n


@cases(([2], 1, 3), ([0], 1, 3), ([0], 0, 3), ([5], 0, 0), ([0], "", 1))
def once_while_whose_except_clause_breaks_before_the_body_returns(xs, b, c):
    # the body always returns or breaks, so the compiler lays the loop out as an ``if``; the
    # ``break`` in the except clause jumps to where that ``if`` ends
    while c:
        try:
            c = 10 // xs[0]
        except ZeroDivisionError:
            if b:
                break
        return "body", c
    return "after", c


@cases((0,), (1,), (2,), (3,), (4,), (5,))
def adjacent_except_clauses_with_equal_bodies(k):
    # the compiler shares the code of equal clause bodies, so the tests of the clauses read as
    # one ``KeyError or AssertionError``: each type is a clause of its own again
    errors = [None, KeyError, AssertionError, TypeError, ValueError, OSError]
    log = []
    try:
        try:
            if errors[k] is not None:
                raise errors[k]("x")
            log.append("body")
        except KeyError:
            raise
        except AssertionError:
            raise
        except TypeError as e:
            log.append(str(e))
            return log, 2
        except ValueError as e:
            log.append(str(e))
            return log, 2
    except Exception as outer:
        return log, type(outer).__name__
    return log, 0


@cases(([1, 2, 3], 0), ([1, 2, 3], 1), ([1, 2, 3], 2), ([], 0))
def adjacent_except_clauses_that_continue_a_loop(xs, k):
    errors = [KeyError, ValueError, None]
    log = []
    for i in xs:
        try:
            if errors[k] is not None and i == 2:
                raise errors[k](i)
            log.append(i)
        except KeyError:
            continue
        except ValueError:
            continue
        log.append(-i)
    return log


@cases((0, 0, 0, [1]), (1, 0, 0, [1]), (1, 1, 0, [1]), (1, 1, 1, [1, 2]), (2, 0, 1, []), (3, 1, 0, [5]))
def for_whose_body_never_loops_breaking_from_an_except_clause_under_finally(kind, a, b, xs):
    # the loop's body always ends in ``break``, so it has no jump back: the ``if`` in the except
    # clause has branches that meet only after the loop (the ``break``) and at the clause's exit,
    # outside the clause; a trial read as a conditional expression also left a normal exit of
    # the clause behind ("finally body copy not found on exit", then "except clauses continue at
    # different places")
    c = 0
    log = []
    for x in xs:
        try:
            log.append(_risky(kind))
        except Exception:
            if a:
                if b:
                    break
                log.append(x)
            else:
                a = 1
        finally:
            c = c + 1
        break
    return a, b, c, log


@cases((0, [1, 2]), (1, [1, 2]), (1, []), (2, [3]))
def first_item_taken_in_an_except_clause(kind, xs):
    # ``for x in xs: ...; break``: the body never loops, and its ``break`` pops the iterator and
    # falls straight into the clause's exit, with no jump (the break was lost: "'x' is read and
    # written in another order")
    got = None
    try:
        got = _risky(kind)
    except Exception:
        for x in xs:
            got = x * 2
            break
    return got


@cases((0, [1, 2]), (1, [1, 2]), (1, []), (0, []))
def first_item_taken_in_a_finally_body(kind, xs):
    # the handler's copy of the finally body: the ``break`` lands on a copy of the RERAISE that
    # follows the loop ("ReraiseStmt left in the syntax tree")
    log = []
    try:
        try:
            log.append(_risky(kind))
        finally:
            for x in xs:
                log.append(x)
                break
    except ValueError:
        log.append("v")
    return log


@cases((0, [1, 2]), (1, [1, 2]), (1, []), (3, [4]))
def first_item_or_else_in_an_except_clause(kind, xs):
    # with an else clause: the ``break`` falls into a copy of the code after the try statement
    got = 0
    try:
        got = _risky(kind)
    except Exception:
        for x in xs:
            got = x
            break
        else:
            got = 9
    return got


@cases((0, 0, [1, 2]), (0, 1, [1, 2]), (1, 0, [3]), (0, 0, []), (2, 0, [1]))
def loop_that_breaks_or_breaks_after_try_finally(kind, a, xs):
    # every way through the body breaks: the ``if``'s branches leave different stacks (one
    # popped the iterator), which nothing after them reads ("branches leave different stacks")
    log = []
    for x in xs:
        if a:
            break
        try:
            log.append(_risky(kind))
        except ValueError:
            log.append("v")
        finally:
            log.append(x)
        break
    return log


@cases((0, 0, 0, 0), (1, 0, 0, 0), (1, 1, 0, 1), (1, 0, 1, 0), (1, 1, 1, 0), (2, 0, 0, 1))
def except_clause_that_returns_or_goes_on_under_finally_inside_an_if(kind, b, c, x):
    # the except clause's way on runs the finally body and jumps back to the return laid out
    # before it: 3.12+ read that jump as a ``while True`` loop's and moved the clause's own
    # return out of it ("except clauses continue at different places")
    if kind:
        try:
            return _risky(kind)
        except ValueError:
            if x if b else c:
                return 0
        finally:
            c = c + 1
    return (kind, b, c, x)


@cases((0, [0, 1]), (1, [0, 1]), (0, [0]), (1, []), (0, []))
def for_else_breaking_in_a_finally_body(kind, xs):
    # the handler's copy of the finally body: the ``break`` lands on a copy of the RERAISE after
    # the else clause, not on a jump ("ReraiseStmt left in the syntax tree")
    log = []
    try:
        try:
            log.append(1 // kind)
        finally:
            for x in xs:
                if x:
                    break
            else:
                log.append("else")
    except ZeroDivisionError:
        log.append("z")
    return log


@cases((0, 3, 0), (1, 3, 1), (1, 0, 0), (0, 2, 5), (2, 1, 1))
def while_else_breaking_from_a_nested_if_in_a_finally_body(kind, n, stop):
    # the same copied RERAISE, reached from a ``while`` loop's break two tests deep
    log = []
    try:
        try:
            log.append(10 // kind)
        finally:
            while n > 0:
                n -= 1
                if n < 5:
                    if n == stop:
                        break
                log.append(n)
            else:
                log.append("done")
    except ZeroDivisionError:
        log.append("z")
    return log


@cases((0, [[0, 1], [2]]), (1, [[0, 1], [2]]), (0, [[3]]), (1, []), (0, [[], [0]]))
def nested_loops_with_else_breaking_in_a_finally_body(kind, rows):
    # the inner loop's break goes on in the outer loop; the outer loop's break lands on the copy
    log = []
    try:
        try:
            log.append(1 // kind)
        finally:
            for row in rows:
                for x in row:
                    if x > 1:
                        break
                    log.append(x)
                else:
                    if not row:
                        break
                    continue
                log.append("inner broke")
            else:
                log.append("all rows")
    except ZeroDivisionError:
        log.append("z")
    return log


@cases((1, 0, 0, 5), (0, 0, 0, 5), (0, 1, 1, 5), (0, 1, 0, 5), (2, 1, 0, 3))
def elif_of_a_false_constant_in_an_except_clause(k, b, c, y):
    # ``elif 0: pass`` leaves only its jump to the clause's next statement, which 3.13's exception
    # table leaves out of the clause's protected ranges: read as the table says, that branch
    # left the clause ("except clauses continue at different places")
    try:
        k = 1 // k
    except ZeroDivisionError:
        if b:
            if c:
                return 1
            elif not 4:
                pass
        else:
            b = y
        k += 1
    return (k, b, c)


@cases((1, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0), (0, 5, 0, 0), (0, 0, 1, 1))
def elif_of_a_true_constant_negated_before_an_except_clauses_exit(k, a, x, c):
    # ``elif -(not 6): pass`` leaves only a jump to the clause's way out (``POP_EXCEPT``, then the
    # return), laid out right after the clause's code: 3.13's exception table leaves it out, and
    # read as the table says, the clause left at two places ("except clauses continue at
    # different places")
    try:
        k = 1 // k
    except ZeroDivisionError:
        if not a:
            if not x:
                if c:
                    return 0
            elif -(not 6):
                pass
        else:
            return 2
        return -1
    return k


@cases(([1, 1, 0],), ([],), ([2],), ([0, 3],))
def computed_return_from_loops_in_a_try_with_finally(items):
    # the same with a computed value and a for loop: each return leaves through its own copy of
    # the finally body, which the loop's own exit never reaches
    log = []
    try:
        for item in items:
            if not item:
                return len(log)
            log.append(item)
        while items:
            if items.pop() > 1:
                return -len(items)
    finally:
        log.append("f")
    return log


@cases(([1, 1, 0],), ([],), ([1],), ([0, 2],))
def break_and_else_of_a_while_ending_a_try_with_finally(items):
    # a real ``break``: it goes where the loop's else clause goes on, out of the try statement
    log = []
    try:
        while items:
            if items.pop() == 0:
                break
        else:
            log.append("else")
    finally:
        log.append("f")
    return log


@cases(([1, 1, 0],), ([],), ([1],), ([0, 2],))
def break_and_returning_else_of_a_while_ending_a_try_with_finally(items):
    # the else clause returns; a ``break`` goes on after the try statement
    log = []
    try:
        while items:
            if items.pop() == 0:
                break
        else:
            return 2
    finally:
        log.append("f")
    log.append(len(items))
    return log


@cases(([1, 1, 0],), ([],), ([1],), ([0],))
def constant_return_from_a_while_in_a_try_with_except_and_empty_finally(items):
    # ``return 1`` leaves the try statement before it loads the constant (the finally body adds
    # nothing), so it lies outside the protected code like the code after the statement: read as
    # the loop's break target, the loop's own exit ran into it too (3.11: ``while ...: if not
    # items.pop(): break`` then ``return 1``, refused by the flow check)
    try:
        while items:
            if items.pop():
                pass
            else:
                return 1
    except IndexError:
        pass
    finally:
        pass


def _lookup(kind):
    if kind == 1:
        raise ValueError("v")
    return "ok"


@cases((0, {1: 2}), (1, {1: 2}), (0, {}), (1, {}))
def with_statement_ending_a_finally_body_with_a_bare_except_inside(kind, table):
    # 3.10 copies the with statement's exit into both ways out of the try statement inside it
    # (the body's and the except clause's); in the finally body's exceptional copy each copy ends
    # in the finally's re-raise: two copies of one place, not two places (refused before on 3.10:
    # "try body leaves at different places", as threading.Thread._bootstrap_inner)
    log = []
    try:
        log.append(_lookup(kind))
        return log
    finally:
        with Recorder(log):
            try:
                del table[1]
            except:
                log.append("missing")


@cases((3, True), (3, False), (0, True), (2, False))
def constant_return_from_a_while_in_a_try_with_a_finally_body(w, b):
    # ``return 1`` leaves the protected code, runs its own copy of the finally body, then loads
    # the constant: outside the region like the loop's exit, which runs another copy and goes
    # on to ``return log``. Read as the loop's break target (3.11), the exit returned 1 too
    log = []
    try:
        while w:
            w -= 1
            if b:
                log.append(w)
            else:
                return 1
    finally:
        log.append("f")
    return log


@cases(([1, 1, 0],), ([],), ([1],), ([0],))
def constant_return_from_a_while_in_a_try_with_except_and_finally_bodies(items):
    # the same through the except clauses' region and then the finally body's copy (refused on
    # every version before)
    log = []
    try:
        while items:
            if items.pop():
                log.append(len(items))
            else:
                return 1
    except IndexError:
        log.append("e")
    finally:
        log.append("f")
    return log


@cases((1, 0, 0), (0, 3, 1), (0, 3, 0), (0, 2, 5), (0, 0, 0), (0, 1, 2))
def while_in_an_except_clause_returning_a_constant_from_its_body(a, b, c):
    # ``return 0`` in the loop leaves the clause (POP_EXCEPT) before it loads the constant, laid
    # out like the code after the loop. It was read as the loop's break target: the loop's exit,
    # the ``if c`` that leaves the clause for the code after the try statement, was printed
    # falling into that ``return 0`` (wrong code, refused by the flow check on 3.11 and 3.13)
    n = 0
    try:
        n = 10 // a
    except ZeroDivisionError:
        while b:
            b -= 1
            if n < b <= c:
                return 0
        if c:
            return 1
    for j in range(2):
        n += j
    return (n, b)


@cases((1, 0, 0), (0, 3, 1), (0, 3, 0), (0, 2, 5), (0, 0, 0))
def while_else_in_an_except_clause_whose_break_meets_a_constant_return(a, b, c):
    # the loop's else clause runs into the ``return 0`` its break jumps to: that return is the
    # code after the loop, and the jump a ``break``
    n = 0
    try:
        n = 10 // a
    except ZeroDivisionError:
        while b:
            b -= 1
            if n < b <= c:
                break
        else:
            n = -b
        return 0
    return (n, b)


@cases(([1, 2], 0, 1), ([1, 2], 5, 1), ([3, -1, 2], 1, 0), ([], 0, 1), (["x", 1], 0, 1))
def break_out_of_a_try_in_a_while_with_an_else(xs, limit, step):
    # 3.10 and 3.12+ copy the code after the loop (a small return) into the break; the loop's test
    # runs into the else clause, which runs into the same code
    total, log = 0, []
    while xs:
        try:
            v = xs.pop()
            if not v < 2 + limit:
                break
            total += v // step
        except TypeError:
            log.append("type")
        finally:
            log.append(len(xs))
        total += 1
    else:
        log.append("exhausted")
    return total, log


@cases((1, 0, True), (0, 0, True), (0, 1, True), (1, 1, False), (0, 2, True))
def break_through_a_finally_in_a_while_whose_body_always_returns(a, d, c):
    # no jump back: the loop is laid out as an ``if``; the break out of the try/except runs the
    # finally body's copy, then goes where the test goes when false
    log = []
    while c:
        try:
            if a:
                break
            log.append(10 // d)
        except ZeroDivisionError:
            log.append("zero")
        finally:
            log.append("finally")
        return "body", log
    return "after", log


@cases((1, True, False), (0, True, False), (0, True, True), (2, False, True), (0, False, False))
def break_in_an_except_clause_past_the_else_of_a_while_whose_body_always_returns(a, c, leave):
    # laid out as an ``if`` whose branches never meet: the break lands where the else clause
    # runs into, not where the test goes when false
    log = []
    while c:
        try:
            log.append(10 // a)
        except ZeroDivisionError:
            log.append("zero")
            if leave:
                break
        return "body", log
    else:
        log.append("else")
    return "after", log


@cases((1, 0, 0), (0, 1, 0), (0, 0, 0), (1, 0, 1), (0, 2, 2))
def try_finally_where_an_elif_chain_whose_else_returns_meets(a, b, kind):
    # the branches that go on meet where the try statement starts, inside its protected code: that
    # is where the chain ends (read before as a copy of the try statement in each branch)
    if a:
        x = 1
    elif b:
        x = 2
    else:
        return 0
    log = []
    try:
        y = _risky(kind or x)
    except ValueError:
        y = "value"
    finally:
        log.append(x)
    return y, log


@cases((1, 0, 0), (0, 1, 0), (0, 0, 0), (1, 0, 1), (0, 2, 3))
def nested_try_where_an_elif_chain_whose_else_returns_meets_inside_try_finally(a, b, kind):
    log = []
    try:
        if a:
            x = 1
        elif b:
            x = 2
        else:
            return 0
        try:
            y = _risky(kind)
        except KeyError:
            y = 3
    finally:
        log.append(a)
    return y, log


@cases((1, 0, 1), (0, 1, 0), (0, 0, 1), (0, 0, 0), (0, 3, -2), (0, 2, 5))
def try_finally_after_an_if_chain_nested_in_an_else_and_a_conditional_operand(a, b, c):
    # (reduced from a generated program refused on 3.12/3.13: "computes other values")
    y = 2
    if a:
        pass
    elif b:
        pass
    else:
        if c:
            pass
        elif b:
            c = 1
        else:
            return 2
        try:
            y = -(y > 1) // (y or y if -y else y)
        finally:
            pass
    return y, c


@cases((0,), (1,), (-2,))
def return_of_a_negation_the_compiler_leaves_unfolded_inside_try(a):
    # 3.10 computes ``-(0 or 4)`` (the ``or`` folded away, the negation not) before it leaves the
    # try body, where a plain ``return -4`` leaves it first: both return the constant -4
    try:
        if not a:
            return -(0 or 4)
    except ZeroDivisionError:
        pass
    return a


@cases((0, 0, 0, 0), (1, 0, 0, 0), (0, 1, 5, 0), (0, 1, 5, 3), (0, 1, 0, 3), (0, 0, 9, 1))
def except_clause_whose_branches_jump_to_its_exit_over_a_removed_test(kind, x, y, b):
    # 3.13+ leave the jump that ends ``if not x:`` (over the ``else`` body, past a removed test of
    # a false constant) out of the handler's range: it is the clause's own way to its exit, the
    # ``POP_EXCEPT`` and return it jumps to (refused before: "stack underflow")
    a = 1
    try:
        _risky(kind)
    except ValueError:
        if not x:
            a |= y
            if -(8 < y <= 20):
                return 1 < b <= 8
            if -(not 9):
                pass
        else:
            pass
        return 4
    return a


@cases((0, [], 0), (0, [1, 2], 1), (1, [1, 2], 1), (2, [3], 1), (3, [3], 0), (1, [], 0))
def try_except_finally_whose_finally_runs_a_for_loop_then_a_call_under_an_if(kind, xs, c):
    # (from hypothesis's Shrinker.shrink) the handler's copy of the finally body ends the if's
    # branch with its own re-raise after the loop and the call: that copy is no ``break`` of the
    # loop, whose own exit leads there (3.11: refused before, "ReraiseStmt left in the syntax tree")
    out = []
    try:
        _risky(kind)
        out.append(1)
    except ValueError:
        out.append(2)
    finally:
        if c:
            for x in xs:
                out.append(x)
            out.append(3)
    out.append(4)
    return out


@cases((0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (3, 1))
def guard_that_reraises_before_the_return_ending_an_except_clause(kind, ignore):
    # (pathlib's Path.is_dir shape) ``if not c: raise`` then ``return`` in a clause that unbinds
    # its name: read as written, not as ``if c: return`` then ``raise``
    try:
        return _risky(kind)
    except (ValueError, KeyError) as e:
        if not (ignore or isinstance(e, KeyError)):
            raise
        return False
    except TypeError:
        return None


@cases((0, "a"), (1, "a"), (0, ""), (2, "b"))
def if_ending_a_try_body_whose_finally_body_the_exit_copies(kind, name):
    # (logging's Handler.set_name) the if's body runs into the try body's normal exit, where the
    # finally body's copy and the return are: read as ``if name: ...``, not ``if not name: return``
    log = []
    try:
        log.append(_risky(kind))
        if name:
            log.append(name)
    finally:
        log.append("released")
    return log


@cases((["a", "b", "c"], "b"), (["a", None, "c"], "c"), (["x"], "y"), ([], "a"))
def return_guarded_in_a_try_before_the_next_round(names, wanted):
    # (pickle's whichmodule) ``if c: return x`` ends a try body in a loop: the other way is the
    # loop's next round, read as ``if c: return x``, not ``if not c: continue`` then ``return x``
    for k, name in enumerate(names):
        if name is None:
            continue
        try:
            if name.upper().lower() == wanted:
                return k
        except AttributeError:
            pass
    return -1


@cases((0,), (1,), (2,), (3,))
def else_clause_returning_after_clauses_that_return(kind):
    # (glob's _isdir) the else clause's return is laid out before the except clauses
    try:
        r = _risky(kind)
    except (ValueError, KeyError):
        return "caught"
    else:
        return r + "!"


@cases(([0, 1, 2, 3],), ([],), ([1, 1],))
def else_clause_ending_a_round_of_a_for_loop(kinds):
    # (functools.update_wrapper) the except clause goes on to the next round, the else clause,
    # laid out before it, ends the round too: read with its else, not ``except: continue``
    out = []
    for kind in kinds:
        try:
            r = _risky(kind)
        except (ValueError, TypeError):
            pass
        else:
            out.append(r)
    return out


@cases((0,), (1,), (2,), (3,))
def handler_returning_a_function_it_makes(kind):
    # (astropy's UnitBase.get_converter) an except clause, or a loop in one, returns a lambda:
    # the value returned is a function not yet stored; refused before ("return value not found")
    def converter(kind):
        try:
            return _risky(kind)
        except ValueError:
            return lambda v: v * 2
        except KeyError as exc:
            for scale in (kind, 3):
                if scale:
                    return lambda v: (v, scale, exc.args)
        except TypeError:
            for k in (kind, 0):
                try:
                    inner = _risky(k)
                except TypeError:
                    pass
                else:
                    return lambda v: (inner, v)
            raise
    made = converter(kind)
    return made(5) if callable(made) else made


def _wait_after_interruptions(log, times):
    # raises InterruptedError the first ``times`` calls (the pager that ``c.wait()`` waits for)
    log.append("wait")
    if log.count("wait") <= times:
        raise InterruptedError


@cases((0, False), (2, False), (0, True), (3, True))
def finally_body_ending_in_a_loop_left_by_break(times, fail):
    # (click's _pipepager) the finally body ends in ``while True``, left only by the ``break`` of a
    # try's else clause: no code follows the loop, so the break lands on the end of the finally
    # body (the handler's RERAISE, laid out inside the loop on 3.10 and 3.12+); refused before
    # ("ReraiseStmt left in the syntax tree")
    log = []
    try:
        try:
            if fail:
                raise ValueError("body")
            log.append("body")
        finally:
            while True:
                try:
                    _wait_after_interruptions(log, times)
                except InterruptedError:
                    pass
                else:
                    break
    except ValueError as exc:
        log.append(str(exc))
    return log


@cases((0, [1]), (2, [1, 2]), (1, []), (4, [5, 6]))
def finally_bodies_ending_in_loops_left_by_break_or_continue(times, items):
    # the same end of a finally body reached from ``continue`` then ``break``, from a loop in a
    # loop, and after a return in the try body
    log = []

    def returning():
        try:
            return len(log)
        finally:
            while True:
                try:
                    _wait_after_interruptions(log, times)
                except InterruptedError:
                    continue
                break

    for item in items:
        try:
            log.append(item)
        finally:
            while True:
                if item:
                    try:
                        _wait_after_interruptions(log, times)
                    except InterruptedError:
                        continue
                    break
        if item > 4:
            break
    return returning(), log


class _Named:
    def __init__(self, name, parent):
        if name is not None:
            self.name = name
        self.parent = parent


@cases((_Named("a", "builtins"),), (_Named("b", "module"),), (_Named("c", None),), (_Named(None, "module"),),
       (_Named("zz", "module"),))
def equal_returns_of_different_statements_in_an_else_clause(value):
    # (jedi's execute.<locals>.wrapper) ``return call()`` ends an elif chain's last branch and the
    # function: the same instructions on different lines are two statements, not copies of one
    # the compiler made (refused before: "the branches end in different places", or, where the
    # chain became loops that ran once, wrong code the flow check refused)
    table = {"builtins": {"a": str.upper}, "module": {"b": str.title}}

    def call():
        return "called"

    try:
        name = value.name
    except AttributeError:
        pass
    else:
        parent = value.parent
        if parent is not None and parent == "builtins":
            module = "builtins"
        elif parent is not None and parent.isalpha():
            module = parent
        else:
            return call()
        try:
            func = table[module][name]
        except KeyError:
            pass
        else:
            return func(name)
    return call()


@cases((["x"], None, False), (["x"], "x", False), (["x"], "y", False), (["x"], "y", True))
def finally_with_except_clauses_that_reraise_on_a_flag(names, name, fail):
    # (nltk's StanfordTokenizer._execute) a finally body holding a try whose clauses pass or
    # re-raise: the re-raises the compiler writes take the lines of the code before them, so the
    # copies of one are copies whatever their lines
    done = False
    try:
        try:
            if fail:
                raise KeyError(name)
            done = True
        finally:
            if name:
                try:
                    names.remove(name)
                except ValueError:
                    pass
                except AttributeError:
                    if done:
                        raise
    except KeyError as exc:
        return "failed", exc.args, names
    return done, names


@cases((None, "a"), ("x", None), ("x", "v"))
def generator_restoring_state_in_finally(old, value):
    # (requests' set_environ) the implicit ``return None`` after each branch of the finally
    # body's if statement takes that branch's line: still copies of one return
    env = {} if old is None else {"k": old}
    log = []

    def restoring():
        changed = value is not None
        previous = None
        if changed:
            previous = env.get("k")
            env["k"] = value
        try:
            yield env.get("k")
        finally:
            if changed:
                if previous is None:
                    del env["k"]
                else:
                    env["k"] = previous

    for seen in restoring():
        log.append(seen)
    return log, env


@cases((0, True), (1, True), (1, False))
def handler_closing_what_it_opened_in_finally(kind, quiet):
    # (twisted's runReactorWithLogging) an except clause ends in try/finally: its way out, the
    # clause's exit and the implicit return, takes the line of the code before each copy
    log = []
    try:
        log.append(_risky(kind))
    except BaseException:
        close = False
        if quiet:
            sink = log
        else:
            sink = []
            close = True
        try:
            sink.append("traceback")
        finally:
            if close:
                log.append(("closed", sink))
