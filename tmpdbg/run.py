import sys, dis, traceback
sys.setrecursionlimit(400)
import depyf
src = open(sys.argv[1]).read()
ns = {}; exec(src, ns)
if "-d" in sys.argv: dis.dis(ns["f"])
try:
    print(depyf.decompile(ns["f"]))
except Exception as e:
    tb = traceback.extract_tb(e.__cause__.__traceback__ if e.__cause__ else e.__traceback__)
    print(e); print("".join(traceback.format_list(tb[-40:-25])))
