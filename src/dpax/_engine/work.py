"""Counting the work dpax's kernels do, without a clock.

Every dpax kernel call goes through :func:`dpax._engine.cache.kernel`. Inside
``with count_work() as work:`` each of those calls is reported to ``work``, which counts
what an operation costs in numbers that do not depend on the machine, its load or the
kernel cache's state (except ``compiled`` and ``loaded``), so a test can pin them::

    with count_work() as work:
        dpax.dpsgd(1.0, 1e-3, 10_000, grid_step=1e-3).epsilon(1e-5)
    work.calls, work.kernels, work.points, work.by_kernel["epsilon_kernel"].calls

What is counted (:class:`Work`):

* ``calls``: kernel executions through the wrapper: one per call of a wrapped kernel with
  concrete arguments, whether its executable came from the cache's table, the disk store or
  XLA, or the call fell back to plain ``jit`` (arguments sharded or on another device).
* ``kernels``: the number of distinct cache keys among those calls (kernel name, argument
  structure, each leaf's shape, dtype and weak type, static arguments; plain-jit calls are
  keyed the same way, apart from the others): the distinct compiled shapes the operation
  needs, the same whether they were compiled, loaded or already in memory.
* ``points``: summed over the calls, the number of elements of every floating-point array
  argument with two or more dimensions (NumPy or JAX arrays among the flattened positional
  arguments; scalars, 1-D arrays, integer and boolean arrays are not counted). For the
  analysis and composition kernels these are the privacy-loss pairs' ``pmf_x`` and
  ``pmf_y`` (rows x padded grid length each, so a pair counts 2 x rows x length) and the
  query columns (rows x queries); it is the size of the data the kernels sweep, padding
  included, a proxy for their run time that needs no clock.
* ``out_points``: the same count over each call's outputs (its flattened result). A
  composition's output (rows x FFT length, fixed by a static argument) is far longer than
  its inputs (the single-step factors): ``points`` alone would miss a doubled FFT length
  until a later kernel reads the result.
* ``compiled`` and ``loaded``: how much ``cache.stats['compiled']`` and
  ``cache.stats['loaded']`` grew during the block (these depend on what the cache already
  held: use ``kernels`` to pin).
* ``traced``: calls made with traced arguments, i.e. while another ``jit`` traced its body
  (a kernel inlined into an enclosing computation, not an execution of its own); they
  happen only when the enclosing computation is traced, so they are kept out of the other
  counts.
* ``by_kernel``: kernel name -> :class:`KernelWork` (``calls``, ``kernels``, ``points``,
  ``out_points``) for that kernel alone.

Blocks may nest; every active block records every call. Recording is per process, not per
thread: a kernel call from any thread while a block is active is counted by it (and the
stats deltas are process-wide too), so count work where nothing else runs kernels
meanwhile. Updates are made under the cache's lock. Outside any block the cost to a kernel
call is one test of an empty list.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import jax
import numpy as np

from . import cache as _cache
from . import kernel_store as _store


@dataclasses.dataclass
class KernelWork:
    """The work of one kernel (by name) inside a :func:`count_work` block."""

    calls: int = 0
    kernels: int = 0
    points: int = 0
    out_points: int = 0


@dataclasses.dataclass
class Work:
    """What the kernel calls inside a :func:`count_work` block did (see the module's
    docstring for exactly what each field counts). Filled while the block runs;
    ``compiled`` and ``loaded`` are set when it ends."""

    calls: int = 0
    kernels: int = 0
    points: int = 0
    out_points: int = 0
    compiled: int = 0
    loaded: int = 0
    traced: int = 0
    by_kernel: dict[str, KernelWork] = dataclasses.field(default_factory=dict)
    _keys: set = dataclasses.field(default_factory=set, repr=False, compare=False)

    def record(self, name: str, key: str | None, tree, leaves, static, out=None) -> None:
        """Called by the cache's wrapper after every kernel call (key None: plain jit)."""
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            self.traced += 1
            return
        if key is None:
            key = "plain-jit:" + _store.key_of(name, tree, leaves, static)
        points = _points(leaves)
        out_points = _points(jax.tree_util.tree_leaves(out))
        per = self.by_kernel.get(name)
        if per is None:
            per = self.by_kernel[name] = KernelWork()
        self.calls += 1
        self.points += points
        self.out_points += out_points
        per.calls += 1
        per.points += points
        per.out_points += out_points
        if key not in self._keys:
            self._keys.add(key)
            self.kernels += 1
            per.kernels += 1

    def as_dict(self) -> dict[str, Any]:
        """The counts as a plain dict (``by_kernel`` as name -> dict)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if not f.name.startswith("_")}
        out["by_kernel"] = {k: dataclasses.asdict(v) for k, v in sorted(self.by_kernel.items())}
        return out


def _points(leaves) -> int:
    total = 0
    for leaf in leaves:
        shape = getattr(leaf, "shape", None)
        if shape is not None and len(shape) >= 2 and np.issubdtype(leaf.dtype, np.floating):
            total += int(np.prod(shape, dtype=np.int64))
    return total


class _Recorder:
    """What the cache's wrapper calls: records into a Work under the cache's lock."""

    __slots__ = ("work",)

    def __init__(self, work: Work):
        self.work = work

    def record(self, name, key, tree, leaves, static, out) -> None:
        with _cache._lock:
            self.work.record(name, key, tree, leaves, static, out)


@contextlib.contextmanager
def count_work() -> Iterator[Work]:
    """Count the kernel calls made inside the block (see the module's docstring)."""
    work = Work()
    recorder = _Recorder(work)
    with _cache._lock:
        before = dict(_cache.stats)
        _cache._recorders.append(recorder)
    try:
        yield work
    finally:
        with _cache._lock:
            _cache._recorders.remove(recorder)
            work.compiled = _cache.stats["compiled"] - before.get("compiled", 0)
            work.loaded = _cache.stats["loaded"] - before.get("loaded", 0)
