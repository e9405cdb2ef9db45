"""The SDK's custom transport over a Claude CLI process that was started before the SDK was imported.

``ClaudeSDKClient(options, transport=...)`` takes any
:class:`claude_agent_sdk.Transport`; the SDK then runs its control protocol
(initialize, hooks, in-process MCP servers, permission prompts) over it as over
the process it would have started itself. :class:`AdoptedTransport` speaks to a
``subprocess.Popen`` started by :mod:`mnemara.claude.early` through asyncio pipes
on the loop that connects it, framing stdout into JSON messages as the SDK's
own subprocess transport does.

Its ``_process`` attribute answers what :mod:`mnemara.claude._private` reads of the
SDK's own transport (``returncode``, ``kill()``, and ``_transport`` for
:func:`~mnemara.claude.process.release_transport`), so the session's pool keeps,
rewinds and ends an adopted process like any other.
"""
from __future__ import annotations

import asyncio
import codecs
import json
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import Any

from claude_agent_sdk import CLIConnectionError, CLIJSONDecodeError, ProcessError, Transport

_MAX_BUFFER = 1024 * 1024  # the SDK's default limit for one message
_CHUNK = 65536


class _Pipes:
    """The process's asyncio pipe transports, closed together (what ``release_transport`` closes)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.transports: list[asyncio.BaseTransport] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close every pipe; a process still running is killed (as closing an asyncio subprocess does)."""
        self._closed = True
        for transport in self.transports:
            transport.close()
        if self.popen.poll() is None:
            try:
                self.popen.kill()
            except OSError:
                pass


class _ProcessView:
    """What :mod:`mnemara.claude.process` reads of a CLI process, over a ``Popen``."""

    def __init__(self, popen: subprocess.Popen[bytes], pipes: _Pipes) -> None:
        self.popen = popen
        self._transport = pipes

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()


class AdoptedTransport(Transport):
    """A running CLI process (stdin/stdout/stderr pipes) handed to the SDK."""

    def __init__(self, popen: subprocess.Popen[bytes], options: Any) -> None:
        self.popen = popen
        self._stderr_callback: Callable[[str], None] | None = options.stderr
        self._max_buffer = options.max_buffer_size or _MAX_BUFFER
        self._pipes = _Pipes(popen)
        self._process: _ProcessView | None = _ProcessView(popen, self._pipes)
        self._stdout: asyncio.StreamReader | None = None
        self._stdin: asyncio.StreamWriter | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._ready = False
        self._exit_error: Exception | None = None
        self._write_lock = asyncio.Lock()

    async def connect(self) -> None:
        if self._ready:
            return
        popen = self.popen
        if popen.poll() is not None or popen.stdin is None or popen.stdout is None:
            raise CLIConnectionError(f"the Claude CLI started early has ended (exit code {popen.poll()})")
        loop = asyncio.get_running_loop()
        self._pipes._loop = loop
        self._stdout = await self._reader(loop, popen.stdout)
        write_transport, write_protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, popen.stdin)
        self._pipes.transports.append(write_transport)
        self._stdin = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        if popen.stderr is not None:
            stderr = await self._reader(loop, popen.stderr)
            if self._stderr_callback is not None:
                self._stderr_task = loop.create_task(self._pump_stderr(stderr))
        self._ready = True

    async def _reader(self, loop: asyncio.AbstractEventLoop, pipe: Any) -> asyncio.StreamReader:
        reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
        self._pipes.transports.append(transport)
        return reader

    async def _pump_stderr(self, stderr: asyncio.StreamReader) -> None:
        async for line in _lines(stderr, self._max_buffer):
            line = line.rstrip()
            if line and self._stderr_callback is not None:
                try:
                    self._stderr_callback(line)
                except Exception:  # a failing sink must not stop the next lines
                    pass

    async def write(self, data: str) -> None:
        async with self._write_lock:
            if not self._ready or self._stdin is None:
                raise CLIConnectionError("ProcessTransport is not ready for writing")
            code = self.popen.poll()
            if code is not None:
                raise CLIConnectionError(f"Cannot write to terminated process (exit code: {code})")
            try:
                self._stdin.write(data.encode("utf-8"))
                await self._stdin.drain()
            except Exception as exc:
                self._ready = False
                self._exit_error = CLIConnectionError(f"Failed to write to process stdin: {exc}")
                raise self._exit_error from exc

    async def end_input(self) -> None:
        async with self._write_lock:
            if self._stdin is not None:
                self._stdin.close()
                self._stdin = None

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._read_messages()

    async def _read_messages(self) -> AsyncIterator[dict[str, Any]]:
        if self._stdout is None:
            raise CLIConnectionError("Not connected")
        async for line in _lines(self._stdout, self._max_buffer):
            data = _parse(line)
            if data is not None:
                yield data
        code = await self._wait(None)
        if code is not None and code != 0:
            self._exit_error = ProcessError(f"Command failed with exit code {code}", exit_code=code,
                                            stderr="Check stderr output for details")
            raise self._exit_error

    async def _wait(self, seconds: float | None) -> int | None:
        """The exit code once the process has ended (None when ``seconds`` pass first)."""
        loop = asyncio.get_running_loop()
        deadline = None if seconds is None else loop.time() + seconds
        while (code := self.popen.poll()) is None:
            if deadline is not None and loop.time() >= deadline:
                return None
            await asyncio.sleep(0.02)
        return code

    async def close(self) -> None:
        """Close stdin, give the CLI 5 s to exit, then SIGTERM, then SIGKILL (as the SDK's transport)."""
        if self._process is None:
            self._ready = False
            return
        try:
            if self._stderr_task is not None:
                self._stderr_task.cancel()
            self._ready = False
            if self._stdin is not None:
                self._stdin.close()
                self._stdin = None
            if await self._wait(5) is None:
                self.popen.terminate()
                if await self._wait(5) is None:
                    self.popen.kill()
                    await self._wait(5)
        finally:
            if self.popen.poll() is None:
                self.popen.kill()
            self._pipes.close()
            for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:
                        pass
            self._process = None

    def is_ready(self) -> bool:
        return self._ready


async def _lines(reader: asyncio.StreamReader, limit: int) -> AsyncIterator[str]:
    """The complete lines of ``reader`` (UTF-8), then its unterminated tail; a line over ``limit`` fails."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    while chunk := await reader.read(_CHUNK):
        pending += decoder.decode(chunk)
        *lines, pending = pending.split("\n")
        for line in lines:
            yield line
        if len(pending) > limit:
            raise CLIJSONDecodeError(pending[:200], ValueError(f"a message over {limit} bytes"))
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending


def _parse(line: str) -> dict[str, Any] | None:
    """One stdout line as a message; blank and non-JSON lines carry none (as in the SDK)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CLIJSONDecodeError(line, exc) from exc
    return data if isinstance(data, dict) else None
