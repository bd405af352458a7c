"""Offline demo: run one of the version scripts against a scripted model. No API key, no network.

    python -m scripted.demo v1              # v1_basic.py plays scripted/scenarios/v1_demo.yaml
    python -m scripted.demo v2 --workdir D  # work in folder D instead of a fresh temporary one

The script runs unchanged, as a subprocess: only ANTHROPIC_BASE_URL points at a scripted Messages
API server on 127.0.0.1, so what you see is exactly what the script prints against real Claude. """

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from scripted import ROOT, SCRIPTS
from scripted.server import ScriptedAPI, load_scenario

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def run_demo(version: str, workdir: Path) -> int:
    """Play the version's demo scenario in workdir; return the script's exit code (1 if the script
    broke the API's rules)."""
    scenario = load_scenario(SCENARIOS / f"{version}_demo.yaml")
    for name, content in scenario.get(
        "files", {}
    ).items():  # a starting project, if the scenario needs one
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(content, encoding="utf-8")
    api = ScriptedAPI()
    env = {
        **os.environ,
        **api.client_env("offline-demo"),
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    }
    api.play(scenario)
    print(
        f"[offline demo: a scripted model plays {version}_demo.yaml; this is not Claude]",
        flush=True,
    )
    try:
        code = subprocess.run(
            [
                sys.executable,
                str(ROOT / SCRIPTS[version]),
                "--workdir",
                str(workdir),
                scenario["task"],
            ],
            env=env,
        ).returncode
    finally:
        api.stop()
    for problem in api.violations + api.problems:
        print(f"[demo: {problem}]", file=sys.stderr)
    return code or (1 if api.violations or api.problems else 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", choices=SCRIPTS, help="which script to run")
    parser.add_argument(
        "--workdir", type=Path, help="folder to work in (default: a fresh temporary folder)"
    )
    args = parser.parse_args(argv)
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return run_demo(args.version, args.workdir.resolve())
    with tempfile.TemporaryDirectory(prefix=f"agent-demo-{args.version}-") as tmp:
        return run_demo(args.version, Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
