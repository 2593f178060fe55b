"""Composition of discrete PLRVs by FFT (Kulynych et al. 2024, Appendix E.1).

Under composition the PLRVs add: X = X_1 + ... + X_T under P^T and Y = Y_1 + ... + Y_T
under Q^T, so both pmfs are convolution powers (products of their spectra). The +inf atom
of Y survives only if no step hit it: Pr[Y = +inf] = 1 - prod_i (1 - Pr[Y_i = +inf])^{T_i};
likewise for X's -inf atom.

The output window [lo, hi] comes from Chernoff bounds (:mod:`dpax._engine.chernoff`): each
tail outside it holds at most 1e-18. Those bounds are booked on the infinite atoms (Y's on
+inf, X's on -inf), so every delta(epsilon) stays at or above the exact composition's however
far the window ends; epsilon(delta) is +inf for a delta below them (~1e-18). The FFT's own
round-off is booked on the safe side point by point (:mod:`dpax._engine.roundoff`).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from . import batching as _batching
from . import cache as _cache
from . import grid as _grid
from .chernoff import Window, factor_groups, tilt_rates, window_kernel
from .construct import close_mass
from .cumulative import first_max_index
from .pair import Pair
from .roundoff import big_sides_up, bounded_masses, close_bounded, roundoff, use_exact_ratio

#: A row longer than the FFT is folded by adding its slices of the FFT's length, in order,
#: up to this many slices; beyond, by a scatter that adds what wraps.
_FOLD_SLICES = 4


def _rfft_folded(pmf, length, shift=None):
    """Spectrum of each row's masses placed circularly from position 0: position j holds
    the loss (offset + j) * step, so a row's composed sum starts at sum(count * offset).
    A row longer than ``length`` wraps around (aliasing is exact); a shorter one is only
    zero-padded, which the FFT does itself. ``shift`` (rows,): place each row ``shift``
    positions earlier instead (position j holds the loss (offset + shift + j) * step).

    Placed by slices and a gather, which XLA fuses into loops over the output: the wrapped
    slices added in their order (the order of a scatter-add, the same bits), then the
    shifted row read at each output position. On XLA:CPU's classic emitters a scatter is a
    scalar loop (two rows of 49,152 points: 0.37 ms)."""
    rows, n = pmf.shape[0], pmf.shape[-1]
    if n > length:
        pieces = -(-n // length)
        if pieces <= _FOLD_SLICES:
            sliced = jnp.pad(pmf, [(0, 0), (0, pieces * length - n)]).reshape(rows, pieces, length)
            folded = 0.0 + sliced[:, 0]
            for piece in range(1, pieces):
                folded = folded + sliced[:, piece]
            pmf = folded
        else:
            pmf = jnp.zeros((rows, length), pmf.dtype).at[:, jnp.arange(n) % length].add(pmf)
        n = length
    if shift is not None:
        source = jnp.arange(length)[None, :] + jnp.mod(shift, length)[:, None]  # what lands at each position
        source = jnp.where(source >= length, source - length, source)
        pmf = jnp.where(source < n, jnp.take_along_axis(pmf, jnp.minimum(source, n - 1), -1), 0.0)
    return jnp.fft.rfft(pmf, n=length)


def power_bits(counts) -> int:
    """Static bit budget of :func:`_spectrum_power` for these counts: the largest count's bit
    length rounded up to a multiple of 4 (few compiled variants; a spare bit costs one
    squaring)."""
    top = max((int(np.max(np.asarray(c))) for c in counts), default=0)
    return max(4, -(-max(top, 1).bit_length() // 4) * 4)


def _spectrum_power(spec, count, bits, real=False):
    """spec ** count per row by binary exponentiation (``bits`` >= count's bit length):
    ``bits`` squarings and selects, which XLA fuses into one pass. Four times cheaper than
    exp(count * log spec) in complex arithmetic, with the same ~count ulp relative error.
    With ``real`` (for XLA:CPU's classic emitters) the products are written in real
    arithmetic on the spectrum's two parts, (a + bi)(c + di) = (ac - bd) + (ad + bc)i: the
    classic emitters run XLA's complex product ~1.4x slower, and the two emitters give the
    same bits for these (not for XLA's complex product)."""
    if not real:
        result, base = jnp.ones_like(spec), spec
        for i in range(bits):
            result = jnp.where(((count >> i) & 1)[:, None] == 1, result * base, result)
            if i + 1 < bits:
                base = base * base
        return result
    re, im = jnp.real(spec), jnp.imag(spec)
    out_re, out_im = jnp.ones_like(re), jnp.zeros_like(im)
    for i in range(bits):
        on = ((count >> i) & 1)[:, None] == 1
        out_re, out_im = (jnp.where(on, out_re * re - out_im * im, out_re),
                          jnp.where(on, out_re * im + out_im * re, out_im))
        if i + 1 < bits:
            re, im = re * re - im * im, re * im + im * re
    return jax.lax.complex(out_re, out_im)




def _spectra(laws, count, length, bits, shift=None, real=False):
    """Spectra of the laws (X and Y, and the tilted laws of a companion) raised to
    ``count``, stacked (k * rows, length // 2 + 1): one batched FFT for all of them (the FFT
    library runs a batch on all cores)."""
    if shift is not None:
        shift = jnp.concatenate([shift] * len(laws))
    spec = _rfft_folded(jnp.concatenate(laws, 0), length, shift)
    return _spectrum_power(spec, jnp.concatenate([count] * len(laws)), bits, real), spec


def tilted_laws(pmf_x, pmf_y, offset, grid_step, theta):
    """X, Y and the tilted laws of a factor (rows, n) at its losses x, ``theta`` (rows, 4)
    the rates: X e^(t0 x) and Y e^(-t1 x) (the small sides' tails: X above 0, Y below 0),
    Y e^(t2 x) and X e^(-t3 x) (the big sides' far tails). The tilt commutes with
    composition, (X e^(t x))^(*T) = X^(*T) e^(t s), so the composed tilted laws give a
    companion's tails with the FFT's round-off relative to the tilted law's size there
    instead of the law's own (:func:`dpax._engine.optimistic.reclose`)."""
    x = _grid.loss_grid(offset, pmf_x.shape[-1], grid_step)
    tilt = lambda pmf, rate: jnp.where(pmf > 0, pmf * jnp.exp(rate * x), 0.0)
    return (pmf_x, pmf_y, tilt(pmf_x, theta[:, :1]), tilt(pmf_y, -theta[:, 1:2]), tilt(pmf_y, theta[:, 2:3]),
            tilt(pmf_x, -theta[:, 3:]))




def _finish(spec, start, neglog_fin_y, neglog_fin_x, window: Window, grid_step, length, exact_ratio, aligned=False,
            tilted=False, steps=None, closed=True):
    """Back from the frequency domain (X's spectra stacked over Y's) onto each row's window
    [lo, hi] (rows, length); returns the PLRV arrays with their offsets.

    The circular position of the window's first point ``lo`` is (lo - start) mod length,
    where position 0 holds the loss ``start``; the rows are rolled to put it first. With
    ``aligned`` (the factors were placed so that lo - start lies in [0, length - width])
    the rows are kept as they are, offset ``start``, with zeros before the window.

    A batch shares one FFT length, the widest row's; past its own Chernoff window ``hi``
    (at most ``TAIL_MASS`` there) a narrower row would only carry FFT round-off, which
    can be relatively large in its far tails, so it is zeroed there. The mass the window
    cuts (its Chernoff bounds, :class:`Window`) is booked on the infinite atoms (Y's on
    +inf, X's on -inf): the +inf atom bounds every delta below, so epsilon(delta) is inf
    for a delta below it instead of read from a truncated tail. Inside the window each
    point's round-off bound (``steps`` (rows,) composed steps, :func:`roundoff`) is booked
    on the safe side (:func:`bounded_masses`), and the mass closed (:func:`close_bounded`
    for an exact-ratio pair; else missing mass on the infinite atoms).

    ``tilted``: the spectra also hold a companion's tilted laws (:func:`tilted_laws`);
    returns the pair and the :class:`Pair` of each two composed tilted laws (atoms 0),
    the FFT's values as they are (the companion books its round-off itself,
    :func:`dpax._engine.optimistic.reclose`). With ``closed`` False the pair is the FFT's
    values as they are too (at least 0, inside the window), its atoms the factors' and the
    window's cuts (:func:`dpax._engine.tail_bounds.tighten` books the round-off).
    """
    lo, hi = window.lo, window.hi
    rows = lo.shape[0]
    laws = 6 if tilted else 2
    comp = jnp.fft.irfft(spec, n=length)
    # each law's largest value, read from the transform's output itself (before any roll or
    # slice, which would be copied for a reduction of their own)
    peak = jnp.max(comp, -1)
    pos = jnp.arange(length)[None, :]
    if aligned:
        first = (lo - start)[:, None]
        inside = (pos >= first) & (pos - first <= (hi - lo)[:, None])
        offset = start
    else:
        shift = jnp.mod(lo - start, length)  # the window's first point, as a circular position
        comp = jax.vmap(lambda c, k: jnp.roll(c, -k))(comp, jnp.concatenate([shift] * laws))
        inside = pos <= (hi - lo)[:, None]
        offset = lo
    inf_y, neginf_x = -jnp.expm1(neglog_fin_y), -jnp.expm1(neglog_fin_x)
    if tilted and not closed:
        pmf_x = jnp.where(inside, jnp.maximum(comp[:rows], 0.0), 0.0)
        pmf_y = jnp.where(inside, jnp.maximum(comp[rows:2 * rows], 0.0), 0.0)
        inf_y, neginf_x = jnp.minimum(inf_y + window.cut_y, 1.0), jnp.minimum(neginf_x + window.cut_x, 1.0)
    elif tilted:
        pmf_x = jnp.where(inside, jnp.maximum(comp[:rows], 0.0), 0.0)
        pmf_y = jnp.where(inside, jnp.maximum(comp[rows:2 * rows], 0.0), 0.0)
        if exact_ratio:
            pmf_x, pmf_y = use_exact_ratio(pmf_x, pmf_y, offset, grid_step)
        pmf_x, pmf_y, inf_y, neginf_x = close_mass(pmf_x, pmf_y, inf_y, neginf_x)
    else:
        comp_x, comp_y = comp[:rows], comp[rows:]
        offsets = jnp.broadcast_to(offset, (rows,))
        eta_x, eta_y = roundoff(peak[:rows], steps, length), roundoff(peak[rows:], steps, length)
        # where each law is largest inside its window (as a loss index)
        position = first_max_index(jnp.where(inside, comp.reshape(2, rows, length), -1.0))
        at = (offsets + position[0], offsets + position[1])
        # a far tail begins beyond the law's mean and its mode
        far_x, far_y = jnp.minimum(window.mean_x, at[0] * grid_step), jnp.maximum(window.mean_y, at[1] * grid_step)
        bounds = bounded_masses(comp_x, comp_y, offsets, grid_step, eta_x, eta_y, exact_ratio, far_x, far_y)
        bounds = tuple(tuple(jnp.where(inside, a, 0.0) for a in law) for law in bounds)
        inf_y, neginf_x = jnp.minimum(inf_y + window.cut_y, 1.0), jnp.minimum(neginf_x + window.cut_x, 1.0)
        if exact_ratio:
            modes = ((at[0], peak[:rows] - eta_x[:, 0]), (at[1], peak[rows:2 * rows] - eta_y[:, 0]))
            pmf_x, pmf_y, inf_y, neginf_x = close_bounded(bounds, inf_y, neginf_x, offsets, lo, hi, modes,
                                                          (eta_x[:, 0], eta_y[:, 0]), grid_step)
        else:
            pmf_x, pmf_y = big_sides_up(bounds, offsets)
            pmf_x, pmf_y, inf_y, neginf_x = close_mass(pmf_x, pmf_y, inf_y, neginf_x)
    pair = Pair(pmf_x, pmf_y, offset, inf_y, neginf_x)
    if not tilted:
        return pair
    xt, yt, yu, xd = (jnp.where(inside, jnp.maximum(comp[k * rows:(k + 1) * rows], 0.0), 0.0) for k in range(2, 6))
    zero = jnp.zeros(rows)
    offset = jnp.broadcast_to(offset, (rows,))
    return pair, Pair(xt, yt, offset, zero, zero), Pair(xd, yu, offset, zero, zero)


#: A self-composition of at most this many points (rows times FFT length) compiles on XLA's
#: classic emitters (:func:`_on_classic_emitters`).
CLASSIC_MAX_POINTS = 2**20


def _on_classic_emitters(factors, length) -> bool:
    """Whether :func:`fft_compose_kernel` compiles on XLA:CPU's classic emitters, which
    compile it a third faster: one factor (a self-composition) of at most
    :data:`CLASSIC_MAX_POINTS` points. There it runs as fast as on the fusion emitters, its
    spectrum's power written in real arithmetic beside the transform it reads, which the
    kernel returns to keep it; a batch of more points pays for that buffer (32 rows of
    196,608 points: ~8% slower), and the product of several factors' spectra, written over
    its loop's carry, runs 1.5x slower on the classic emitters."""
    return len(factors) == 1 and factors[0].pmf_x.shape[0] * length <= CLASSIC_MAX_POINTS


def _fusion_emitters(factors, *args, length, **static) -> bool:
    return not _on_classic_emitters(factors, length)


@functools.partial(_cache.kernel, name="fft_compose", fusion_emitters=_fusion_emitters)
@functools.partial(jax.jit, static_argnames=("length", "exact_ratio", "bits", "aligned", "closed"))
def fft_compose_kernel(factors: tuple[Pair, ...], counts: tuple, window: Window, grid_step, theta=None, *, length,
                       exact_ratio, bits, aligned=False, closed=True) -> tuple[Any, jax.Array | None]:
    """Convolution of ``counts[k]`` copies of each factor (rows, n_k) on the window, the
    spectra multiplied in a ``lax.scan`` over each group of equal-length factors.

    ``aligned`` (one factor, every count >= 1 and below length - width + 1): the factor is
    placed floor((lo - start) / count) positions early, so that the composed window starts
    within ``count`` positions of position 0 and needs no roll (see :func:`_finish`).
    ``theta`` (rows, 4), for a companion: the tilted laws are composed too, in the same
    batched FFT (:func:`tilted_laws`); returns (pair, small sides' tilted pair, big sides'
    tilted pair), the pair unclosed if not ``closed`` (see :func:`_finish`).

    Returned beside the answer (and dropped by the caller): on the classic emitters
    (:func:`_on_classic_emitters`) the factor's transform, kept so that its spectrum's power
    is written to a buffer of its own; else None. Written over the transform (XLA's in-place
    reuse of a dead operand), the power's loop on XLA:CPU's classic emitters ran ~6x slower
    (327,680 points: 3.2 ms against 0.5 ms); beside it, as fast as on the fusion emitters.
    """
    classic = _on_classic_emitters(factors, length)

    def first(factor):  # the product of no spectra yet: the first factor's terms alone
        px, py, off, iy, nx, count = factor
        pmfs = (px, py) if theta is None else tilted_laws(px, py, off, grid_step, theta)
        shift = jnp.floor_divide(window.lo - count * off, count) if aligned else None
        off = off + shift if aligned else off
        # 0.0 + ...: a sum from zero, as the body's (a -0.0 term reads +0.0)
        return (_spectra(pmfs, count, length, bits, shift, classic), count * off, 0.0 + count * jnp.log1p(-iy),
                0.0 + count * jnp.log1p(-nx))

    def body(carry, factor):
        spec, start, fin_y, fin_x = carry
        (f_spec, _), f_start, f_fin_y, f_fin_x = first(factor)
        return (spec * f_spec, start + f_start, fin_y + f_fin_y, fin_x + f_fin_x), None

    carry: tuple | None = None
    for g, c in factor_groups(factors, counts):
        stacked = (*g, c)
        if carry is None:  # the first factor starts the product (no array of ones to multiply)
            (spec, transform), *rest = first(tuple(a[0] for a in stacked))
            carry = (spec, *rest)
            stacked = tuple(a[1:] for a in stacked)
        if stacked[-1].shape[0]:
            carry, _ = jax.lax.scan(body, carry, stacked)
    assert carry is not None  # at least one factor
    spec, start, neglog_fin_y, neglog_fin_x = carry
    steps = sum(jnp.asarray(c, jnp.float64) for c in counts)
    return _finish(spec, start, neglog_fin_y, neglog_fin_x, window, grid_step, length, exact_ratio, aligned,
                   theta is not None, steps, closed), (transform if classic else None)




#: Bytes per row and factor grid point that the kernels' stacked (and, when chunked,
#: gathered) copies of the factors take, besides their per-point working memory.
_FACTOR_BYTES = 32


class _Plan(NamedTuple):
    """Host-side plan of one composition: each row's window, FFT length and placement."""

    lo: np.ndarray
    hi: np.ndarray
    length: np.ndarray  #: each row's own FFT length
    aligned: np.ndarray  #: each row's own placement (see :func:`fft_compose_kernel`)
    cut_y: np.ndarray  #: the window's Chernoff bounds and the laws' means (see :class:`Window`)
    cut_x: np.ndarray
    mean_y: np.ndarray
    mean_x: np.ndarray


def _take(factors, counts, index):
    """The rows ``index`` of every factor and count (gathered on the host: no kernel to
    compile for each chunk shape)."""
    return (tuple(Pair(*(np.asarray(a)[index] for a in f)) for f in factors),
            tuple(np.asarray(c)[index] for c in counts))


def _window_chunk(rows: int, sizes: list[int]) -> int:
    """Rows per call of the window kernel for ``rows`` rows of factors of ``sizes`` points."""
    per_row = _grid.BYTES_PER_POINT * max(sizes) + _FACTOR_BYTES * sum(sizes)
    return _grid.rows_per_chunk(rows, per_row, 0, "composition (Chernoff window)",
                                f"{rows} row(s) of factors with {sum(sizes)} grid points in all")


def window_ahead(rows: int, n: int, grid_step) -> None:
    """Compile the window kernel of a self-composition of ``rows`` rows of ``n`` points ahead
    of its call (:func:`dpax._engine.cache.compile_ahead_of`), beside the construction that
    makes them: what :func:`compose_arrays` passes it (a pair of float64 rows, int64 offsets
    and counts, the step as a NumPy float64) where one call takes every row."""
    try:
        if _window_chunk(rows, [n]) < rows:
            return
    except _grid.MemoryBudgetError:  # the composition will say so itself
        return
    pmf, mass = jax.ShapeDtypeStruct((rows, n), jnp.float64), jax.ShapeDtypeStruct((rows,), jnp.float64)
    index = jax.ShapeDtypeStruct((rows,), jnp.int64)
    window_kernel.ahead((Pair(pmf, pmf, index, mass, mass),), (index,), np.float64(grid_step))


def _window(factors, counts, step) -> Window:
    """Each row's Chernoff window (host arrays), the rows in chunks that fit the budget."""
    rows = factors[0].pmf_x.shape[0]
    chunk = _window_chunk(rows, [f.support_length for f in factors])
    if chunk >= rows:
        # one transfer for all six arrays (np.asarray of each waits for the device six times)
        return Window(*(np.asarray(a) for a in jax.device_get(tuple(window_kernel(factors, counts, step)))))
    out = Window(np.empty(rows, np.int64), np.empty(rows, np.int64), *(np.empty(rows) for _ in range(4)))
    chunk = _batching.chunk_size(chunk)
    for index, real in _batching.row_chunks(rows, chunk):
        w = window_kernel(*_take(factors, counts, index), step)
        for a, b in zip(out, w):
            a[index[:real]] = np.asarray(b)[:real]
    return out


def _plan(factors, counts, step) -> _Plan:
    """Windows, FFT lengths and placements, each row's own: a row's answer does not depend
    on the other rows of its batch (beyond round-off). Inside
    :func:`dpax._engine.grid.shared_lengths` (a search, whose answer is evaluated again on
    its own) the batch shares the longest row's length (or a longer one used before) and
    one placement: one kernel call per round, few shapes to compile."""
    lo, hi, cut_y, cut_x, mean_y, mean_x = _window(factors, counts, step)
    width = hi - lo + 1
    if _grid.sharing():  # a search's batch: one length and placement, few kernel shapes
        length = np.full(width.shape, _grid.padded_length(int(np.max(width)), "compose", rows=width.size,
                                                          shape=tuple(f.support_length for f in factors)), np.int64)
    else:
        sizes, where = np.unique(width, return_inverse=True)
        length = np.array([_grid.padded_length(int(w)) for w in sizes], np.int64)[where.reshape(-1)]
    # one factor whose count fits in the FFT's spare length: placed so that no roll is needed
    # (a search's batches always roll: the placement is a static argument, and the rounds of a
    # search would otherwise compile both variants of their composition kernel)
    aligned = np.zeros(len(width), bool)
    if len(factors) == 1 and not _grid.sharing():
        aligned = (counts[0] >= 1) & (counts[0] <= length - width + 1)
    return _Plan(lo, hi, length, aligned, cut_y, cut_x, mean_y, mean_x)


class Tilted(NamedTuple):
    """A companion's composition (:func:`compose_arrays` with ``tilted``): the pair and its
    composed tilted laws (:func:`tilted_laws`) on the same grid, with their rates."""

    pair: Pair
    tilted: Pair  #: X e^(t0 x) and Y e^(-t1 x) composed (the small sides' tails)
    tilted_big: Pair  #: X e^(-t3 x) and Y e^(t2 x) composed (the big sides' far tails)
    theta: Any  #: (rows, 4): the rates t0..t3
    alias: Any  #: ((rows, 2, m), (rows, 2)): log-MGFs and 1e-10 points bounding tilted_big's wrap
    lo: Any  #: (rows,) each row's window [lo, hi] (grid indices) and FFT length
    hi: Any
    length: Any


def compose_arrays(factors, counts, grid_step, exact_ratio=False, tilted=False, closed=True) -> Pair | Tilted:
    """Compose pairs of rows (each a :class:`Pair`, (rows, n_k)) with integer counts (rows,)
    on one grid step.

    ``exact_ratio``: every factor has Pr[X = x] = e^-x Pr[Y = x] on its finite points
    (see :func:`use_exact_ratio`). ``tilted`` (optimistic companions): also compose the
    tilted laws (:func:`tilted_laws`, rates from :func:`tilt_rates`) in the same FFTs, and
    return a :class:`Tilted`; with ``closed`` False its pair is the FFT's values as they
    are (a dominating pair's far tails tightened, :mod:`dpax._engine.tail_bounds`).

    Host side: one kernel finds each row's Chernoff window; each row gets its own padded FFT
    length (so compiled kernels are reused) and placement, and the rows sharing both are
    convolved by one kernel call, so that a row's answer is the one it has alone. Rows are
    taken in chunks that fit the memory budget (:mod:`dpax._engine.grid`), which is checked
    before every kernel; only an output larger than the budget is refused. The result
    holds every row on the longest length, zero beyond a row's own.
    """
    factors = tuple(Pair(*f) for f in factors)
    counts = tuple(np.broadcast_to(np.asarray(c, np.int64), factors[0].offset.shape) for c in counts)
    step = np.float64(grid_step)
    plan = _plan(factors, counts, step)
    theta, alias = tilt_rates(factors, counts, step, plan.length * step) if tilted else (None, None)
    laws = 6 if tilted else 2
    rows = plan.lo.shape[0]
    keys = sorted(set(zip(plan.length.tolist(), plan.aligned.tolist())), reverse=True)
    out_len = int(plan.length.max())
    sizes = [f.support_length for f in factors]
    detail = f"{rows} row(s) composed onto {out_len} grid points"
    if len(keys) == 1:  # every row the same: one call, or chunks of the batch
        per_row = laws * _grid.BYTES_PER_POINT * out_len + _FACTOR_BYTES * sum(sizes)
        if _grid.rows_per_chunk(rows, per_row, 0, "composition", detail) >= rows:
            out = _convolve(factors, counts, plan, np.arange(rows), step, exact_ratio, keys[0], theta, whole=True,
                            closed=closed)
            # tilted: out is the three composed pairs (pair, tilted, tilted_big)
            return out if theta is None else Tilted(*cast("tuple[Pair, Pair, Pair]", out), theta, alias, plan.lo,
                                                    plan.hi, plan.length)
    _grid.check_bytes(_batching.RowAssembly.size(rows, out_len) * (laws // 2), "composition", detail)
    outs = [_batching.RowAssembly(rows, out_len) for _ in range(laws // 2)]  # (before allocating them)
    for key in keys:
        members = np.flatnonzero((plan.length == key[0]) & (plan.aligned == key[1]))
        per_row = laws * _grid.BYTES_PER_POINT * key[0] + _FACTOR_BYTES * sum(sizes)
        chunk = _grid.rows_per_chunk(members.size, per_row, sum(o.nbytes for o in outs), "composition", detail)
        chunk = _batching.chunk_size(min(chunk, _batching.group_size(members.size)))
        for index, real in _batching.row_chunks(members.size, chunk):
            part = _convolve(factors, counts, plan, members[index], step, exact_ratio, key, theta, closed=closed)
            for out, p in zip(outs, (part,) if theta is None else part):
                out.put(members[index[:real]], p, real)
    if theta is None:
        return outs[0].pair()
    return Tilted(outs[0].pair(), outs[1].pair(), outs[2].pair(), theta, alias, plan.lo, plan.hi, plan.length)


def _convolve(factors, counts, plan: _Plan, index, step, exact_ratio, key, theta=None, whole=False, closed=True):
    """:func:`fft_compose_kernel` on the rows ``index`` (all of them, in order, if ``whole``)."""
    length, aligned = key
    if not whole:
        factors, counts = _take(factors, counts, index)
    window = Window(plan.lo[index], plan.hi[index], *(a[index] for a in plan[4:]))
    extra = () if theta is None else (theta if whole else jnp.asarray(theta)[jnp.asarray(index)],)
    # a companion's six laws: the exact bit length (no spare squarings, more compiled variants)
    bits = power_bits(counts) if theta is None else max(int(np.max(c)) for c in counts).bit_length()
    static = {} if closed else {"closed": False}  # (the closed kernels' keys as before)
    return fft_compose_kernel(factors, counts, window, step, *extra, length=int(length), exact_ratio=bool(exact_ratio),
                              bits=max(bits, 1), aligned=bool(aligned), **static)[0]
