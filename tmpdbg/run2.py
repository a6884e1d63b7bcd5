import sys, traceback
sys.setrecursionlimit(300)
import depyf.decompiler.structure as S
calls = []
for name in ("while_loop", "while_else_without_copy", "try_loop", "loop_else"):
    o = getattr(S.Structurer, name)
    def wrap(self, *a, _o=o, _n=name, **k):
        calls.append((_n, a[0]))
        if len(calls) > 60:
            print(calls[:40]); raise SystemExit
        return _o(self, *a, **k)
    setattr(S.Structurer, name, wrap)
import depyf
ns = {}; exec(open(sys.argv[1]).read(), ns)
print(depyf.decompile(ns["f"]))
