"""irc.testing: random programs and checks that passes keep their meaning.

Strategies (Hypothesis):
    symbolic_shapes, bindings, bindings_for, programs, head_programs,
    layer_programs
Inputs and bindings (NumPy only):
    inputs, module_bindings, enumerate_bindings
Checks:
    check_pass          a pass or pipeline keeps generated programs' meaning
    check_metamorphic   symbolic and specialised compilations agree
    check_semantics     interpret a module around each pass of a pipeline
    compare_outputs, specialize, PassCheckError, SemanticsChecker
    cases, Case         the examples the checks draw: program, binding, seed
Gradients:
    check_grad          autodiff's gradients against finite differences
    differentiable_programs, grad_inputs
Interpreters by level:
    Level, register_level, level_of, run_module
Models (torch and transformers): irc.testing.models
    small Hugging Face models, as the torch backend's tests build them
Hypothesis profiles:
    register_profiles   adds ``extended`` (IRC_HYPOTHESIS_PROFILE=extended)

See docs/testing.md. Names are imported on first use, so that
``irc-opt --check-semantics`` (which needs no Hypothesis, a test-only
dependency) does not import Hypothesis nor pay for it at start-up.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irc.testing.check import (
        Case,
        PassReport,
        cases,
        check_metamorphic,
        check_pass,
        register_profiles,
    )
    from irc.testing.gradients import (
        check_grad,
        differentiable_programs,
        grad_inputs,
    )
    from irc.testing.interpreters import Level, level_of, register_level, run_module
    from irc.testing.sampling import enumerate_bindings, inputs, module_bindings
    from irc.testing.semantics import (
        DEFAULT_TOLERANCES,
        PassCheckError,
        SemanticsChecker,
        check_semantics,
        compare_outputs,
        specialize,
    )
    from irc.testing.strategies import (
        ACTIONS,
        CONTROL_FLOW_ACTIONS,
        WINDOW_ACTIONS,
        bindings,
        bindings_for,
        head_programs,
        layer_programs,
        programs,
        symbolic_shapes,
    )

__all__ = [
    "ACTIONS",
    "CONTROL_FLOW_ACTIONS",
    "DEFAULT_TOLERANCES",
    "WINDOW_ACTIONS",
    "Case",
    "Level",
    "PassCheckError",
    "PassReport",
    "SemanticsChecker",
    "bindings",
    "bindings_for",
    "cases",
    "check_grad",
    "check_metamorphic",
    "check_pass",
    "check_semantics",
    "compare_outputs",
    "differentiable_programs",
    "enumerate_bindings",
    "grad_inputs",
    "head_programs",
    "inputs",
    "layer_programs",
    "level_of",
    "module_bindings",
    "programs",
    "register_level",
    "register_profiles",
    "run_module",
    "specialize",
    "symbolic_shapes",
]

#: The submodule that defines each public name.
_HOMES: dict[str, tuple[str, ...]] = {
    "check": (
        "Case",
        "PassReport",
        "cases",
        "check_metamorphic",
        "check_pass",
        "register_profiles",
    ),
    "gradients": ("check_grad", "differentiable_programs", "grad_inputs"),
    "interpreters": ("Level", "level_of", "register_level", "run_module"),
    "sampling": ("enumerate_bindings", "inputs", "module_bindings"),
    "semantics": (
        "DEFAULT_TOLERANCES",
        "PassCheckError",
        "SemanticsChecker",
        "check_semantics",
        "compare_outputs",
        "specialize",
    ),
    "strategies": (
        "ACTIONS",
        "CONTROL_FLOW_ACTIONS",
        "WINDOW_ACTIONS",
        "bindings",
        "bindings_for",
        "head_programs",
        "layer_programs",
        "programs",
        "symbolic_shapes",
    ),
}
_EXPORTS = {name: home for home, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'irc.testing' has no attribute {name!r}")
    value = getattr(import_module(f"irc.testing.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
