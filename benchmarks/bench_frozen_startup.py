"""Start-up time and size of the frozen build, against the same app run from the source tree.

    python packaging/build_frozen.py --archive
    python benchmarks/bench_frozen_startup.py dist/tokenizer-explorer-0.1.0 [--repeat 5]

Each command runs ``--repeat`` times, interleaved (frozen, source, frozen, ...), offscreen;
the best wall time is reported (the machines are shared: the best run is the least disturbed).
``--version`` measures interpreter + import start-up; ``--screenshot`` the whole first paint:
start, load cl100k_base, encode the welcome text, paint, grab, save, exit.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=300)
    return time.perf_counter() - started


def size_mib(folder: Path) -> float:
    files = [f for f in folder.rglob("*") if f.is_file() and not f.is_symlink()]
    return sum(f.stat().st_size for f in files) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    exe = str(args.bundle.resolve() / "tokenizer-explorer")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    frozen_env = {k: v for k, v in env.items() if not k.startswith("PYTHON")}
    source_env = {**env, "PYTHONPATH": str(ROOT)}
    out = Path(tempfile.mkdtemp()) / "shot.png"
    cases = {
        "--version": ([exe, "--version"], [sys.executable, "-m", "explorer", "--version"]),
        "--screenshot (main view)": ([exe, "--screenshot", str(out)],
                                     [sys.executable, "-m", "explorer", "--screenshot",
                                      str(out)]),
    }
    print(f"bundle {args.bundle}: {size_mib(args.bundle):.0f} MiB on disk")
    for archive in sorted(args.bundle.parent.glob(f"{args.bundle.name}-linux-*.tar.gz")):
        print(f"archive {archive.name}: {archive.stat().st_size / 2**20:.0f} MiB")
    print("| command | frozen s | source tree s | frozen / source |")
    print("|---|---|---|---|")
    for name, (frozen, source) in cases.items():
        f_times, s_times = [], []
        for _ in range(args.repeat):
            f_times.append(wall(frozen, frozen_env))
            s_times.append(wall(source, source_env))
        f, s = min(f_times), min(s_times)
        print(f"| {name} | {f:.2f} | {s:.2f} | {f / s:.2f}x |")


if __name__ == "__main__":
    main()
