# ruff: noqa
"""Class bodies: decorators, super(), metaclass keywords, properties, class-level names and comprehensions."""

import functools

from ._cases import cases


@cases((2,),)
def class_with_super(n):
    class Base:
        def __init__(self, v):
            self.v = v

        def describe(self):
            return "base%d" % self.v

    class Child(Base):
        def __init__(self, v):
            super().__init__(v * 10)

        def describe(self):
            return "child:" + super().describe()

    return Child(n).describe(), Child.__mro__[1].__name__


@cases((3,),)
def class_with_decorators(n):
    def register(cls):
        cls.registered = True
        return cls

    @register
    @functools.total_ordering
    class Item:
        def __init__(self, v):
            self.v = v

        def __eq__(self, other):
            return self.v == other.v

        def __lt__(self, other):
            return self.v < other.v

    return Item(n) >= Item(n - 1), Item.registered


@cases((1,),)
def class_with_metaclass_keyword(n):
    class Meta(type):
        def __new__(mcls, name, bases, ns, **kw):
            cls = super().__new__(mcls, name, bases, ns)
            cls.extra = kw
            return cls

    class A(object, metaclass=Meta, flag=n):
        pass

    class B(A, flag=n + 1):
        x = 1

    return A.extra, B.extra, type(B).__name__


@cases((4,),)
def class_init_subclass(n):
    class Base:
        seen = []

        def __init_subclass__(cls, /, tag=None, **kwargs):
            super().__init_subclass__(**kwargs)
            cls.tag = tag
            Base.seen.append(tag)

    class One(Base, tag="one"):
        pass

    class Two(Base, tag=n):
        pass

    return One.tag, Two.tag, Base.seen


@cases((5,),)
def class_properties_and_static(n):
    class Temp:
        unit = "C"

        def __init__(self, c):
            self._c = c

        @property
        def fahrenheit(self):
            return self._c * 9 / 5 + 32

        @fahrenheit.setter
        def fahrenheit(self, f):
            self._c = (f - 32) * 5 / 9

        @staticmethod
        def zero():
            return Temp(0)

        @classmethod
        def from_f(cls, f):
            t = cls(0)
            t.fahrenheit = f
            return t

    t = Temp(n)
    t2 = Temp.from_f(212)
    return t.fahrenheit, round(t2._c, 6), Temp.zero()._c, Temp.unit


@cases((2,),)
def class_body_statements(n):
    class Config:
        """Docstring of the class."""
        values = {}
        for i in range(n):
            values[i] = i * i
        if n > 1:
            mode = "many"
        else:
            mode = "one"
        try:
            missing = undefined_name_in_class_body
        except NameError:
            missing = None
        del i

    return Config.values, Config.mode, Config.missing, Config.__doc__, hasattr(Config, "i")


@cases((3,),)
def class_closure_over_function_locals(n):
    factor = n

    class Scaled:
        scale = factor

        def apply(self, x):
            return x * factor

    return Scaled().apply(2), Scaled.scale


@cases((1,),)
def class_dunder_class_and_zero_arg_super(n):
    class A:
        def who(self):
            return __class__.__name__

    class B(A):
        def who(self):
            return "B>" + super().who()

        def explicit(self):
            return super(B, self).who()

    return B().who(), B().explicit()


@cases((2,),)
def class_with_slots_and_qualname(n):
    class P:
        __slots__ = ("x",)

        def __init__(self, x):
            self.x = x

        class Inner:
            def name(self):
                return type(self).__qualname__

    return P(n).x, P.Inner().name().rsplit("<locals>.", 1)[-1]


@cases((2,),)
def class_dataclass(n):
    from dataclasses import dataclass, field

    @dataclass(order=True)
    class Pt:
        x: int
        y: int = 0
        tags: list = field(default_factory=list)

    return Pt(n) < Pt(n, 1), repr(Pt(1, 2)).split("(", 1)[1]


@cases((3,),)
def class_private_name_mangling(n):
    class Secret:
        def __init__(self):
            self.__hidden = n

        def reveal(self):
            return self.__hidden

    s = Secret()
    return s.reveal(), sorted(k for k in vars(s))


@cases((1,),)
def class_annotations_in_body(n):
    class Ann:
        a: int
        b: str = "x"
        c: "list[int]" = [n]

    return sorted(Ann.__annotations__), Ann.b, Ann.c


class _WithNew:
    def __new__(cls, *args):
        obj = super().__new__(cls)
        obj.made = args
        return obj


@cases((_WithNew,), (object,))
def class_body_ending_in_an_if_whose_methods_use_super(base):
    log = []

    class Wrapper(base):
        kind = "wrapped"
        __module__ = base.__module__
        if "__new__" in base.__dict__:
            def __new__(cls, *args):
                log.append("new")
                return super().__new__(cls, *args)
        else:
            def __init__(self, *args):
                log.append("init")
                super().__init__()

    w = Wrapper(1, 2)
    return Wrapper.kind, Wrapper.__module__, getattr(w, "made", None), log


class _PrivateHelpers:
    @cases((None, 3), (None, -2))
    def run(self, n):
        def __twice(v):
            return 2 * v

        class __Box:
            def __init__(self, v):
                self.__v = v

            def get(self):
                return self.__v

        if n > 0:
            return __twice(n), __Box(n).get()
        return [__twice(k) for k in range(-n)]


# A method read back on its own is written outside its class: the function and class it defines
# under ``__private`` names are then defined by the names it stores them under.
method_defining_a_private_function_and_class = _PrivateHelpers.run
