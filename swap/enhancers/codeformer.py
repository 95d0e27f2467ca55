"""CodeFormer: GFPGAN's pre/post-processing plus a `weight` input (float64 [1]).

weight trades fidelity (1.0, closer to the input) against quality (0.0); default 0.5.
S-Lab licence: non-commercial only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from swap.config import RuntimeOptions
from swap.enhancers.gfpgan import GfpganEnhancer


class CodeformerEnhancer(GfpganEnhancer):
    def __init__(
        self,
        model_path: Path,
        runtime: RuntimeOptions | None = None,
        *,
        name: str = "codeformer",
        weight: float = 0.5,
        max_batch: int = 4,
        mask_blur: float = 0.3,
    ):
        super().__init__(model_path, runtime, name=name, max_batch=max_batch, mask_blur=mask_blur)
        self.weight = weight
        self.input_name = next(i.name for i in self.session.get_inputs() if i.name != "weight")

    def extra_inputs(self) -> dict[str, np.ndarray]:
        return {"weight": np.array([self.weight], dtype=np.float64)}
