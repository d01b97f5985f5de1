"""Saved artefacts (``irc.artifact``): ``Compiled.save`` and ``irc.load`` give
back the compilation; the artefact's own loader runs it with only NumPy,
torch and Triton, in this process and in a virtual environment without irc
or xDSL, checking the call and its guards itself."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import pickle
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from suite_programs import SIZES, SUITE

import irc
from irc import artifact, pytree
from irc.runtime import calls, standalone


def head(x):
    return x[:2] * 2.0  # guard 2 <= N


HEAD_SPEC = irc.TensorSpec(("N",), "float32")


def saved(program: str, directory: Path) -> tuple[irc.Compiled, Path]:
    compiled = SUITE[program].compile()
    return compiled, compiled.save(directory / program)


def suite_call(program: str, sizes: dict[str, int], seed: int = 0) -> Any:
    return SUITE[program].inputs(np.random.default_rng(seed), **sizes)


def leaves(result: Any) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in pytree.flatten(result)[0]]


def assert_same_results(got: Any, want: Any, **tolerance: float) -> None:
    assert pytree.flatten(got)[1] == pytree.flatten(want)[1]
    for g, w in zip(leaves(got), leaves(want), strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, **tolerance)


@pytest.mark.parametrize("program", ["gpt2_block", "embedding", "cross_entropy"])
def test_load_gives_the_compilation_back(program, tmp_path):
    compiled, path = saved(program, tmp_path)
    loaded = irc.load(path)
    assert loaded.levels == compiled.levels
    for level in compiled.levels:
        assert loaded.ir(level) == compiled.ir(level)
        assert loaded.ir(level, locations=True) == compiled.ir(level, locations=True)
    assert loaded.triton_source == compiled.triton_source
    assert loaded.num_kernels == compiled.num_kernels
    for sizes in SIZES[program][1:3]:
        call = suite_call(program, sizes)
        for backend in ("reference", "interpret"):
            assert_same_results(
                loaded(*call.args, backend=backend, **call.kwargs),
                compiled(*call.args, backend=backend, **call.kwargs),
                rtol=0,
            )


def test_the_artefact_is_its_files(tmp_path):
    compiled, path = saved("layer_norm", tmp_path)
    names = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}
    levels = {
        f"ir/{lv}{ext}" for lv in compiled.levels for ext in (".mlir", ".loc.mlir")
    }
    assert names == {"__init__.py", "kernels.py", "manifest.json", *levels}
    assert (path / "kernels.py").read_text() == compiled.triton_source
    assert (path / "ir" / "loop.mlir").read_text() == compiled.ir("loop")
    source = Path(standalone.__file__).read_text()
    assert (path / "__init__.py").read_text() == source


def test_the_manifest_describes_the_call(tmp_path):
    irc.compile(head, HEAD_SPEC, facts=["N <= 4096"]).save(tmp_path / "head")
    data = json.loads((tmp_path / "head" / "manifest.json").read_text())
    assert data["function"] == "head"
    assert data["symbols"] == ["N"]
    assert data["facts"] == "N >= 2, N <= 4096"  # declared, and the guard's
    assert [g["fact"] for g in data["guards"]] == ["N <= 4096", "2 <= N"]
    assert data["inputs"] == [{"name": "x", "shape": ["N"], "dtype": "float32"}]
    assert data["outputs"] == [{"shape": [2], "dtype": "float32"}]
    assert set(data["versions"]) >= {"irc", "xdsl", "triton", "torch"}


def test_a_loaded_artefact_saves_the_same_artefact(tmp_path):
    _, path = saved("rotary", tmp_path)
    again = irc.load(path).save(tmp_path / "again")
    files = sorted(p.relative_to(path) for p in path.rglob("*") if p.is_file())
    assert files == sorted(
        p.relative_to(again) for p in again.rglob("*") if p.is_file()
    )
    for name in files:
        assert (again / name).read_bytes() == (path / name).read_bytes(), name


def test_saving_again_replaces_the_artefact(tmp_path):
    irc.compile(head, HEAD_SPEC).save(tmp_path / "a")
    (tmp_path / "a" / "ir" / "stray.mlir").write_text("")
    saved("softmax", tmp_path)
    path = irc.compile(head, HEAD_SPEC).save(tmp_path / "a")
    assert not (path / "ir" / "stray.mlir").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_save_refuses_a_directory_that_is_no_artefact(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(irc.IrcError, match="not an irc artefact"):
        irc.compile(head, HEAD_SPEC).save(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_load_refuses_what_is_no_artefact(tmp_path):
    with pytest.raises(irc.IrcError, match="no manifest.json"):
        irc.load(tmp_path)
    path = irc.compile(head, HEAD_SPEC).save(tmp_path / "head")
    manifest = path / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"format": 2', '"format": 99'))
    with pytest.raises(irc.IrcError, match="format 99"):
        irc.load(path)


def test_save_refuses_a_static_value_it_cannot_record(tmp_path):
    class Scale:
        factor = 2.0

    def scaled(x, scale):
        return x * scale.factor

    compiled = irc.compile(scaled, HEAD_SPEC, Scale())
    with pytest.raises(irc.IrcError, match="static argument 'scale'"):
        compiled.save(tmp_path / "scaled")
    assert not (tmp_path / "scaled").exists()


statics = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.complex_numbers(),
    st.text(),
    st.builds(np.float32, st.floats(width=32)),
    st.lists(st.floats(), max_size=6).map(np.array),
    st.lists(st.floats(width=32), max_size=6).map(
        lambda values: np.array(values, np.float32)
    ),
    st.builds(np.array, st.lists(st.integers(-(2**40), 2**40), max_size=6)),
)


@given(statics)
def test_static_values_come_back_equal_and_of_their_type(value):
    """The law the standalone loader's check rests on."""
    back = standalone.decode_static(artefact_form(value))
    assert type(back) is type(value)
    assert standalone.same_static(back, value)
    assert calls.same_static(back, value)


def artefact_form(value: Any) -> dict[str, Any]:
    return json.loads(json.dumps(artifact.encode_static("v", value)))


def import_artefact(path: Path) -> Any:
    """The artefact's package, imported from its directory in this process."""
    spec = importlib.util.spec_from_file_location(
        f"artefact_{path.name}", path / "__init__.py"
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(package)
    return package


def test_the_standalone_loader_runs_and_refuses_like_irc(tmp_path):
    compiled, path = saved("gpt2_block", tmp_path)
    function = import_artefact(path).load(interpret=True)
    call = suite_call("gpt2_block", {"seq": 5})
    want = compiled(*call.args, backend="interpret", **call.kwargs)
    assert_same_results(function(*call.args, **call.kwargs), want, rtol=0)
    import torch

    got = function(*call.to_torch().args, **call.to_torch().kwargs)
    assert isinstance(got, torch.Tensor)
    with pytest.raises(TypeError, match="structure differs"):
        function(call.args[0])
    head_function = import_artefact(
        irc.compile(head, HEAD_SPEC).save(tmp_path / "head")
    ).load()
    np.testing.assert_array_equal(head_function(np.ones(3, np.float32)), [2, 2])
    with pytest.raises(ValueError, match="N"):  # the guard N >= 2
        head_function(np.ones(1, np.float32))


def test_a_changed_static_value_is_refused_without_irc(tmp_path):
    def scaled(x, factor):
        return x * factor

    path = irc.compile(scaled, HEAD_SPEC, 3.0).save(tmp_path / "scaled")
    function = import_artefact(path).load()
    np.testing.assert_array_equal(function(np.ones(2, np.float32), 3.0), [3, 3])
    with pytest.raises(ValueError, match="static argument 'factor' was 3.0"):
        function(np.ones(2, np.float32), 4.0)


#: A process that compiles Triton kernels: load the artefact for the GPU
#: under the fake CUDA driver (Triton's real launch path, compiling for an
#: H100, launching nothing) and call it; report the launches and results.
FAKE_GPU_SCRIPT = """
import json, sys
import numpy as np
from irc.testing.fake_driver import fake_cuda
sys.path.insert(0, sys.argv[1])
import softmax
with fake_cuda() as driver:
    function = softmax.load(interpret=False)
    result = function(np.ones((3, 5), np.float32))
    try:
        function(np.ones((3, 5), np.float64))
        refusal = None
    except ValueError as error:
        refusal = str(error)
print(json.dumps({
    "mode": function.interpret, "device": str(function.device),
    "launches": len(driver.launches), "shape": list(result.shape),
    "dtype": str(result.dtype), "refusal": refusal,
}))
"""


def test_the_standalone_loader_launches_through_triton_on_a_gpu(tmp_path):
    from fake_gpu_suite import run_compiling

    compiled, _ = saved("softmax", tmp_path)
    script = tmp_path / "fake_gpu.py"
    script.write_text(FAKE_GPU_SCRIPT)
    completed = run_compiling([str(script), str(tmp_path)], timeout=600)
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads(completed.stdout.splitlines()[-1])
    assert report["mode"] is False and report["device"] == "cpu"  # the fake's
    assert report["launches"] == compiled.num_kernels
    assert (report["shape"], report["dtype"]) == ([3, 5], "float32")
    assert "float64" in report["refusal"]


#: What the artefact's modules may import: the standard library and these.
RUNTIME_PACKAGES = {"numpy", "torch", "triton", "ml_dtypes"}


def test_the_artefact_imports_nothing_of_irc(tmp_path):
    _, path = saved("gpt2_block", tmp_path)
    for name in ("__init__.py", "kernels.py"):
        tree = ast.parse((path / name).read_text())
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and not node.level
        }
        outside = imported - RUNTIME_PACKAGES - set(sys.stdlib_module_names)
        assert outside == set(), name


# A virtual environment without irc ----------------------------------------

#: What the venv's process runs: load each artefact, call it on each saved
#: call, and write the results (or the refusal's type and message).
VENV_SCRIPT = """
import importlib.util, pickle, sys
assert importlib.util.find_spec("irc") is None, "irc is importable"
assert importlib.util.find_spec("xdsl") is None, "xdsl is importable"
sys.path.insert(0, sys.argv[1])
jobs = pickle.load(open(sys.argv[2], "rb"))
results = []
for package, args, kwargs in jobs:
    function = __import__(package).load()
    try:
        results.append(("ok", function(*args, **kwargs)))
    except Exception as error:
        results.append((type(error).__name__, str(error)))
pickle.dump(results, open(sys.argv[3], "wb"))
"""


def venv_without_irc(root: Path) -> Path | None:
    """A virtual environment (no pip) that sees this environment's packages
    except irc and xDSL: a ``.pth`` file names a directory of links to every
    other entry of the site-packages torch is installed in. Its Python, or
    None when this Python cannot make one."""
    import torch

    site = Path(torch.__file__).resolve().parents[1]
    linked = root / "packages"
    linked.mkdir(parents=True)
    for entry in site.iterdir():
        name = entry.name.lower()
        if name.startswith(("irc", "xdsl", "__editable__")) or name.endswith(".pth"):
            continue
        (linked / entry.name).symlink_to(entry)
    environment = root / "venv"
    try:
        venv.EnvBuilder(with_pip=False, symlinks=True).create(environment)
    except (OSError, subprocess.CalledProcessError):
        return None
    python = environment / "bin" / "python"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (environment / "lib" / version / "site-packages" / "packages.pth").write_text(
        f"{linked}\n"
    )
    return python


def test_a_saved_suite_program_runs_in_a_venv_without_irc(tmp_path):
    python = venv_without_irc(tmp_path / "env")
    if python is None:
        pytest.skip("this Python cannot make a virtual environment (python -m venv)")
    artefacts = tmp_path / "artefacts"
    jobs, expected = [], []
    for program in ("gpt2_block", "embedding"):
        compiled, _ = saved(program, artefacts)
        for sizes in SIZES[program][1:4:2]:
            call = suite_call(program, sizes)
            jobs.append((program, call.args, dict(call.kwargs)))
            expected.append(compiled(*call.args, backend="reference", **call.kwargs))
    irc.compile(head, HEAD_SPEC).save(artefacts / "head")
    jobs.append(("head", (np.ones(1, np.float32),), {}))
    (tmp_path / "jobs.pkl").write_bytes(pickle.dumps(jobs))
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    completed = subprocess.run(
        [str(python), "-c", VENV_SCRIPT, str(artefacts), "jobs.pkl", "out.pkl"],
        cwd=tmp_path,
        env={**env, "TRITON_INTERPRET": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    results = pickle.loads((tmp_path / "out.pkl").read_bytes())
    for (status, got), want in zip(results, expected):
        assert status == "ok", got
        assert_same_results(got, want, rtol=2e-5, atol=2e-6)
    status, message = results[-1]
    assert status == "LaunchError" and "N" in message, message
