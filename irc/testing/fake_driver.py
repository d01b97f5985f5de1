"""A fake CUDA driver for Triton: the real launch path, on a machine without a GPU.

Triton's interpreter (``TRITON_INTERPRET=1``) and ``triton.compile(ASTSource(...))``
both skip what a launch on a GPU does in Python: the binder and argument
specialisation (16-byte aligned pointers, integers equal to 1 made constants,
multiples of 16 marked divisible), the kernel cache lookup, the check that no
global a kernel read has changed since it was compiled, and the grid. A kernel
can pass both and still fail to launch. With ``fake_cuda()`` active,
``kernel[grid](*args)`` runs ``JITFunction.run`` for real: it specialises, compiles
for an H100 (``GPUTarget("cuda", 90, 32)``) with Triton's own compiler and
``ptxas``, caches the result, and checks the globals. Only the last steps are
fake: loading the cubin loads nothing, and the launch is recorded instead of
run, after the checks ``cuLaunchKernel`` makes on a grid.

torch CPU tensors stand in for device memory: Triton reads only their
``data_ptr()`` (for the alignment specialisation) and dtype, and no kernel runs,
so nothing reads the memory. Results hold whatever ``torch.empty`` left there.

``fake_cuda(devices=2)`` fakes two such GPUs, for code that must launch on the
device of its tensors whatever device is current: device 0's tensors are CPU
tensors, device 1's are ``meta`` tensors (no memory; nothing reads it). The
driver's current device starts at 0; ``get_device_interface().device(d)``
makes ``d`` current for a block, as ``torch.cuda.device`` does, and each
recorded launch says on which device it ran.

    from irc.testing.fake_driver import fake_cuda

    with fake_cuda() as gpu:
        compiled(*tensors, backend="triton")  # or the emitted launcher itself
    for launch in gpu.launches:
        print(launch.kernel, launch.grid)

The process must compile Triton kernels rather than interpret them
(``TRITON_INTERPRET`` unset when triton is first imported); ``fake_cuda()``
imports triton for compiling, or raises ``TritonModeError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from irc.errors import IrcError

#: The H100's compute capability (an H200 has the same), as Triton names targets.
TARGET = ("cuda", 90, 32)
#: CUDA's largest grid: 2**31 - 1 blocks along x, 65,535 along y and z (kept
#: apart from the emitter's own copy: the fake driver is the tests' oracle).
MAX_GRID = (2**31 - 1, 65535, 65535)
#: What ``cuDeviceGetAttribute`` reports for an H100 SXM.
DEVICE_PROPERTIES = {
    "max_shared_mem": 232448,
    "max_num_regs": 65536,
    "multiprocessor_count": 132,
    "warpSize": 32,
    "sm_clock_rate": 1980000,
    "mem_clock_rate": 2619000,
    "mem_bus_width": 5120,
}
_MAX_THREADS_PER_BLOCK = 1024


class FakeLaunchError(IrcError):
    """A launch that CUDA would refuse (a grid beyond its limits)."""


@dataclass(frozen=True)
class Launch:
    """One recorded kernel launch."""

    #: The kernel's name, as Triton compiled it (the ``@triton.jit`` function's).
    kernel: str
    #: Blocks along x, y and z.
    grid: tuple[int, int, int]
    #: Every parameter's value by name, as the binder bound it: tensors,
    #: integers and the constexprs.
    args: dict[str, Any]
    #: Triton's type of each non-constexpr parameter after specialisation
    #: (``*fp32``, ``i32``, ``constexpr`` for an integer bound as 1).
    signature: dict[str, str]
    #: The specialisation attributes: parameter index -> ``[["tt.divisibility", 16]]``.
    attrs: dict[tuple[int, ...], Any]
    #: The compiled kernel's metadata (``hash``, ``num_warps``, ``shared``...):
    #: ``hash`` finds its ``CompiledKernel`` (and PTX) among the
    #: ``@triton.jit`` function's cached binaries, see ``compiled_kernels``.
    metadata: Any
    #: The driver's current device at the launch (Triton launches there).
    device: int = 0


@dataclass
class _Utils:
    """``driver.utils``: what ``CompiledKernel`` calls to load a binary."""

    loaded: list[str]

    def load_binary(
        self, name: str, kernel: bytes, shared: int, device: int
    ) -> tuple[int, int, int, int, int]:
        self.loaded.append(name)
        # (module, function, registers, spills, max threads per block)
        return 0, len(self.loaded), 0, 0, _MAX_THREADS_PER_BLOCK

    def unload_module(self, module: int) -> None:
        pass

    def get_device_properties(self, device: int) -> dict[str, int]:
        return dict(DEVICE_PROPERTIES)


class _Launcher:
    """``driver.launcher_cls``: built once per compiled kernel; each call is a
    launch, recorded after CUDA's grid checks."""

    def __init__(self, driver: FakeCudaDriver, src: Any, metadata: Any):
        self.driver = driver
        self.name: str = metadata.name
        self.names = list(src.fn.arg_names)
        self.signature = dict(src.signature)
        self.attrs = dict(src.attrs)
        self.metadata = metadata

    def __call__(
        self,
        grid_x: int,
        grid_y: int,
        grid_z: int,
        stream: int,
        function: int,
        packed_metadata: Any,
        launch_metadata: Any,
        enter_hook: Any,
        exit_hook: Any,
        *args: Any,
    ) -> None:
        grid = (grid_x, grid_y, grid_z)
        for axis, (size, limit) in enumerate(zip(grid, MAX_GRID)):
            if not 0 <= size <= limit:
                raise FakeLaunchError(
                    f"cuLaunchKernel({self.name}): grid {grid} axis {axis} is {size}, "
                    f"outside CUDA's limit of {limit} (CUDA_ERROR_INVALID_VALUE)"
                )
        if grid_x * grid_y * grid_z == 0:
            return  # Triton's launcher skips an empty grid
        if not self.driver.record:
            return
        self.driver.launches.append(
            Launch(
                self.name,
                grid,
                dict(zip(self.names, args, strict=True)),
                self.signature,
                self.attrs,
                self.metadata,
                self.driver.current,
            )
        )


#: The torch device that stands in for each fake GPU's memory, by index.
STAND_INS = ("cpu", "meta")


class _DeviceInterface:
    """``driver.get_device_interface()``: what Triton (and irc's launchers)
    use as ``torch.cuda``; only ``device(d)``, the current-device context."""

    def __init__(self, driver: FakeCudaDriver):
        self._driver = driver

    @contextmanager
    def device(self, device: Any) -> Iterator[None]:
        """``device`` (a torch device, or an index) current for the block."""
        driver = self._driver
        index = device if isinstance(device, int) else driver.index_of(device)
        previous = driver.current
        driver.set_current_device(index)
        try:
            yield
        finally:
            driver.set_current_device(previous)


@dataclass
class FakeCudaDriver:
    """A Triton driver for ``devices`` H100s (1 or 2) that compiles for real
    and launches nothing. ``launches`` records every launch (unless
    ``record`` is False, for timing Triton's own dispatch), ``loaded`` the
    name of every kernel binary loaded (one per compiled specialisation and
    device); ``current`` is the current device."""

    record: bool = True
    launches: list[Launch] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)
    devices: int = 1
    current: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.devices <= len(STAND_INS):
            raise IrcError(
                f"the fake CUDA driver fakes 1 to {len(STAND_INS)} devices (their "
                f"memory stands in as {', '.join(STAND_INS)} tensors), not "
                f"{self.devices}"
            )
        import torch

        self.utils = _Utils(self.loaded)
        self._torch_devices = [torch.device(d) for d in STAND_INS[: self.devices]]
        self._interface = _DeviceInterface(self)

    def torch_device(self, index: int) -> Any:
        """The torch device whose tensors stand in for device ``index``."""
        return self._torch_devices[index]

    def index_of(self, device: Any) -> int:
        """The fake device whose memory ``device``'s tensors stand in for."""
        import torch

        device = torch.device(device)
        if device not in self._torch_devices:
            raise FakeLaunchError(
                f"{device} stands in for none of the {self.devices} fake CUDA "
                f"device(s) ({', '.join(map(str, self._torch_devices))})"
            )
        return self._torch_devices.index(device)

    def launcher_cls(self, src: Any, metadata: Any) -> _Launcher:
        return _Launcher(self, src, metadata)

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_target(self) -> Any:
        from triton.backends.compiler import GPUTarget

        return GPUTarget(*TARGET)

    def get_current_device(self) -> int:
        return self.current

    def set_current_device(self, device: int) -> None:
        if not 0 <= device < self.devices:
            raise FakeLaunchError(
                f"cudaSetDevice({device}): there are {self.devices} device(s) "
                "(cudaErrorInvalidDevice)"
            )
        self.current = device

    def get_device_interface(self) -> _DeviceInterface:
        return self._interface

    def get_current_stream(self, device: int) -> int:
        return 0

    def get_active_torch_device(self) -> Any:
        """Where tensors for the current "GPU" live: the CPU for device 0."""
        return self._torch_devices[self.current]

    def get_device_capability(self, device: int) -> tuple[int, int]:
        return TARGET[1] // 10, TARGET[1] % 10

    def map_python_to_cpp_type(self, ty: str) -> str:
        from triton.backends.nvidia.driver import ty_to_cpp

        return ty_to_cpp(ty)

    def get_benchmarker(self) -> Any:
        raise IrcError("the fake CUDA driver runs no kernel, so it cannot time one")


def compiled_kernels(function: Any, device: int = 0) -> dict[str, Any]:
    """The binaries Triton compiled for a ``@triton.jit`` function on fake
    device ``device``, by hash: one ``CompiledKernel`` (``.asm["ptx"]``,
    ``.asm["cubin"]``) per specialisation launched."""
    caches = function.device_caches
    if device not in caches:  # never launched (the cache is a defaultdict)
        return {}
    kernel_cache = caches[device][0]
    return {kernel.hash: kernel for kernel in kernel_cache.values()}


@contextmanager
def fake_cuda(*, record: bool = True, devices: int = 1) -> Iterator[FakeCudaDriver]:
    """Make a fresh ``FakeCudaDriver`` of ``devices`` GPUs Triton's active
    driver for the block (recording launches unless ``record`` is False).

    Kernels compiled inside the block are cached per device by Triton, for
    the fake H100; launching them later under a real driver would reuse
    those binaries, so use this in processes that only test. A compiled
    function binds its backend on its first call (``backend="auto"`` picks
    ``"triton"`` inside the block): call it on that backend inside the
    block only.
    """
    from triton.runtime import driver as drivers

    from irc.runtime.triton_backend import import_triton

    import_triton(interpret=False)
    previous = drivers._active  # None until a driver was first needed
    fake = FakeCudaDriver(record=record, devices=devices)
    drivers.set_active(fake)  # type: ignore[arg-type]
    try:
        yield fake
    finally:
        drivers._active = previous
