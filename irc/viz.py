"""Pictures of a compilation: the program as a dataflow graph whose fusion
groups are clusters, as Graphviz DOT, SVG, or a rich HTML view.

Every op of the function is a node (its name, its kind, the Python line that
made it); every value that flows between ops is an edge labelled with its
symbolic shape and element type; each kernel ``fuse`` formed is a cluster
captioned with its name and kind, its reason as the tooltip. The picture is
drawn from the fusion level, where kernels still hold the graph ops they
fuse; a module of any other level draws as it is (kernels of the lower
levels are single nodes).

DOT is produced here; turning it into SVG (or PNG, PDF) is Graphviz's ``dot``
program, the layout engine made for this, run as a subprocess: install
Graphviz (``apt install graphviz``, ``brew install graphviz``, ``conda install
graphviz``) for pictures; DOT text needs nothing.
"""

from __future__ import annotations

import html
import linecache
import re
import shutil
import subprocess
import tempfile
import webbrowser
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue

from irc.compilation import Compilation
from irc.dialects.fusion import KernelOp, YieldOp
from irc.dialects.graph import TensorType
from irc.errors import IrcError
from irc.source_locations import source_location


class HasCompilation(Protocol):
    """What holds a compilation, lowered when asked (``irc.Compiled``)."""

    @property
    def compilation(self) -> Compilation: ...


#: A compilation (drawn from its fusion level), what holds one, or a module
#: at any level.
Drawable = Compilation | HasCompilation | ModuleOp

#: Fill colours of the kernels' clusters, in turn (also the HTML view's).
PALETTE = (
    "#dbeafe",
    "#dcfce7",
    "#fef3c7",
    "#fce7f3",
    "#ede9fe",
    "#cffafe",
    "#fee2e2",
    "#e0e7ff",
    "#ecfccb",
    "#f3e8ff",
)

#: The formats ``render`` writes through Graphviz, by file suffix.
GRAPHVIZ_FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}

_DOT_TIMEOUT_S = 60


# ----- DOT -------------------------------------------------------------------


def to_dot(source: Drawable) -> str:
    """The DOT text of a compiled function (drawn from its fusion level) or
    of a module at any level: one ``digraph`` per function."""
    module = _module_to_draw(source)
    functions = [op for op in module.walk() if isinstance(op, FuncOp)]
    return "\n".join(_FunctionDrawing(f).dot() for f in functions)


def _module_to_draw(source: Drawable) -> ModuleOp:
    if isinstance(source, ModuleOp):
        return source
    return _compilation(source).module("fusion")


def _compilation(source: Compilation | HasCompilation) -> Compilation:
    return source if isinstance(source, Compilation) else source.compilation


@dataclass
class _FunctionDrawing:
    """One function as a digraph: ``node`` and ``edge`` lines, kernels as
    ``subgraph cluster_<name>`` blocks."""

    function: FuncOp
    _names: dict[Operation | SSAValue, str] = field(default_factory=dict)

    def dot(self) -> str:
        lines = [
            f"digraph {_quote(self.function.sym_name.data)} {{",
            '  graph [rankdir=TB, fontname="Helvetica", fontsize=11];',
            '  node [shape=box, style="rounded,filled", fillcolor=white, '
            'fontname="Helvetica", fontsize=10];',
            '  edge [fontname="Helvetica", fontsize=9, color="#555555"];',
        ]
        for argument in self.function.body.block.args:
            name = self._name(argument)
            label = f"{_value_name(argument)}\n{type_label(argument.type)}"
            lines.append(
                f'  {name} [label={_quote(label)}, shape=ellipse, fillcolor="#f3f4f6"];'
            )
        kernels = 0
        for op in self.function.body.block.ops:
            if isinstance(op, KernelOp):
                lines += self._cluster(op, PALETTE[kernels % len(PALETTE)])
                kernels += 1
            else:
                lines.append(self._node(op, indent="  "))
        lines += self._edges()
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _cluster(self, kernel: KernelOp, colour: str) -> list[str]:
        name = kernel.sym_name.data
        caption = f"{name} · {kernel.kind.data}"
        lines = [
            f"  subgraph {_quote('cluster_' + name)} {{",
            f"    label={_quote(caption)}; tooltip={_quote(kernel.reason.data)};",
            f'    style="rounded,filled"; fillcolor="{colour}"; color="#9ca3af";',
        ]
        lines += [
            self._node(op, indent="    ")
            for op in kernel.body.block.ops
            if not isinstance(op, YieldOp)
        ]
        lines.append("  }")
        return lines

    def _node(self, op: Operation, indent: str) -> str:
        label = op_label(op)
        tooltip = source_location(op) or op.name
        return (
            f"{indent}{self._name(op)} [label={_quote(label)}, "
            f"tooltip={_quote(tooltip)}];"
        )

    def _edges(self) -> Iterator[str]:
        for op in self._drawn_ops():
            for operand in op.operands:
                source = self._producer(operand)
                if source is None:
                    continue
                label = type_label(operand.type)
                yield f"  {source} -> {self._name(op)} [label={_quote(label)}];"

    def _drawn_ops(self) -> Iterator[Operation]:
        for op in self.function.body.block.ops:
            if isinstance(op, KernelOp):
                yield from (o for o in op.body.block.ops if not isinstance(o, YieldOp))
            else:
                yield op

    def _producer(self, value: SSAValue) -> str | None:
        """The node drawing where ``value`` comes from: a kernel's block
        argument comes from the kernel's operand, a kernel's result from
        what its yield returns."""
        if isinstance(value, BlockArgument):
            owner = value.block.parent_op()
            if isinstance(owner, KernelOp):
                return self._producer(owner.inputs[value.index])
            return self._name(value) if owner is self.function else None
        if isinstance(value, OpResult):
            op = value.op
            if isinstance(op, KernelOp):
                terminator = op.body.block.last_op
                assert isinstance(terminator, YieldOp)
                return self._producer(terminator.operands[value.index])
            return self._name(op)
        return None

    def _name(self, key: Operation | SSAValue) -> str:
        if key not in self._names:
            self._names[key] = f"n{len(self._names)}"
        return self._names[key]


def op_label(op: Operation) -> str:
    """``graph.reduce max`` and, below, the Python line that made it."""
    label = op.name
    kind = op.properties.get("kind")
    if kind is not None:
        label += f" {_attribute_text(kind)}"
    where = source_location(op)
    return f"{label}\n{where}" if where else label


def type_label(type_: Attribute) -> str:
    """``[N, D] f32`` for a graph tensor, the type's own text otherwise."""
    if isinstance(type_, TensorType):
        dims = ", ".join(str(d) for d in type_.dims)
        return f"[{dims}] {type_.element_type}"
    return str(type_)


def _attribute_text(attribute: Attribute) -> str:
    data = getattr(attribute, "data", attribute)
    return str(getattr(data, "value", data))


def _value_name(value: SSAValue) -> str:
    return value.name_hint or f"arg{getattr(value, 'index', '')}"


def _quote(text: str) -> str:
    """A DOT double-quoted string: quotes and backslashes escaped, newlines
    as DOT's centred line breaks, so no name or location can end it."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\r", "").replace("\n", "\\n") + '"'


# ----- Graphviz ----------------------------------------------------------------


def dot_available() -> bool:
    return shutil.which("dot") is not None


def run_graphviz(dot: str, output_format: str) -> bytes:
    """``dot -T<format>`` of ``dot``; a missing Graphviz or a failed layout
    is an ``IrcError`` saying what to do."""
    executable = shutil.which("dot")
    if executable is None:
        raise IrcError(
            "drawing needs Graphviz's `dot` program, which is not on PATH: install "
            "Graphviz (apt install graphviz, brew install graphviz or conda install "
            "graphviz), or write DOT text (irc.viz.render(c, 'graph.dot'))"
        )
    try:
        run = subprocess.run(
            [executable, f"-T{output_format}"],
            input=dot.encode(),
            capture_output=True,
            timeout=_DOT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise IrcError(
            f"Graphviz took over {_DOT_TIMEOUT_S} s to lay the graph out; "
            "write DOT text instead (irc.viz.render(c, 'graph.dot'))"
        ) from None
    if run.returncode != 0:
        message = run.stderr.decode(errors="replace").strip()
        raise IrcError(f"Graphviz failed to draw the graph: {message}")
    return run.stdout


def to_svg(source: Drawable) -> str:
    """The picture as SVG text (needs Graphviz)."""
    return run_graphviz(to_dot(source), "svg").decode()


def render(source: Drawable, path: str | Path) -> Path:
    """Write the picture to ``path``: ``.dot``/``.gv`` as DOT text, ``.svg``,
    ``.png`` or ``.pdf`` through Graphviz. Returns the path."""
    target = Path(path)
    suffix = target.suffix.lower()
    dot = to_dot(source)
    if suffix in (".dot", ".gv"):
        target.write_text(dot, encoding="utf-8")
    elif suffix in GRAPHVIZ_FORMATS:
        target.write_bytes(run_graphviz(dot, GRAPHVIZ_FORMATS[suffix]))
    else:
        known = ", ".join([".dot", ".gv", *GRAPHVIZ_FORMATS])
        raise IrcError(
            f"cannot tell the picture format of {str(target)!r}: end the name "
            f"with one of {known}"
        )
    return target


def show(
    compiled: Compilation | HasCompilation,
    path: str | Path | None = None,
    *,
    browser: bool = False,
) -> Path | None:
    """Show the HTML view inline under Jupyter/IPython (returning None).
    Elsewhere, or given a ``path``, write it as a page to ``path`` (a new
    file in the temporary directory by default), print where, so that the
    file is not lost, open it in a web browser only if ``browser`` (a
    headless machine has none), and return its path."""
    compilation = _compilation(compiled)
    page = to_html(compilation)
    display = _ipython_display()
    if display is not None and path is None:
        display(page)
        return None
    written = _write_page(page, path)
    print(f"irc: wrote the view of {compilation.function_name} to {written}")
    if browser:
        webbrowser.open(written.as_uri())
    return written


def _write_page(page: str, path: str | Path | None) -> Path:
    """``page`` as a standalone HTML file at ``path``, or at a new
    temporary file; its absolute path."""
    document = f"<!DOCTYPE html><meta charset='utf-8'>{page}"
    if path is not None:
        target = Path(path).expanduser().resolve()
        target.write_text(document, encoding="utf-8")
        return target
    with tempfile.NamedTemporaryFile(
        "w", suffix=".html", prefix="irc-", delete=False, encoding="utf-8"
    ) as file:
        file.write(document)
    return Path(file.name).resolve()


def _ipython_display():  # type: ignore[no-untyped-def]
    """IPython's HTML display when running under a kernel, else None."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return None
    if get_ipython() is None:
        return None
    return lambda page: display(HTML(page))


# ----- HTML --------------------------------------------------------------------

_KERNEL_START = re.compile(r"^(\s*)(?:%\S+ = )?\w+\.kernel @(\w+)")


def to_html(source: Compilation | HasCompilation) -> str:
    """A self-contained HTML view: the picture (or its DOT text without
    Graphviz), each kernel with its colour, kind, reason and Python lines,
    and the IR of every level with each kernel's lines in its colour."""
    compiled = _compilation(source)
    fusion = compiled.module("fusion")
    kernels = [op for op in fusion.walk() if isinstance(op, KernelOp)]
    colours = {
        k.sym_name.data: PALETTE[i % len(PALETTE)] for i, k in enumerate(kernels)
    }
    parts = [
        "<div class='irc-view' style='font-family:Helvetica,Arial,sans-serif'>",
        f"<h3>{_escape(compiled.captured.function_name)}: "
        f"{len(kernels)} kernel(s)</h3>",
        _picture_html(compiled),
        _kernels_html(kernels, colours),
    ]
    for level in compiled.levels:
        parts.append(
            f"<details><summary>{_escape(level)} IR</summary>"
            f"{_ir_html(compiled.ir(level), colours)}</details>"
        )
    parts.append("</div>")
    return "\n".join(parts)


def _picture_html(compiled: Compilation) -> str:
    if dot_available():
        try:
            svg = to_svg(compiled)
        except IrcError as error:
            return f"<p>{_escape(str(error))}</p>"
        return (
            "<div style='max-height:80vh;overflow:auto;border:1px solid #e5e7eb'>"
            f"{_fit_to_width(svg[svg.find('<svg') :])}</div>"
        )
    return (
        "<p>Install Graphviz to see the picture; its DOT text:</p>"
        f"<pre>{_escape(to_dot(compiled))}</pre>"
    )


_SVG_SIZE = re.compile(r'\s(?:width|height)="[^"]*"')


def _fit_to_width(svg: str) -> str:
    """The <svg> element scaled to the page's width (its viewBox kept),
    instead of Graphviz's natural size in points, which puts a large graph's
    middle off screen."""
    tag_end = svg.index(">")
    opening = _SVG_SIZE.sub("", svg[:tag_end])
    return f'{opening} width="100%"{svg[tag_end:]}'


def _kernels_html(kernels: list[KernelOp], colours: dict[str, str]) -> str:
    rows = []
    for kernel in kernels:
        name = kernel.sym_name.data
        source = "<br>".join(_escape(line) for line in python_lines(kernel))
        rows.append(
            f"<tr style='background:{colours[name]}'><td><b>{_escape(name)}</b></td>"
            f"<td>{_escape(kernel.kind.data)}</td><td>{_escape(kernel.reason.data)}</td>"
            f"<td><code>{source}</code></td></tr>"
        )
    return (
        "<table style='border-collapse:collapse;text-align:left'>"
        "<tr><th>kernel</th><th>kind</th><th>reason</th><th>Python lines</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def python_lines(kernel: KernelOp) -> list[str]:
    """``file:line: code`` for each Python line an op of ``kernel`` came
    from, in order."""
    places = sorted(
        {
            (op.location.filename.data, op.location.line.data)
            for op in kernel.walk()
            if isinstance(op.location, FileLineColLoc)
        }
    )
    return [
        f"{Path(file).name}:{line}: {linecache.getline(file, line).strip()}"
        for file, line in places
    ]


def _ir_html(text: str, colours: dict[str, str]) -> str:
    """The IR text with the lines of each kernel (at any level: ``fusion.kernel
    @k0`` ... ``triton.kernel @k0`` to its closing brace) on its colour."""
    out: list[str] = []
    current: tuple[str, str] | None = None  # (indentation, colour)
    for line in text.splitlines():
        start = _KERNEL_START.match(line)
        if current is None and start and start.group(2) in colours:
            current = (start.group(1), colours[start.group(2)])
        escaped = _escape(line) or " "
        if current is None:
            out.append(f"<div>{escaped}</div>")
            continue
        out.append(f"<div style='background:{current[1]}'>{escaped}</div>")
        if line == f"{current[0]}}}":
            current = None
    return "<pre style='font-size:12px;line-height:1.25'>" + "".join(out) + "</pre>"


def _escape(text: str) -> str:
    return html.escape(text, quote=True)
