"""The VS Code path: debugpy's adapter, driven over its Debug Adapter Protocol socket.

The program runs under ``python -m debugpy --listen``; ``depyf.debug()`` sees the connected client
and pauses there; we then set a breakpoint in a dumped graph file, continue, and evaluate a
variable in the stopped frame, exactly as VS Code would.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("debugpy")

sys.path.insert(0, str(Path(__file__).parent))
from test_debugger import LINKED_PROGRAM
from test_debugger_support import child_env, line_after

pytestmark = pytest.mark.torch


class DapClient:
    """Minimal DAP client: requests with sequence numbers, events queued until asked for."""

    def __init__(self, port: int, timeout: float):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.buffer = b""
        self.seq = 0
        self.events: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []

    def _read_message(self) -> dict[str, Any]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in header.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))
        while len(rest) < length:
            self.buffer = header + b"\r\n\r\n" + rest
            self._fill()
            header, _, rest = self.buffer.partition(b"\r\n\r\n")
        self.buffer = rest[length:]
        message = json.loads(rest[:length])
        self.log.append(message)
        return message

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("debug adapter closed the connection; messages:\n" + self._history())
        self.buffer += chunk

    def _history(self) -> str:
        return "\n".join(json.dumps(m)[:300] for m in self.log[-30:])

    def send(self, command: str, **arguments: Any) -> int:
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def response(self, seq: int) -> dict[str, Any]:
        while True:
            message = self._read_message()
            if message.get("type") == "event":
                self.events.append(message)
            elif message.get("type") == "response" and message.get("request_seq") == seq:
                assert message.get("success"), message
                return message

    def request(self, command: str, **arguments: Any) -> dict[str, Any]:
        return self.response(self.send(command, **arguments))

    def event(self, name: str) -> dict[str, Any]:
        while True:
            for i, message in enumerate(self.events):
                if message.get("event") == name:
                    return self.events.pop(i)
            message = self._read_message()
            if message.get("type") == "event":
                self.events.append(message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_breakpoint_in_graph_file_through_debugpy(tmp_path: Path) -> None:
    (tmp_path / "program.py").write_text(LINKED_PROGRAM)
    port = _free_port()
    env = child_env()
    env.pop("DEPYF_DEBUG_PAUSE")  # the connected client is what makes debug() pause
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}",
                             "--wait-for-client", "program.py", "eager"], cwd=tmp_path, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        client = DapClient(port, timeout=120)
        client.sock.settimeout(300)
        client.request("initialize", adapterID="python", clientID="depyf-test", linesStartAt1=True,
                       columnsStartAt1=True, pathFormat="path")
        attach = client.send("attach", justMyCode=False)
        client.event("initialized")
        client.request("configurationDone")
        client.response(attach)

        stopped = client.event("stopped")  # the pause in depyf.debug()
        thread = stopped["body"]["threadId"]
        graph = tmp_path / "dump" / "__compiled_fn_0.captured_graph.0.py"
        line = line_after(graph, "l_b_ = L_b_")
        reply = client.request("setBreakpoints", source={"path": str(graph)}, breakpoints=[{"line": line}])
        assert reply["body"]["breakpoints"][0]["verified"], reply

        client.request("continue", threadId=thread)
        stopped = client.event("stopped")
        assert stopped["body"]["reason"] == "breakpoint", stopped
        frames = client.request("stackTrace", threadId=stopped["body"]["threadId"])["body"]["stackFrames"]
        top = frames[0]
        assert Path(top["source"]["path"]) == graph and top["line"] == line, top
        value = client.request("evaluate", expression="l_a_.shape", frameId=top["id"], context="repl")
        assert value["body"]["result"] == "torch.Size([10])", value

        client.request("setBreakpoints", source={"path": str(graph)}, breakpoints=[])
        client.request("continue", threadId=stopped["body"]["threadId"])
        client.event("terminated")  # the program ran to its end
        client.send("disconnect")
        client.sock.close()
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out
        assert b"SAME_AS_BEFORE True" in out, out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
