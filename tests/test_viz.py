"""``irc.viz``: the DOT text, the SVG and the HTML view of every suite
program, and the ways to get them (``render``, ``show``, ``_repr_html_``).

The DOT text is checked by Graphviz itself (``dot -Tjson`` parses it and
lists its clusters); the SVG must hold one cluster per kernel.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest
from suite_programs import SUITE

import irc
from irc import viz
from irc.ir import parse_module

needs_graphviz = pytest.mark.skipif(
    not viz.dot_available(), reason="Graphviz's dot is not installed"
)

SVG_NS = {"svg": "http://www.w3.org/2000/svg"}


@pytest.fixture(scope="module")
def compiled():
    return {name: program.compile() for name, program in SUITE.items()}


def graphviz_json(dot: str) -> dict:
    return json.loads(viz.run_graphviz(dot, "json"))


def kernel_names(c: irc.Compiled) -> list[str]:
    return re.findall(r"fusion\.kernel @(\w+)", c.ir("fusion"))


@needs_graphviz
@pytest.mark.parametrize("name", list(SUITE))
def test_dot_parses_with_one_cluster_per_kernel(compiled, name):
    c = compiled[name]
    layout = graphviz_json(viz.to_dot(c))
    clusters = [o["name"] for o in layout.get("objects", []) if "nodes" in o]
    assert sorted(clusters) == sorted(f"cluster_{k}" for k in kernel_names(c))


@needs_graphviz
@pytest.mark.parametrize("name", list(SUITE))
def test_svg_has_one_cluster_per_kernel_captioned_with_its_kind(compiled, name):
    c = compiled[name]
    svg = ET.fromstring(viz.to_svg(c))
    clusters = svg.findall(".//svg:g[@class='cluster']", SVG_NS)
    assert len(clusters) == len(kernel_names(c))
    captions = {
        "".join(t.itertext())
        for g in clusters
        for t in g.findall(".//svg:text", SVG_NS)
    }
    for symbol, kind in re.findall(r"fusion\.kernel @(\w+) (\w+)", c.ir("fusion")):
        assert f"{symbol} · {kind}" in captions


def test_edges_carry_symbolic_shapes_and_nodes_the_python_line(compiled):
    dot = viz.to_dot(compiled["cross_entropy"])
    assert 'label="logits\\n[N, V] f32", shape=ellipse' in dot
    assert '[label="[N, V] f32"]' in dot
    assert '[label="[N] f32"]' in dot  # from the row kernel into the mean
    # the op's place as file:line:col, the file as the capture recorded it
    assert re.search(
        r'label="graph\.reduce max\\n[^"]*\bsuite_programs\.py:\d+:\d+"', dot
    )


def test_kernels_are_wired_through_their_inputs_and_results(compiled):
    """An edge leaves the op whose value a kernel yields and enters the op
    of the next kernel that uses it: no edge starts at a kernel's block
    argument."""
    dot = viz.to_dot(compiled["mlp"])
    edges = re.findall(r"(n\d+) -> (n\d+)", dot)
    nodes = dict(re.findall(r'(n\d+) \[label="([^"]*)"', dot))
    assert all(a in nodes and b in nodes for a, b in edges)
    cluster_of = {}
    for cluster, body in re.findall(
        r'subgraph "cluster_(\w+)" \{(.*?)\n  \}', dot, re.S
    ):
        cluster_of.update({n: cluster for n in re.findall(r"(n\d+) \[", body)})
    assert any(
        cluster_of.get(a) != cluster_of.get(b) for a, b in edges if a in cluster_of
    )


HOSTILE = r"""
func.func @"f\" } digraph x { \"" (%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %y = graph.exp %x : !graph.tensor<[N], f32> loc("evil\" ]; n9 -> n9 [\\n.py":3:4)
  func.return %y : !graph.tensor<[N], f32>
}
"""


@needs_graphviz
def test_hostile_names_and_locations_cannot_break_the_dot_text():
    module = parse_module(HOSTILE)
    layout = graphviz_json(viz.to_dot(module))  # one graph: the names stayed names
    assert layout["name"] == 'f" } digraph x { "'
    labels = [o["label"] for o in layout["objects"]]
    assert len(labels) == 3  # x, the exp, the return
    assert any(label.startswith("graph.exp") for label in labels)
    assert len(layout.get("edges", [])) == 2


def test_render_writes_dot_text_and_refuses_an_unknown_format(compiled, tmp_path):
    c = compiled["softmax"]
    path = viz.render(c, tmp_path / "softmax.dot")
    assert path.read_text() == viz.to_dot(c)
    with pytest.raises(
        irc.IrcError, match=r"end the name with one of \.dot, \.gv, \.svg"
    ):
        viz.render(c, tmp_path / "softmax.jpeg")


@needs_graphviz
def test_render_svg_and_png(compiled, tmp_path):
    c = compiled["layer_norm"]
    ET.parse(viz.render(c, tmp_path / "g.svg"))
    assert viz.render(c, tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_without_graphviz_pictures_are_a_clear_error_and_html_has_the_dot(
    compiled, monkeypatch
):
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    c = compiled["softmax"]
    with pytest.raises(irc.IrcError, match="install Graphviz"):
        viz.to_svg(c)
    page = viz.to_html(c)
    assert "Install Graphviz to see the picture" in page
    assert "digraph &quot;softmax&quot;" in page


class _Balance(HTMLParser):
    """Checks that every element the view opens is closed, in order."""

    VOID = {"br", "meta", "img", "hr", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.parametrize("name", list(SUITE))
def test_html_view_shows_levels_kernels_and_python_lines(compiled, name):
    c = compiled[name]
    page = c._repr_html_()
    parser = _Balance()
    parser.feed(page)
    assert parser.stack == []
    text = "".join(parser.text)
    for level in c.levels:
        assert f"{level} IR" in text
        assert c.ir(level).splitlines()[1] in text  # the IR, unescaped back
    kernels = kernel_names(c)
    assert f"{len(kernels)} kernel(s)" in text
    for kernel in kernels:
        assert f"{kernel}" in text
    assert re.search(r"\w+\.py:\d+: \S", text)  # a kernel's Python line and code
    lines = viz.python_lines(next(k for k in _fusion_kernels(c)))
    assert lines and all(re.match(r"\w+\.py:\d+: \S", line) for line in lines)
    if viz.dot_available():
        assert "<svg" in page


def _fusion_kernels(c: irc.Compiled):
    from irc.dialects.fusion import KernelOp

    return [op for op in c.module_at("fusion").walk() if isinstance(op, KernelOp)]


def test_html_colours_each_kernels_lines_at_every_level(compiled):
    c = compiled["mlp"]
    page = viz.to_html(c)
    for colour in viz.PALETTE[:2]:
        for level in ("fusion", "loop", "memory", "triton"):
            kernel_line = re.search(
                rf"<div style='background:{colour}'>[^<]*{level}\.kernel @k\d", page
            )
            assert kernel_line, (level, colour)


def test_show_outside_jupyter_writes_a_page_and_says_where(
    compiled, monkeypatch, capsys
):
    """No browser unless asked (a headless machine has none): the page's
    path is printed and returned, so that the file is not lost."""
    opened = []
    monkeypatch.setattr(viz.webbrowser, "open", opened.append)
    monkeypatch.setattr(viz, "_ipython_display", lambda: None)
    path = compiled["softmax"].show()
    assert capsys.readouterr().out == f"irc: wrote the view of softmax to {path}\n"
    assert path.is_absolute() and path.suffix == ".html" and not opened
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "softmax: 1 kernel(s)" in page
    path.unlink()


def test_show_writes_to_a_path_and_opens_a_browser_when_asked(
    compiled, monkeypatch, tmp_path
):
    opened = []
    monkeypatch.setattr(viz.webbrowser, "open", opened.append)
    monkeypatch.setattr(viz, "_ipython_display", lambda: None)
    path = compiled["softmax"].show(tmp_path / "view.html", browser=True)
    assert path == tmp_path / "view.html" and opened == [path.as_uri()]
    assert "softmax: 1 kernel(s)" in path.read_text(encoding="utf-8")


def test_show_displays_inline_under_ipython(compiled, monkeypatch, tmp_path):
    shown = []
    monkeypatch.setattr(viz, "_ipython_display", lambda: shown.append)
    assert compiled["softmax"].show() is None
    assert shown == [viz.to_html(compiled["softmax"])]
    # given a path, the page is written there rather than shown
    assert compiled["softmax"].show(tmp_path / "v.html") == tmp_path / "v.html"
    assert len(shown) == 1


def test_module_at_is_a_copy_of_the_level(compiled):
    c = compiled["softmax"]
    module = c.module_at("loop")
    module.body.block.erase_op(module.body.block.first_op, safe_erase=False)
    assert "loop.kernel" in c.ir("loop")
    with pytest.raises(irc.IrcError, match="no IR at level 'x'"):
        c.module_at("x")
    np.testing.assert_equal(c.num_kernels, 1)
