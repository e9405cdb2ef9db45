"""Record a real tool-heavy session: AgentSession -> real SDK -> real Claude CLI -> scripted Messages API.

Every turn the scripted model thinks, Reads a source file, Edits or rewrites
it (or runs a Bash command) and answers; the real CLI runs the real tools on
real files, and Mnemara persists the rows exactly as it does for a user. Same
arguments, same script (the row contents differ only in timestamps and ids).

Used by bench_context.py; run alone to keep the store:
    /work/venv/bin/python bench/record_session.py --turns 18 --out /tmp/recorded.sqlite
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemara.core.config import update_config  # noqa: E402
from mnemara.store.instance import Instance  # noqa: E402
from mnemara.testing.scripted_api import ScriptedAPI, reply, thinking, tool_use  # noqa: E402


def _module(rng: random.Random, name: str) -> str:
    lines = [f'"""{name}: generated for the benchmark."""', "from __future__ import annotations", ""]
    for i in range(rng.randint(15, 40)):
        lines += [f"def step_{i}(value: int) -> int:", f'    """Step {i}."""', f"    return value * {rng.randint(2, 97)} + {i}", ""]
    return "\n".join(lines)


def record(out: Path, turns: int = 18, seed: int = 11) -> Path:
    """Record ``turns`` turns into a fresh instance and copy its turns.sqlite to ``out``."""
    from mnemara.session.agent import AgentSession

    rng = random.Random(seed)
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp, ScriptedAPI() as api:
        home = Path(tmp)
        os.environ.update(HOME=str(home), MNEMARA_HOME=str(home / ".mnemara"), **api.env())
        try:
            work = home / "project"
            work.mkdir()
            files = {work / f"mod{i}.py": _module(rng, f"mod{i}") for i in range(4)}
            for path, body in files.items():
                path.write_text(body, encoding="utf-8")
            inst = Instance.create("recorded")
            update_config(inst.config_path, max_window_turns=10 * turns)  # keep every row live
            session = AgentSession(inst, permission_prompt=lambda request: "y", cwd=work)
            try:
                for n in range(turns):
                    path = rng.choice(sorted(files))
                    body = files[path]
                    think = thinking(" ".join(f"option {rng.randint(0, 99)} looks {rng.choice(['ok', 'risky', 'slow'])}" for _ in range(rng.randint(20, 60))))
                    script = [reply(think, f"Reading {path.name}.", tool_use("Read", {"file_path": str(path)}))]
                    if n % 3 == 0:
                        old = next(line for line in body.splitlines() if "return value" in line)
                        new = old.replace("return value", "return 2 * value")
                        files[path] = body.replace(old, new, 1)
                        script.append(reply(tool_use("Edit", {"file_path": str(path), "old_string": old, "new_string": new})))
                    elif n % 3 == 1:
                        script.append(reply(tool_use("Bash", {"command": f"wc -l {path} && grep -c def {path}"})))
                    else:
                        files[path] = _module(rng, path.stem)
                        script.append(reply(tool_use("Write", {"file_path": str(path), "content": files[path]})))
                    script.append(reply(f"Step {n} done on {path.name}."))
                    api.push(*script)
                    result = session.turn(f"step {n}: improve {path.name}")
                    if not result.ok:
                        raise RuntimeError(f"turn {n} failed: {[e.message for e in result.errors]}")
            finally:
                session.close()
            shutil.copy(inst.turns_path, out)
        finally:
            os.environ.clear()
            os.environ.update(saved)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=18)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    print(record(args.out, args.turns))
