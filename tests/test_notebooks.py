"""Every notebook in notebooks/ is stored without outputs and executes (nbclient).

The kernel is the interpreter running pytest: a throw-away kernel spec
pointing at ``sys.executable`` is put first on ``JUPYTER_PATH``, so no
globally installed ``python3`` kernel (another Python, another venv) can be
picked up by mistake. Needs ``ipykernel`` in that interpreter.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
KERNEL = "ddlsched-test-python"


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("jupyter")
    spec_dir = root / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ddlsched test kernel",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    mp = pytest.MonkeyPatch()
    mp.setenv("JUPYTER_PATH", str(root))
    mp.setenv("MPLBACKEND", "Agg")
    yield KERNEL
    mp.undo()


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def test_there_are_notebooks():
    assert notebooks(), "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.get("outputs"), f"{path.name}: a cell has stored outputs"
            assert cell.get("execution_count") is None, f"{path.name}: execution count stored"


#: Replayed in the CI tier: the plug-in walk-through; the family notebooks in the full tier.
CI_NOTEBOOKS = {"your-heuristic.ipynb"}


@pytest.mark.parametrize(
    "path",
    [p if p.name in CI_NOTEBOOKS else pytest.param(p, marks=pytest.mark.slow) for p in notebooks()],
    ids=lambda p: p.name,
)
def test_notebook_executes(path, kernel_name):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name=kernel_name,
        timeout=600,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors
