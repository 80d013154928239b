"""A small NDSL-like framework, written only against GT4Py's API (no gtscript import): a model
built on it runs on gtscript by changing its backend string, as NDSL and PyFV3 do.

What it uses is what NDSL uses: ``gt4py.cartesian.gtscript.stencil(definition=, backend=,
externals=, dtypes=, rebuild=, name=, format_source=, build_info=)``, the stencil's
``field_info[...].axes`` and ``.access & AccessKind.WRITE``, per-field origins and
``.run(_origin_=, _domain_=, exec_info=None)`` (or ``__call__(origin=, domain=,
validate_args=True)``), storages from ``gt4py.storage.zeros(..., backend=)``,
``gt4py.cartesian.backend.from_name(backend).storage_info`` and
``gt4py.cartesian.config.cache_settings``.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from typing import Any, Callable

import numpy as np
from gt4py import storage as gt_storage
from gt4py.cartesian import backend as gt_backend, config as gt_config
from gt4py.cartesian import gtscript
from gt4py.cartesian.definitions import AccessKind

IJK = ("I", "J", "K")


@dataclasses.dataclass(frozen=True)
class StencilConfig:
    backend: str
    rebuild: bool = False
    format_source: bool = False
    validate_args: bool = True
    #: backend used to allocate storages (an emulated GPU backend runs on host arrays)
    storage_backend: str | None = None


@dataclasses.dataclass(frozen=True)
class GridIndexing:
    """A tile: ``nx`` x ``ny`` compute points with ``n_halo`` halo points on each side, ``nz``
    levels."""

    nx: int
    ny: int
    nz: int
    n_halo: int

    @property
    def isc(self) -> int:
        return self.n_halo

    @property
    def iec(self) -> int:
        return self.n_halo + self.nx - 1

    @property
    def jsc(self) -> int:
        return self.n_halo

    @property
    def jec(self) -> int:
        return self.n_halo + self.ny - 1

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.nx + 2 * self.n_halo, self.ny + 2 * self.n_halo, self.nz)

    @property
    def origin_compute(self) -> tuple[int, int, int]:
        return (self.n_halo, self.n_halo, 0)

    @property
    def domain_compute(self) -> tuple[int, int, int]:
        return (self.nx, self.ny, self.nz)

    def domain_with_halo(self, n: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        return (self.n_halo - n, self.n_halo - n, 0), (self.nx + 2 * n, self.ny + 2 * n, self.nz)

    def axis_offsets(self, origin, domain) -> dict[str, Any]:
        """NDSL's externals: the compute domain's first and last points relative to the call's
        domain (``I[0] + n``, ``I[-1] - n``), for ``horizontal(region[...])``."""
        return {
            "i_start": gtscript.I[0] + (self.isc - origin[0]),
            "i_end": gtscript.I[-1] + (self.iec - (origin[0] + domain[0] - 1)),
            "j_start": gtscript.J[0] + (self.jsc - origin[1]),
            "j_end": gtscript.J[-1] + (self.jec - (origin[1] + domain[1] - 1)),
        }


def compute_field_origins(field_info, origin) -> dict[str, tuple[int, ...]]:
    """NDSL's per-field origins: each field's origin on the axes it has."""
    origins: dict[str, tuple[int, ...]] = {"_all_": tuple(origin)}
    for name, info in field_info.items():
        if info is None:
            continue
        origins[name] = tuple(origin[IJK.index(ax)] for ax in info.axes)
    return origins


class FrozenStencil:
    """A stencil with its origin and domain fixed at build time (NDSL's ``FrozenStencil``)."""

    def __init__(self, func: Callable, origin, domain, config: StencilConfig,
                 externals: dict | None = None, dtypes: dict | None = None):
        self.origin = tuple(origin)
        self.domain = tuple(domain)
        self.config = config
        self.build_info: dict = {}
        start = time.perf_counter()
        self.stencil_object = gtscript.stencil(
            definition=func, backend=config.backend, externals=externals or {},
            dtypes=dtypes or {}, rebuild=config.rebuild,
            name=f"{func.__module__}.{func.__name__}", format_source=config.format_source,
            build_info=self.build_info)
        self.build_time = time.perf_counter() - start
        self._argument_names = tuple(inspect.getfullargspec(func).args)
        field_info = self.stencil_object.field_info
        self._field_origins = compute_field_origins(field_info, self.origin)
        self._written_fields = [name for name, info in field_info.items()
                                if info is not None and bool(info.access & AccessKind.WRITE)]
        self.calls = 0

    @property
    def written_fields(self) -> list[str]:
        return list(self._written_fields)

    def __call__(self, *args, **kwargs) -> None:
        args_as_kwargs = dict(zip(self._argument_names, args))
        args_as_kwargs.update(kwargs)
        if self.config.validate_args:
            self.stencil_object(**args_as_kwargs, origin=self._field_origins, domain=self.domain,
                                validate_args=True)
        else:
            self.stencil_object.run(**args_as_kwargs, _origin_=self._field_origins,
                                    _domain_=self.domain, exec_info=None)
        self.calls += 1


class StencilFactory:
    """Builds ``FrozenStencil`` objects for one backend and grid (NDSL's ``StencilFactory``)."""

    def __init__(self, config: StencilConfig, grid: GridIndexing, cache_root: str | None = None):
        self.config = config
        self.grid = grid
        if cache_root is not None:  # NDSL points GT4Py's cache at a per-rank directory
            gt_config.cache_settings["root_path"] = cache_root
            gt_config.cache_settings["dir_name"] = ".gt_cache_000000"
        self.stencils: list[FrozenStencil] = []

    def from_origin_domain(self, func, origin, domain, externals=None, dtypes=None) -> FrozenStencil:
        all_externals = self.grid.axis_offsets(origin, domain)
        all_externals.update(externals or {})
        stencil = FrozenStencil(func, origin, domain, self.config, all_externals, dtypes)
        self.stencils.append(stencil)
        return stencil

    def from_dims_halo(self, func, compute_dims=IJK, n_halo: int = 0, externals=None) -> FrozenStencil:
        origin, domain = self.grid.domain_with_halo(n_halo)
        if "K" not in compute_dims:
            domain = (domain[0], domain[1], 1)
        return self.from_origin_domain(func, origin, domain, externals)

    # ---- storages, as NDSL's Quantity allocates them

    @property
    def storage_backend(self) -> str:
        return self.config.storage_backend or self.config.backend

    def zeros(self, dims=IJK, dtype=np.float64, extra=()) -> np.ndarray:
        full = dict(zip(IJK, self.grid.shape))
        shape = tuple(full[d] for d in dims) + tuple(extra)
        aligned = tuple(self.grid.n_halo if d in ("I", "J") else 0 for d in dims) + (0,) * len(extra)
        dimensions = tuple(dims) + tuple(str(n) for n in extra)
        return gt_storage.zeros(shape, dtype, backend=self.storage_backend, aligned_index=aligned,
                                dimensions=dimensions)

    def from_array(self, data: np.ndarray, dims=IJK) -> np.ndarray:
        out = self.zeros(dims, data.dtype, data.shape[len(dims):])
        out[...] = data
        return out

    def storage_info(self) -> dict:
        return gt_backend.from_name(self.storage_backend).storage_info

    def is_optimal_layout(self, array, dims=IJK) -> bool:
        return bool(self.storage_info()["is_optimal_layout"](array, dims))
