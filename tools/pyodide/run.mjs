// Runs a Python command line inside pyodide (CPython compiled to WebAssembly) under node.
//
//   node tools/pyodide/run.mjs --pyodide DIR --mount DIR [--site DIR] [--cwd DIR] -- PYTHON-ARGS...
//
// PYTHON-ARGS are what you would pass to `python`: `-m module args...`, `-c code args...` or
// `script.py args...`. The host directory given by --mount is mounted at the same absolute path
// (NODEFS), so the checkout's files are read and written in place. --site is a directory of
// unpacked pure-Python wheels put on sys.path (pyodide cannot reach its CDN here). The Python
// exit status (SystemExit code, 1 for an uncaught exception) becomes node's exit status.
// signal.setitimer(ITIMER_REAL) is emulated by tracing (tools/pyodide/timers.py), since a JavaScript
// timer cannot interrupt running Python.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import process from "node:process";

function parseArgs(argv) {
  const opts = { site: [], cwd: process.cwd() };
  let i = 0;
  for (; i < argv.length && argv[i] !== "--"; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (key === "site") opts.site.push(argv[i + 1]);
    else opts[key] = argv[i + 1];
  }
  opts.pythonArgs = argv.slice(i + 1);
  if (!opts.pyodide || !opts.mount) {
    console.error("usage: run.mjs --pyodide DIR --mount DIR [--site DIR] [--cwd DIR] -- PYTHON-ARGS...");
    process.exit(2);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
// CommonJS require works for every pyodide release (0.22 ships no usable ES module for node).
const require = createRequire(import.meta.url);
const { loadPyodide } = require(path.resolve(opts.pyodide, "pyodide.js"));

const writeLine = (stream) => (line) => stream.write(line + "\n");
const pyodide = await loadPyodide({
  indexURL: path.resolve(opts.pyodide) + path.sep,
  stdout: writeLine(process.stdout),
  stderr: writeLine(process.stderr),
});

const mount = path.resolve(opts.mount);
pyodide.FS.mkdirTree(mount);
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: mount }, mount);

pyodide.globals.set("_depyf_config", JSON.stringify({
  argv: opts.pythonArgs,
  cwd: path.resolve(opts.cwd),
  site: opts.site.map((p) => path.resolve(p)),
  tools: path.dirname(fileURLToPath(import.meta.url)),
  env: process.env,
}));

const status = pyodide.runPython(`
def _depyf_main(config):
    import json, os, runpy, sys, traceback
    config = json.loads(config)
    os.environ.update(config["env"])
    os.chdir(config["cwd"])
    sys.path[:0] = config["site"]
    # SIGALRM cannot interrupt a busy pyodide: emulate ITIMER_REAL (see tools/pyodide/timers.py).
    sys.path.insert(0, config["tools"])
    import timers
    timers.install()
    del sys.path[0]
    args = config["argv"]
    try:
        if args and args[0] == "-m":
            sys.argv = [args[1], *args[2:]]
            sys.path.insert(0, config["cwd"])
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        elif args and args[0] == "-c":
            sys.argv = ["-c", *args[2:]]
            sys.path.insert(0, "")
            exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
        elif args:
            sys.argv = list(args)
            sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
        else:
            print("run.mjs: nothing to run (give -m MODULE, -c CODE or a script)", file=sys.stderr)
            return 2
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0

_depyf_main(_depyf_config)
`);
process.exitCode = Number(status);
