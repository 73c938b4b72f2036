"""The README's API example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_api_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    examples = [block for block in blocks if block.startswith("import gymnasium as gym")]
    assert len(examples) == 1, "README needs one self-contained API example"
    exec(compile(examples[0], str(README), "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out
    assert "model_space/Body" in printed and "(21,)" in printed
