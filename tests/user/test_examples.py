"""Every script of the examples/ gallery runs (they are short by design) and prints what it promises."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


def test_the_gallery_is_there():
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # examples write into examples-out/ under the working directory
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip(), f"{path.name} printed nothing"


def test_readme_example_runs(tmp_path, monkeypatch, capsys):
    """The README's Python example, run as written (it writes run.npz, replay.html and run.png)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})  # our own file, not user input
    assert capsys.readouterr().out.strip()
    for name in ("run.npz", "replay.html", "run.png"):
        assert (tmp_path / name).is_file()
